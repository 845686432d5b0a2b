package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/cli"
	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/report"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// The scaling benchmarks: `fastpath doctor --root` on the seed container
// grown to a number of distributions holding a number of native libraries, against a torch whose libtorch_cpu.so has
// 150,000 exported symbols behind a .gnu.hash (as real ones do). Half the
// libraries link torch and need 20 of its symbols each (one missing in
// every 64th), a quarter carry a fatbin, the rest are plain C extensions.
//
// Each case reports the in-process cost (ns/op, B/op) and, from 10 runs of
// the real command in a child process, the median wall time (median-ms)
// and the largest peak RSS (peak-RSS-MB), as a user would measure them.
//
//	go test ./cmd/fastpath -run '^$' -bench Scale -benchtime 10x
func BenchmarkScaleDists(b *testing.B) {
	for _, n := range []int{200, 1000, 5000} {
		b.Run(fmt.Sprintf("dists=%d", n), func(b *testing.B) { benchScale(b, n, 0) })
	}
}

func BenchmarkScaleExtensions(b *testing.B) {
	for _, e := range []int{100, 1000, 4096} {
		b.Run(fmt.Sprintf("exts=%d", e), func(b *testing.B) { benchScale(b, 200, e) })
	}
}

// BenchmarkScaleBig is the large case: 5,000 distributions and
// 4,096 extension libraries.
func BenchmarkScaleBig(b *testing.B) { benchScale(b, 5000, 4096) }

// BenchmarkSeed is doctor on the seed container tree itself.
func BenchmarkSeed(b *testing.B) {
	root := b.TempDir()
	if err := fixture.Seed(root); err != nil {
		b.Fatal(err)
	}
	runDoctor(b, root)
}

func benchScale(b *testing.B, dists, exts int) {
	root := b.TempDir()
	if err := scaleTree(root, dists, exts); err != nil {
		b.Fatal(err)
	}
	runDoctor(b, root)
}

func doctorArgs(root string) []string {
	args := []string{"doctor", "--root", root, "--gpu", "9.0", "--json"}
	for _, e := range fixture.SeedEnv {
		args = append(args, "--env", e)
	}
	return args
}

func runDoctor(b *testing.B, root string) {
	args := doctorArgs(root)
	if code := cli.Main(args, nil, io.Discard, io.Discard); code > 1 {
		b.Fatalf("doctor exited %d", code)
	}
	b.ReportAllocs()
	for b.Loop() {
		cli.Main(args, nil, io.Discard, io.Discard)
	}
	b.StopTimer()
	// The real command, as a child: this test binary runs as fastpath when
	// its argv[0] says so (TestMain).
	var walls []time.Duration
	var peak int64
	for range 10 {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Args[0] = peakCommand
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t0 := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(t0))
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
			b.Fatalf("child: %v: %s", err, stderr.String())
		}
		var kb int64
		if _, err := fmt.Sscanf(stderr.String()[strings.LastIndex(stderr.String(), "VmHWM:"):], "VmHWM: %d kB", &kb); err != nil {
			b.Fatalf("no peak RSS from the child: %q", stderr.String())
		}
		peak = max(peak, kb)
	}
	slices.Sort(walls)
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
}

// peakCommand is the name under which this test binary runs doctor and
// then reports its own peak RSS (VmHWM) on stderr. The rusage of a child
// cannot say it: Go starts children with vfork, and the kernel carries the
// parent's high-water mark across exec into ru_maxrss.
const peakCommand = "fastpath-peak"

func init() {
	if filepath.Base(os.Args[0]) != peakCommand {
		return
	}
	code := cli.Main(os.Args[1:], os.Stdin, io.Discard, io.Discard)
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			fmt.Fprintln(os.Stderr, strings.Join(strings.Fields(line), " "))
		}
	}
	os.Exit(int(code))
}

// TestWriteScaleTree writes a scale tree for scripts/bench.sh and for
// profiling: FASTPATH_SCALE_TREE=DIR FASTPATH_SCALE=DISTS,EXTS.
func TestWriteScaleTree(t *testing.T) {
	dir := os.Getenv("FASTPATH_SCALE_TREE")
	if dir == "" {
		t.Skip("set FASTPATH_SCALE_TREE=DIR (and FASTPATH_SCALE=DISTS,EXTS) to write a scale tree")
	}
	dists, exts := 5000, 4096
	if s := os.Getenv("FASTPATH_SCALE"); s != "" {
		if _, err := fmt.Sscanf(s, "%d,%d", &dists, &exts); err != nil {
			t.Fatal(err)
		}
	}
	if err := scaleTree(dir, dists, exts); err != nil {
		t.Fatal(err)
	}
	fmt.Println(strings.Join(doctorArgs(dir), " "))
}

