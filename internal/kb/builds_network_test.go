package kb

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/pep440"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// readTarFiles reads the named files (paths below the sdist's top folder)
// from a .tar.gz, each at most 1 MiB.
func readTarFiles(t *testing.T, path string, names ...string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(h.Name, "/")
		if ok && slices.Contains(names, rest) {
			b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
			if err != nil {
				t.Fatal(err)
			}
			out[rest] = string(b)
		}
	}
	return out
}

var (
	ifLine     = regexp.MustCompile(`^(\s*)(?:if|elif) (.*):\s*$`)
	elseLine   = regexp.MustCompile(`^(\s*)else:\s*$`)
	gencodeSM  = regexp.MustCompile(`arch=compute_\d+a?,code=sm_(\d+)a?`)
	versionCmp = regexp.MustCompile(`bare_metal_version\s*(>=|<=|<|>)\s*Version\("([\d.]+)"\)`)
	archIn     = regexp.MustCompile(`"(\d+)" in cuda_archs\(\)`)
)

// gencodeTargets evaluates a setup.py's literal -gencode pairs for an nvcc
// version: the if-blocks around each pair (bare_metal_version comparisons,
// flash-attn's `"NN" in cuda_archs()` with its default list) decide; other
// conditions (CUDA_HOME is not None, the non-HIP branch) count as true.
func gencodeTargets(src, nvcc string, archs []string) []int {
	type cond struct {
		indent int
		ok     bool
	}
	var stack []cond
	seen := map[int]bool{}
	for _, line := range strings.Split(src, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		for len(stack) > 0 && indent <= stack[len(stack)-1].indent {
			stack = stack[:len(stack)-1]
		}
		if m := ifLine.FindStringSubmatch(line); m != nil {
			ok := true
			for _, v := range versionCmp.FindAllStringSubmatch(m[2], -1) {
				c := CompareDotted(nvcc, v[2])
				switch v[1] {
				case ">=":
					ok = ok && c >= 0
				case "<=":
					ok = ok && c <= 0
				case "<":
					ok = ok && c < 0
				case ">":
					ok = ok && c > 0
				}
			}
			for _, a := range archIn.FindAllStringSubmatch(m[2], -1) {
				ok = ok && slices.Contains(archs, a[1])
			}
			if strings.Contains(m[2], "HIP_BUILD") && !strings.Contains(m[2], "not") {
				ok = false
			}
			stack = append(stack, cond{len(m[1]), ok})
			continue
		}
		if m := elseLine.FindStringSubmatch(line); m != nil {
			stack = append(stack, cond{len(m[1]), true})
			continue
		}
		if m := gencodeSM.FindStringSubmatch(line); m != nil {
			active := true
			for _, c := range stack {
				active = active && c.ok
			}
			if active {
				sm, _ := strconv.Atoi(m[1])
				seen[sm] = true
			}
		}
	}
	var out []int
	for sm := range seen {
		out = append(out, sm)
	}
	sort.Ints(out)
	return out
}

