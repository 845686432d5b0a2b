package layering

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/fastpath-dev/fastpath/"

// layers is the picture of the pipeline, top (imported by everyone) to
// bottom (imports anything). A package may import packages of the layers
// above its own; within a layer it may import nothing, except in a layer
// whose pattern ends in "/..." (a group of sibling packages, such as the
// collectors, whose helpers they share). Packages that are not yet in every
// branch (remedy, hostile, safetext) are placed already, so a merge that
// brings them keeps this test green. Every package of the module must match
// exactly one entry: a new package is placed here on purpose.
var layers = [][]string{
	// The one comparator of dotted version numbers (pep440 falls back on it).
	{"internal/version"},
	// Leaves: plain types and helpers that import nothing of ours.
	// demo is the seed container as embedded data (internal/fixture
	// generates it; its tests, not the package, import the fixture).
	{"internal/finding", "internal/pep440", "internal/safetext", "internal/testenv", "internal/layering", "internal/demo"},
	// The rendering layer: palette, width, wrapping, counts, -v/-q; every
	// package that renders (plan, explain, live, fleet, report, cli)
	// imports it, so it sits just under the leaves.
	{"internal/render"},
	// The Facts types: what a facts file holds, observations only.
	{"internal/facts"},
	// The knowledge base: embedded data and typed accessors.
	{"internal/kb"},
	// Regular expressions compiled on first use (package-level ones would
	// cost every start; docs/speed.md).
	{"internal/lazyregexp"},
	// Where we look.
	{"internal/source"},
	// The Zstandard decoder of image layers (standard library only).
	{"internal/zstd"},
	// The registry client (standard library only) under the image source.
	{"internal/imagesource/registry"},
	{"internal/imagesource"},
	// Binary readers and target rules.
	{"internal/cudaarch", "internal/elfdyn"},
	{"internal/fatbin"},
	{"internal/inspect", "internal/fixture"},
	// One package per fact group, and the collector that runs them all.
	{"internal/collect/..."},
	{"internal/collect"},
	// Judging: model verdicts (over what collect/modelread read), then
	// remedies, then Facts + KB -> Findings; TestJudgesArePure keeps them
	// free of reads.
	// remedy sits ABOVE diagnose here (diagnose may import it), not below as
	// DESIGN's rows list it: diagnose attaches remedy's commands to its
	// findings (internal/diagnose/compiler.go on the remedy branch), and
	// remedy imports only facts, kb and cudaarch.
	{"internal/model"},
	{"internal/remedy"},
	{"internal/diagnose"},
	{"internal/plan"},
	{"internal/explain"},
	// The only code that runs the environment's Python.
	{"internal/live"},
	// Many machines.
	{"internal/remote"},
	{"internal/fleet"},
	// Rendering for every command.
	{"internal/report"},
	// Commands, and the hostile-input harness that drives everything.
	{"internal/cli", "internal/hostile"},
	// Programs: the binary, and the generators of its CLI reference, its
	// finding ids and its KB tables (gentables builds only with -tags
	// kbjson, so go list ./... does not list it).
	{"cmd/fastpath", "internal/cli/gendoc", "internal/finding/genids", "internal/kb/gentables"},
}

// A rule forbids imports that the layers allow but the design does not.
type rule struct {
	from   string   // importing packages: a path, or a group ending in "/..."
	to     string   // the imported package
	except []string // importing packages allowed all the same, each for its reason
	why    string
}

var rules = []rule{
	{
		from: "internal/collect/...", to: "internal/kb",
		// Each exception asks the KB what to read, never for a verdict:
		// collect/torch which CUDA libraries torch loads, collect/envvars
		// which environment variables matter (envvars.json), and
		// collect/modelread how a family's configuration names its layers
		// (families.json's layouts).
		except: []string{"internal/collect/torch", "internal/collect/envvars", "internal/collect/modelread"},
		why:    "collectors record observations; judging them against the KB is diagnose's (diagnose.Complete), or a saved facts file freezes an old KB",
	},
	{
		from: "...", to: "internal/fixture",
		// hostile is the hostile-input harness that only tests import.
		except: []string{"internal/hostile"},
		why:    "the test fixture is for tests; the binary's demo tree comes from internal/demo's embedded archive",
	},
}