// scaleTree writes the seed container into root and grows its venv to
// dists distributions holding exts native libraries.
func scaleTree(root string, dists, exts int) error {
	if err := fixture.Seed(root); err != nil {
		return err
	}
	t := fixture.New(root)
	sp := path.Join(fixture.SeedVenv, "lib", "python3.12", "site-packages")
	existing, err := filepath.Glob(filepath.Join(root, sp, "*.dist-info"))
	if err != nil {
		return err
	}
	// torch's own libraries, as big as the real ones' symbol tables.
	lib := path.Join(sp, "torch", "lib")
	defined := make([]string, 150_000)
	for i := range defined {
		defined[i] = fmt.Sprintf("_ZN2at6native%dop_kernel_implERKNS_6TensorES3_N3c108ArrayRefIlEE", i)
	}
	c10 := []string{fixture.C10SymbolCXX11ABI, "_ZN3c1019UndefinedTensorImpl10_singletonE"}
	t.File(path.Join(lib, "libc10.so"), string(fixture.GNUHashed(fixture.SharedObject{SOName: "libc10.so", Defined: c10}, 2)))
	t.File(path.Join(lib, "libtorch_cpu.so"), string(fixture.GNUHashed(fixture.SharedObject{SOName: "libtorch_cpu.so", Needed: []string{"libc10.so"}, Defined: slices.Clone(defined)}, 32768)))
	grow := dists - len(existing)
	if grow < 1 {
		grow = 1
	}
	for i := range grow {
		d := fixture.Dist{Name: fmt.Sprintf("scale-pkg-%05d", i), Version: fmt.Sprintf("1.%d.0", i%17),
			Requires: []string{"numpy>=1.26", "packaging"}, Files: []string{fmt.Sprintf("scale_pkg_%05d/__init__.py", i)}}
		sos := map[string][]byte{}
		// Spread the libraries evenly over the distributions.
		for k := i * exts / grow; k < (i+1)*exts/grow; k++ {
			sos[fmt.Sprintf("scale_pkg_%05d/_ext%d.cpython-312-x86_64-linux-gnu.so", i, k)] = extension(k, defined)
		}
		if len(sos) > 0 {
			d.Tag = "cp312-cp312-linux_x86_64"
		}
		t.ExtensionDist(sp, d, sos)
	}
	return t.Err()
}

// extension is the k-th native library: by k%4, two kinds linking torch,
// one with a fatbin, one plain.
func extension(k int, defined []string) []byte {
	so := fixture.SharedObject{Needed: []string{"libc.so.6"}, Defined: []string{"PyInit__ext"}}
	switch k % 4 {
	case 0, 1:
		so.Needed = []string{"libc10.so", "libtorch_cpu.so", "libc.so.6"}
		for j := range 20 {
			so.Undefined = append(so.Undefined, defined[(k*7919+j*104729)%len(defined)])
		}
		if k%64 == 0 {
			so.Undefined = append(so.Undefined, "_ZNK2at6Tensor5printEv")
		}
		sort.Strings(so.Undefined)
	case 2:
		so.Needed = []string{"libcudart.so.12", "libc.so.6"}
		so.Sections = []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80", "sm_90"}, []string{"compute_90"})}}
	}
	return so.Bytes()
}

// TestDoctorOnScaleTree runs doctor once on an existing scale tree
// (FASTPATH_DOCTOR_TREE=DIR), for -cpuprofile and -memprofile.
func TestDoctorOnScaleTree(t *testing.T) {
	dir := os.Getenv("FASTPATH_DOCTOR_TREE")
	if dir == "" {
		t.Skip("set FASTPATH_DOCTOR_TREE=DIR to profile doctor on a tree written by TestWriteScaleTree")
	}
	for range 3 {
		cli.Main(doctorArgs(dir), nil, io.Discard, io.Discard)
	}
}