// TestBuildProfilesNetwork checks data/builds.json against the packages'
// own sdists from PyPI (downloaded once into the test cache, by sha256):
// the targets each nvcc version builds, whether TORCH_CUDA_ARCH_LIST or the
// package's own variable decides them, nvcc --threads, the number of .cu
// sources, the force-build variable and the memory guidance.
func TestBuildProfilesNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads sdists from PyPI")
	}
	checked := 0
	for name, p := range Builds().Packages {
		if p.Sdist == "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			checkBuildProfile(t, p, testenv.Sdist(t, name, p.Sdist, p.SdistSHA256), t.Errorf)
			// The profile is the latest release's when it was read. A newer
			// release on PyPI is read too, against the same profile: fastpath's
			// commands pin the profiled release, so they stay right, but a
			// difference means the profile needs the new release's facts.
			// That is reported in the log, not as a failure, so that an
			// upstream release alone never turns this test red.
			if latest := latestRelease(testenv.PyPIVersions(t, name)); latest != p.Version && pep440.Less(p.Version, latest) {
				file, sha, ok := testenv.PyPISdist(t, name, latest)
				if !ok {
					t.Logf("DRIFT: PyPI's latest %s is %s (no sdist), the profile was read from %s", name, latest, p.Version)
				} else {
					var diffs []string
					checkBuildProfile(t, p, testenv.Sdist(t, name, file, sha), func(format string, args ...any) {
						diffs = append(diffs, fmt.Sprintf(format, args...))
					})
					if len(diffs) == 0 {
						t.Logf("PyPI's latest %s is %s; its build files agree with the profile read from %s", name, latest, p.Version)
					} else {
						t.Logf("DRIFT: PyPI's latest %s is %s, whose build files differ from the profile read from %s (update it, moving the old targets to older):\n%s", name, latest, p.Version, strings.Join(diffs, "\n"))
					}
				}
			}
			// Each older run: its own sdist (and every other sdist read for
			// it) against the profile ForVersion gives for that release.
			below := p.Version
			for _, o := range p.Older {
				if !pep440.Less(o.From, o.Below) || !pep440.Less(o.Version, o.Below) || pep440.Less(o.Version, o.From) || pep440.Less(below, o.Below) {
					t.Errorf("older %s: from %s, below %s, version %s out of order (newer run below %s)", o.Sdist, o.From, o.Below, o.Version, below)
				}
				below = o.From
				op, known := p.ForVersion(o.Version)
				if !known || op.Sdist != o.Sdist || fmt.Sprint(flatTargets(op.Targets)) == fmt.Sprint(flatTargets(p.Targets)) {
					t.Errorf("ForVersion(%s) = %s %v, known %v: want %s's own, different targets", o.Version, op.Sdist, op.Targets, known, o.Sdist)
				}
				checkBuildProfile(t, op, testenv.Sdist(t, name, o.Sdist, o.SdistSHA256), t.Errorf)
				for _, same := range o.Same {
					checkBuildProfile(t, op, testenv.Sdist(t, name, same.Sdist, same.SHA256), t.Errorf)
				}
			}
			checked++
		})
	}
	// flash-linear-attention: pure Python and Triton; its optional native
	// piece is causal-conv1d (extra conv1d), tilelang the other extra.
	dir := testenv.Wheels(t, "flash-linear-attention==0.6.0")
	whl, _ := filepath.Glob(filepath.Join(dir, "flash_linear_attention-0.6.0-*.whl"))
	if len(whl) == 1 {
		zr, err := zip.OpenReader(whl[0])
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if strings.HasSuffix(f.Name, ".dist-info/METADATA") {
				rc, _ := f.Open()
				b, _ := io.ReadAll(io.LimitReader(rc, 1<<20))
				rc.Close()
				for _, want := range []string{`causal-conv1d>=1.7.0; extra == "conv1d"`, `tilelang>=0.1.9; extra == "tilelang"`} {
					if !strings.Contains(string(b), want) {
						t.Errorf("flash-linear-attention 0.6.0 METADATA lacks %q", want)
					}
				}
			}
			if strings.HasSuffix(f.Name, ".so") {
				t.Errorf("flash-linear-attention ships compiled code: %s", f.Name)
			}
		}
	} else {
		t.Errorf("flash-linear-attention 0.6.0 wheel not found in %s", dir)
	}
	t.Logf("%d build profiles checked against their sdists", checked)
}

// latestRelease is the highest final or post release in versions (no
// pre- or dev releases: pip skips them unless asked).
func latestRelease(versions []string) string {
	pre := regexp.MustCompile(`\d(a|b|rc)\d+|\.dev\d+`) // in PEP 440's normal form
	best := ""
	for _, v := range versions {
		n := pep440.Normalize(v)
		if pre.MatchString(n) {
			continue
		}
		if best == "" || pep440.Less(best, n) {
			best = n
		}
	}
	return best
}

func flatTargets(ts []BuildTargets) [][]int {
	var out [][]int
	for _, t := range ts {
		out = append(out, t.SMs)
	}
	return out
}