// matches reports whether pkg is pattern, or in the group pattern names
// ("internal/collect/..." holds internal/collect/gpu; "..." holds all).
func matches(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return strings.HasPrefix(pkg, prefix+"/")
	}
	return pkg == pattern
}

// ruleViolations lists every import in graph that a rule forbids.
func ruleViolations(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		for _, r := range rules {
			if !matches(r.from, pkg) || slices.Contains(r.except, pkg) {
				continue
			}
			if slices.Contains(imports, r.to) {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s", pkg, r.to, r.why))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// level returns the layer of pkg (a path inside the module) and whether its
// layer is a group whose members may import one another.
func level(pkg string) (n int, group bool, ok bool) {
	for i, row := range layers {
		for _, pat := range row {
			if prefix, isGroup := strings.CutSuffix(pat, "/..."); isGroup {
				if strings.HasPrefix(pkg, prefix+"/") {
					return i, true, true
				}
			} else if pkg == pat {
				return i, false, true
			}
		}
	}
	return 0, false, false
}

// violations lists every import in graph (package -> its imports, both as
// paths inside the module) that the layers forbid, and every package the
// layers do not place.
func violations(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		from, group, ok := level(pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is in no layer: add it to layers in internal/layering/layering_test.go", pkg))
			continue
		}
		for _, imp := range imports {
			to, _, ok := level(imp)
			if !ok {
				continue // reported as a package of its own
			}
			switch {
			case to < from, to == from && group:
			case to == from:
				bad = append(bad, fmt.Sprintf("%s imports %s: both are in layer %d, whose packages must not import one another", pkg, imp, from))
			default:
				bad = append(bad, fmt.Sprintf("%s imports %s: an import upward (%s is in layer %d, which may import only layers 0 to %d; %s is in layer %d)", pkg, imp, pkg, from, from-1, imp, to))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// moduleGraph is the import graph of the module's packages (tests excluded),
// from `go list -deps`.
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], module) {
			continue // the standard library and other modules
		}
		pkg := strings.TrimPrefix(fields[0], module)
		graph[pkg] = []string{}
		for _, imp := range fields[1:] {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				graph[pkg] = append(graph[pkg], rest)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return graph
}

func TestLayers(t *testing.T) {
	graph := moduleGraph(t)
	// The listing must reach the layers it is meant to hold, or the test
	// would pass on an empty graph.
	for _, must := range []string{"cmd/fastpath", "internal/cli", "internal/facts", "internal/diagnose", "internal/collect/gpu"} {
		if _, ok := graph[must]; !ok {
			t.Fatalf("go list did not list %s (listed %d packages)", must, len(graph))
		}
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
	for _, v := range ruleViolations(graph) {
		t.Error(v)
	}
}

// judges are the packages that turn what was read into verdicts. They are
// pure: they read nothing themselves (DESIGN: "Facts + KB -> Findings
// (pure)", "pure over what source read"), so they import no reader and no
// package that reaches a file, a program or the network.
var judges = []string{"internal/model", "internal/remedy", "internal/diagnose"}

var judgesMayNotImport = []string{
	"os", "os/exec", "io/fs", "net", "net/http", "syscall",
	module + "internal/source", module + "internal/imagesource", module + "internal/collect",
}

func TestJudgesArePure(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	args := []string{"list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}
	for _, j := range judges {
		args = append(args, module+j)
	}
	out, err := exec.Command(goTool, args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(judges) {
		t.Fatalf("go list listed %d packages, want %d", len(lines), len(judges))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if slices.Contains(judgesMayNotImport, imp) {
				t.Errorf("%s imports %s: a judge reads nothing itself; the readers (source, collect/...) hand it what they read", strings.TrimPrefix(fields[0], module), strings.TrimPrefix(imp, module))
			}
		}
	}
}

// TestBinaryDeps: the shipped program links neither the test fixture nor
// the harness that drives it (go list -deps ./cmd/fastpath), nor the
// Kubernetes API types, nor the libraries whose package inits cost
// every start of fastpath most (issue 17): go-pep440-version (regular
// expressions compiled at init; internal/pep440 is ours), x/net/html (its
// entity map; internal/plan/anchors.go reads index pages), the YAML library
// behind sigs.k8s.io/yaml (internal/cli/manifestyaml.go writes the k8s
// manifest), and go-containerregistry with go-digest, image-spec,
// docker/cli and logrus (go-digest compiles regular expressions at init;
// internal/imagesource/registry is our registry client). k8s manifest
// needs only a few fields of three objects (internal/cli/k8s_types.go).
// Tests may still use all of them as oracles.
func TestBinaryDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", module+"cmd/fastpath").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/fastpath: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"internal/diagnose") {
		t.Fatalf("go list -deps ./cmd/fastpath did not list internal/diagnose: %q", deps)
	}
	for _, never := range []string{"internal/fixture", "internal/hostile", "internal/testenv"} {
		if slices.Contains(deps, module+never) {
			t.Errorf("cmd/fastpath links %s, which is for tests only", never)
		}
	}
	// The execution tracer is for -tags fastpath_trace builds only
	// (cmd/fastpath/trace_on.go).
	if slices.Contains(deps, "runtime/trace") {
		t.Error("cmd/fastpath links runtime/trace without -tags fastpath_trace")
	}
	for _, dep := range deps {
		for _, never := range []string{"k8s.io/api/", "k8s.io/apimachinery/"} {
			if strings.HasPrefix(dep, never) {
				t.Errorf("cmd/fastpath links %s: the Kubernetes API types slow every start; k8s manifest has its own (internal/cli/k8s_types.go)", dep)
			}
		}
		for _, never := range []struct{ prefix, ours string }{
			{"github.com/aquasecurity/go-pep440-version", "internal/pep440"},
			{"golang.org/x/net/html", "internal/plan/anchors.go"},
			{"sigs.k8s.io/yaml", "internal/cli/manifestyaml.go"},
			{"go.yaml.in/yaml", "internal/cli/manifestyaml.go"},
			{"github.com/google/go-containerregistry", "internal/imagesource/registry"},
			{"github.com/opencontainers/go-digest", "internal/imagesource/registry"},
			{"github.com/opencontainers/image-spec", "internal/imagesource/registry"},
			{"github.com/docker/", "internal/imagesource/registry"},
			{"github.com/sirupsen/logrus", "internal/imagesource/registry"},
			// klauspost's zstd links internal/snapref (CRC tables built
			// in a package init) and internal/cpuinfo (cpuid): 0.35 ms
			// at every start. Its gzip stays.
			{"github.com/klauspost/compress/zstd", "internal/zstd"},
			{"github.com/klauspost/compress/internal/snapref", "internal/zstd"},
			{"github.com/klauspost/compress/internal/cpuinfo", "internal/zstd"},
		} {
			if strings.HasPrefix(dep, never.prefix) {
				t.Errorf("cmd/fastpath links %s: its package init slows every start (issue 17); use %s", dep, never.ours)
			}
		}
	}
}

// TestViolationsFound checks the checker on imports it must refuse and
// imports it must allow.
func TestViolationsFound(t *testing.T) {
	for _, tc := range []struct {
		graph map[string][]string
		want  int
	}{
		{map[string][]string{"internal/facts": {"internal/source"}}, 1},                   // upward
		{map[string][]string{"internal/remote": {"internal/report"}}, 1},                  // upward
		{map[string][]string{"internal/cudaarch": {"internal/elfdyn"}}, 1},                // same layer
		{map[string][]string{"internal/nonesuch": nil}, 1},                                // unplaced
		{map[string][]string{"internal/report": {"internal/facts", "internal/model"}}, 0}, // downward
		{map[string][]string{"internal/collect/torch": {"internal/collect/toolchain/sitedist"}}, 0},
		{map[string][]string{"internal/collect": {"internal/collect/gpu"}}, 0},
		{map[string][]string{"internal/collect/gpu": {"internal/collect"}}, 1},
		{map[string][]string{"internal/diagnose": {"internal/remedy"}}, 0},
		{map[string][]string{"cmd/fastpath": {"internal/cli"}}, 0},
		// rules
		{map[string][]string{"internal/collect/gpu": {"internal/kb"}}, 1},
		{map[string][]string{"internal/collect/torch": {"internal/kb"}}, 0},
		{map[string][]string{"internal/diagnose": {"internal/kb"}}, 0},
		{map[string][]string{"internal/cli": {"internal/fixture"}}, 1},
		{map[string][]string{"internal/hostile": {"internal/fixture"}}, 0},
	} {
		if got := append(violations(tc.graph), ruleViolations(tc.graph)...); len(got) != tc.want {
			t.Errorf("violations(%v) = %q, want %d", tc.graph, got, tc.want)
		}
	}
}