// TestFastPathsKeepFacts is the oracle for the --root fast paths (kept
// folder handles, answers from the Resolver's cached folders, one lstat of
// a final component): the facts collected through source.Root must equal,
// byte for byte, those collected through source.RootPlain, which walks
// every path from the top as before. On the seed tree, and on a scale tree
// big enough to cycle the kept handles many times over and to overflow the
// run's content cache (1,000 distributions, 5,000 files, 500 libraries).
func TestFastPathsKeepFacts(t *testing.T) {
	seed := t.TempDir()
	if err := fixture.Seed(seed); err != nil {
		t.Fatal(err)
	}
	trees := map[string]string{"seed": seed}
	if !testing.Short() {
		big := t.TempDir()
		if err := scaleTree(big, 1000, 500); err != nil {
			t.Fatal(err)
		}
		trees["scale 1000/500"] = big
	}
	env, err := source.ParseEnv(fixture.SeedEnv)
	if err != nil {
		t.Fatal(err)
	}
	collectJSON := func(open func(string, source.Env) (source.Source, error), root string) []byte {
		src, err := open(root, env)
		if err != nil {
			t.Fatal(err)
		}
		f := collect.Collect(context.Background(), src, collect.Options{GPUs: []string{"9.0"}})
		b, err := json.MarshalIndent(f, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, root := range trees {
		fast, plain := collectJSON(source.Root, root), collectJSON(source.RootPlain, root)
		if !bytes.Equal(fast, plain) {
			t.Errorf("%s: facts through the fast paths differ from the plain reads:\n%s", name, firstDiff(fast, plain))
		}
		if !bytes.Contains(fast, []byte(`"distributions"`)) {
			t.Errorf("%s: no distributions in the facts", name)
		}
	}
}

// firstDiff shows where two outputs part, with some lines around.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			lo, hi := max(0, i-3), min(len(la), len(lb), i+4)
			return fmt.Sprintf("line %d\nfast:  %s\nplain: %s", i+1, strings.Join(la[lo:hi], "\n       "), strings.Join(lb[lo:hi], "\n       "))
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
}

// BenchmarkDoctorOnTree is doctor (in process, --json) on an existing tree
// (FASTPATH_DOCTOR_TREE=DIR, written by TestWriteScaleTree or `fastpath demo
// --write-tree`), without rebuilding it: allocs/op and B/op of the whole
// run, load-independent, for comparing two builds on the same tree.
//
//	FASTPATH_DOCTOR_TREE=/tmp/scale go test ./cmd/fastpath -run '^$' -bench DoctorOnTree -benchmem -count 5
func BenchmarkDoctorOnTree(b *testing.B) {
	dir := os.Getenv("FASTPATH_DOCTOR_TREE")
	if dir == "" {
		b.Skip("set FASTPATH_DOCTOR_TREE=DIR to run doctor on a tree written by TestWriteScaleTree")
	}
	args := doctorArgs(dir)
	b.ReportAllocs()
	for b.Loop() {
		if code := cli.Main(args, nil, io.Discard, io.Discard); code > 1 {
			b.Fatalf("doctor exited %d", code)
		}
	}
}

// BenchmarkRenderOnTree is what doctor --json does after collection, alone:
// diagnose and the JSON report, on facts collected once from
// FASTPATH_DOCTOR_TREE=DIR.
//
//	FASTPATH_DOCTOR_TREE=/tmp/scale go test ./cmd/fastpath -run '^$' -bench RenderOnTree -benchmem -count 5
func BenchmarkRenderOnTree(b *testing.B) {
	dir := os.Getenv("FASTPATH_DOCTOR_TREE")
	if dir == "" {
		b.Skip("set FASTPATH_DOCTOR_TREE=DIR to render doctor's report of a tree written by TestWriteScaleTree")
	}
	env, err := source.ParseEnv(fixture.SeedEnv)
	if err != nil {
		b.Fatal(err)
	}
	src, err := source.Root(dir, env)
	if err != nil {
		b.Fatal(err)
	}
	f := collect.Collect(context.Background(), src, collect.Options{GPUs: []string{"9.0"}})
	b.ReportAllocs()
	for b.Loop() {
		findings := diagnose.RunWithModels(f, nil)
		if err := report.JSON(io.Discard, report.Doctor{Schema: facts.Schema, Facts: f, Findings: findings, Models: []*model.Report{}}); err != nil {
			b.Fatal(err)
		}
	}
}
