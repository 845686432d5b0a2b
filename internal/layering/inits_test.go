package layering

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Package-init budgets of the shipped binary, from GODEBUG=inittrace=1
// (issue 17: every start of fastpath pays every package's init, whatever
// the command). The runtime's per-package byte and allocation counts do
// not depend on the machine's load, so a budget is a test, not a timing
// assert. Measured at 50b44ab: fastpath's own packages 11.4 KB in 111
// allocations, all packages 531 KB in 2,979 (c149d65: 131 KB / 1,163 and
// 922 KB / 6,627). A package-level regexp.MustCompile, map built from the
// KB or a JSON decode in an init blows the first budget; a heavy new
// dependency (the Kubernetes API types were 270 KB) the second.
const (
	ownInitAllocs = 250
	ownInitBytes  = 32 << 10
	allInitAllocs = 4000
	allInitBytes  = 700 << 10
)

// TestInitBudget builds cmd/fastpath, runs --version with
// GODEBUG=inittrace=1 and sums the allocations of the package inits.
func TestInitBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	bin := filepath.Join(t.TempDir(), "fastpath")
	build := exec.Command(goTool, "build", "-o", bin, module+"cmd/fastpath")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fastpath --version: %v\n%s", err, stderr.String())
	}
	inits, err := parseInitTrace(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(inits) < 50 {
		t.Fatalf("only %d package inits in the trace:\n%s", len(inits), stderr.String())
	}
	var own, all initCost
	var ownList []initCost
	for _, c := range inits {
		all.bytes += c.bytes
		all.allocs += c.allocs
		if strings.HasPrefix(c.pkg, module) {
			own.bytes += c.bytes
			own.allocs += c.allocs
			ownList = append(ownList, c)
		}
	}
	t.Logf("package inits: fastpath's own %d bytes in %d allocations; all %d bytes in %d", own.bytes, own.allocs, all.bytes, all.allocs)
	if own.allocs > ownInitAllocs || own.bytes > ownInitBytes {
		t.Errorf("fastpath's own package inits allocate %d bytes in %d allocations (budget %d in %d): make them lazy (internal/lazyregexp, sync.OnceValue); the heaviest:\n%s",
			own.bytes, own.allocs, ownInitBytes, ownInitAllocs, heaviest(ownList))
	}
	if all.allocs > allInitAllocs || all.bytes > allInitBytes {
		t.Errorf("the package inits of the binary allocate %d bytes in %d allocations (budget %d in %d): a new dependency's init costs every start; the heaviest:\n%s",
			all.bytes, all.allocs, allInitBytes, allInitAllocs, heaviest(inits))
	}
}

type initCost struct {
	pkg           string
	bytes, allocs int
}

// parseInitTrace reads the runtime's lines
// "init PKG @0.5 ms, 0.1 ms clock, 1234 bytes, 5 allocs".
func parseInitTrace(trace string) ([]initCost, error) {
	var out []initCost
	for _, line := range strings.Split(trace, "\n") {
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("inittrace line %q: %v %v", line, err1, err2)
		}
		out = append(out, initCost{pkg: f[1], bytes: b, allocs: a})
	}
	return out, nil
}

func heaviest(cs []initCost) string {
	cs = append([]initCost(nil), cs...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].bytes > cs[j].bytes })
	var b strings.Builder
	for i, c := range cs {
		if i == 8 {
			break
		}
		fmt.Fprintf(&b, "  %s: %d bytes, %d allocs\n", c.pkg, c.bytes, c.allocs)
	}
	return b.String()
}

// TestParseInitTrace checks the parser on the runtime's format.
func TestParseInitTrace(t *testing.T) {
	got, err := parseInitTrace("init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs\nfastpath version x\ninit github.com/x/y @7.4 ms, 0.26 ms clock, 22064 bytes, 245 allocs\n")
	if err != nil || len(got) != 2 || got[1] != (initCost{"github.com/x/y", 22064, 245}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}
