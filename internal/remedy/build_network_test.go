package remedy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// TestNarrowedBuildNetwork runs the narrowed build's own unpack and narrow
// commands, as fix --apply would, on causal-conv1d's real sdist from PyPI:
// for an H200 with nvcc 13.0 the setup.py left behind compiles sm_90 only,
// still parses, and the untouched pairs are exactly the stock list's.
func TestNarrowedBuildNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads from PyPI")
	}
	py := testenv.Python3(t)
	p := kb.Builds().Packages["causal-conv1d"]
	sdist := testenv.Sdist(t, "causal-conv1d", p.Sdist, p.SdistSHA256)
	c := h200()
	c.Python = Of(py, FromMachine)
	rs := BuildFromSource(c, "causal-conv1d", "causal-conv1d", "13.0")
	if len(rs) != 2 || rs[0].ID != "build-narrowed/causal-conv1d" {
		t.Fatalf("want the narrowed build first: %+v", rs)
	}
	cmds := rs[0].Commands
	dir := t.TempDir()
	if err := os.Symlink(sdist, filepath.Join(dir, p.Sdist)); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), SdistDir+"="+dir)
	// Before the tar come the mktemp export, the install of what setup.py
	// imports and the pip download (the file is already there); the tar and
	// the narrowing are run here.
	at := slices.IndexFunc(cmds, func(c string) bool { return strings.HasPrefix(c, "tar ") })
	if at < 0 || at+1 >= len(cmds) {
		t.Fatalf("no tar command followed by the narrowing: %q", cmds)
	}
	for _, cmd := range cmds[at : at+2] {
		sh := exec.Command("/bin/sh", "-c", cmd)
		sh.Env = env
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
		t.Logf("%s", out)
	}
	setup := filepath.Join(dir, strings.TrimSuffix(p.Sdist, ".tar.gz"), "setup.py")
	b, err := os.ReadFile(setup)
	if err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(`code=sm_(\d+)`).FindAllStringSubmatch(string(b), -1)
	if len(got) != 1 || got[0][1] != "90" {
		t.Fatalf("narrowed setup.py still builds %v", got)
	}
	if out, err := exec.Command(py, "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())", setup).CombinedOutput(); err != nil {
		t.Fatalf("narrowed setup.py does not parse: %v\n%s", err, out)
	}
	// Narrowing again for a GPU it has no pair for refuses and leaves the
	// file alone.
	again := strings.Replace(cmds[at+1], " 90", " 89", 1)
	cmd := exec.Command("/bin/sh", "-c", again)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "not narrowed") {
		t.Fatalf("narrowing to a missing sm must fail: %v %s", err, out)
	}
	if b2, _ := os.ReadFile(setup); string(b2) != string(b) {
		t.Fatal("a refused narrowing changed setup.py")
	}
}

// h200 is the H200 machine of the seed's end-to-end run, as the machine says.
func h200() Context {
	m := FromMachine
	return Context{TorchVersion: Of("2.11.0+cu130", m), TorchCUDA: Of("13.0", m), GPUs: []Fact[string]{Of("9.0", m)},
		GPUName: Of("NVIDIA H200", m), GCC: Of("13.3.0", m), HostCXX: Of("/usr/bin/g++", m), Platform: Of(Linux, m),
		Distro: Of("ubuntu 24.04", m), Arch: Of("x86_64", m), MemTotal: Of(int64(128)<<30, m), CPUs: Of(16, m),
		Python: Of("/opt/torch/.venv/bin/python3", m), PythonKind: Of("venv", m), HasPip: true,
		SitePackages: Of("/opt/torch/.venv/lib/python3.12/site-packages", m)}
}