// checkBuildProfile checks one profile against the sdist at path: the
// variables it names are read, nvcc --threads, the .cu sources, the memory
// guidance, whether TORCH_CUDA_ARCH_LIST or its own list decides, and the
// -gencode targets at each end of each nvcc range.
func checkBuildProfile(t *testing.T, p BuildProfile, path string, errorf func(format string, args ...any)) {
	t.Helper()
	files := []string{"setup.py"}
	if p.ArchFile != "" && p.ArchFile != "setup.py" {
		files = append(files, p.ArchFile)
	}
	got := readTarFiles(t, path, files...)
	setup, arch := got["setup.py"], got[p.ArchFile]
	if setup == "" {
		errorf("%s has no setup.py", filepath.Base(path))
		return
	}
	all := setup + arch
	base := filepath.Base(path)
	if p.ForceBuildEnv != "" && !strings.Contains(all, p.ForceBuildEnv) {
		errorf("%s: %s is not read by its build", base, p.ForceBuildEnv)
	}
	if p.ForceBuildValue != "" && !regexp.MustCompile(regexp.QuoteMeta(p.ForceBuildEnv)+`['"]\s*,\s*['"][^'"]*['"]\)\s*==\s*['"]`+regexp.QuoteMeta(p.ForceBuildValue)+`['"]`).MatchString(all) {
		errorf("%s: the build does not compare %s with %q", base, p.ForceBuildEnv, p.ForceBuildValue)
	}
	for _, v := range p.Parallel {
		if v != "MAX_JOBS" && !strings.Contains(all, v) { // torch's BuildExtension reads MAX_JOBS
			errorf("%s: %s is not read by its build", base, v)
		}
	}
	if p.NoGPUNeeds != "" && !strings.Contains(setup, p.NoGPUNeeds) {
		errorf("%s: %s (needed without a GPU) is not read by setup.py", base, p.NoGPUNeeds)
	}
	if p.BuildSystem == "none" && regexp.MustCompile(`Extension\(|cpp_extension|cmake`).MatchString(setup) {
		errorf("%s: profile says nothing is compiled, setup.py builds an extension", base)
	}
	if p.NVCCThreadsEnv != "" && !strings.Contains(all, p.NVCCThreadsEnv) {
		errorf("%s: %s is not read by its build", base, p.NVCCThreadsEnv)
	}
	if p.NVCCThreads > 0 {
		m := regexp.MustCompile(`"--threads",\s*"(\d+)"|NVCC_THREADS"\) or "(\d+)"`).FindStringSubmatch(setup)
		if m == nil || m[1]+m[2] != strconv.Itoa(p.NVCCThreads) {
			errorf("%s: nvcc --threads: setup.py says %q, profile %d", base, m, p.NVCCThreads)
		}
	}
	if p.CUDASources > 0 {
		if n := len(regexp.MustCompile(`"csrc/[^"]*\.cu"`).FindAllString(setup, -1)); n != p.CUDASources {
			errorf("%s: setup.py lists %d .cu sources, profile %d", base, n, p.CUDASources)
		}
	}
	if p.GiBPerJob > 0 && !strings.Contains(setup, "/ "+strconv.Itoa(int(p.GiBPerJob))) {
		errorf("%s: setup.py does not size jobs at %.0f GB", base, p.GiBPerJob)
	}
	hasGencode := gencodeSM.MatchString(setup)
	switch {
	case !p.HonoursArchList && !hasGencode:
		errorf("%s: profile says the build ignores TORCH_CUDA_ARCH_LIST, but setup.py has no -gencode list", base)
	case p.HonoursArchList && p.ArchEnv == "" && hasGencode:
		errorf("%s: profile says TORCH_CUDA_ARCH_LIST decides, but setup.py passes its own -gencode list", base)
	case p.HonoursArchList && p.ArchEnv == "" && strings.Contains(all, "arch=compute_") && !strings.Contains(all, "TORCH_CUDA_ARCH_LIST"):
		// Arch flags of its own (torch then ignores the list) unless its
		// build reads TORCH_CUDA_ARCH_LIST to leave them out.
		errorf("%s: its build passes arch flags and never reads TORCH_CUDA_ARCH_LIST", base)
	case p.ArchEnv != "" && !strings.Contains(setup, p.ArchEnv):
		errorf("%s: %s is not read by setup.py", base, p.ArchEnv)
	}
	var archs []string
	if m := regexp.MustCompile(`os\.getenv\("` + regexp.QuoteMeta(p.ArchEnv) + `", "([\d;]+)"\)`).FindStringSubmatch(setup); p.ArchEnv != "" && m != nil {
		archs = strings.Split(m[1], ";")
	}
	for _, tr := range p.Targets {
		for _, v := range []string{tr.NVCCFrom, tr.NVCCTo} {
			if v == "" {
				continue
			}
			if got := gencodeTargets(setup, v, archs); !slices.Equal(got, tr.SMs) {
				errorf("%s: nvcc %s: setup.py builds sm %v, profile %v", base, v, got, tr.SMs)
			}
		}
	}
}
