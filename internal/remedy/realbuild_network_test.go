package remedy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// torchVenv is the venv with torch 2.11.0 (PyPI's build is cu130),
// setuptools and ninja, in $FASTPATH_TEST_CACHE (made once: about 3 GB),
// and the Context of an H200 machine whose Python it is: a uv venv without
// pip and without nvcc.
func torchVenv(t *testing.T) (Context, []string) {
	t.Helper()
	uv, err := exec.LookPath("uv")
	if err != nil {
		t.Skip("uv is not on PATH")
	}
	py := testenv.Python3(t)
	cache := testenv.CacheDir(t)
	env := append(os.Environ(), "UV_CACHE_DIR="+filepath.Join(cache, "uv"))
	venv := filepath.Join(cache, "venvs", "torch-2.11.0-cu130")
	vpy := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(vpy); err != nil {
		run(t, env, uv, "venv", "-q", "-p", py, venv)
		run(t, env, uv, "pip", "install", "-q", "--python", vpy, "torch==2.11.0", "setuptools", "ninja")
	}
	site := strings.TrimSpace(run(t, env, vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
	c := h200()
	c.Python, c.PythonKind, c.HasPip, c.SitePackages = Of(vpy, FromMachine), Of("uv", FromMachine), false, Of(site, FromMachine)
	return c, env
}

// TestSeedBuildCompilesNetwork runs fastpath's own commands for the seed
// case (causal-conv1d on an H200, a torch venv with no nvcc: setup.py
// stops at "NameError: name 'bare_metal_version' is not defined") on this
// machine, which has no GPU: the pip compiler route (NVIDIA's CUDA 13.0
// wheels, CUDA_HOME, the links), then the build narrowed to sm_90 from
// causal-conv1d's own sdist (pip download, tar, the narrowing, pip wheel
// with MAX_JOBS and CAUSAL_CONV1D_FORCE_BUILD). It passes once ninja has
// finished the first object compiled from a .cu file, whose command line
// asks nvcc for sm_90 and nothing else; the rest of the build is stopped
// there (a whole build takes hours on a few cores).
func TestSeedBuildCompilesNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads torch, the CUDA 13 compiler wheels and causal-conv1d's sdist; compiles")
	}
	buildUntilFirstCUDAObject(t, "causal-conv1d")
}

// TestMambaBuildCompilesNetwork is the same for mamba-ssm (its own
// -gencode list of 9 targets with nvcc 13.0, MAMBA_FORCE_BUILD), narrowed
// to sm_90.
func TestMambaBuildCompilesNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads torch, the CUDA 13 compiler wheels and mamba-ssm's sdist; compiles")
	}
	buildUntilFirstCUDAObject(t, "mamba-ssm")
}

// buildUntilFirstCUDAObject runs fastpath's pip compiler route and pkg's
// narrowed build in the torch venv, until ninja has built one object from
// a .cu file; its nvcc flags must name sm_90 and nothing else.
func buildUntilFirstCUDAObject(t *testing.T, pkg string) {
	c, env := torchVenv(t)
	c.CPUs = Of(runtime.NumCPU(), FromMachine) // the jobs this machine can run
	var route Remedy
	for _, r := range CompilerRoutes(c) {
		if r.ID == "compiler/pip" {
			route = r
		}
	}
	if !route.Viable() || len(route.Commands) == 0 {
		t.Fatalf("no pip route for cu130: %+v", route)
	}
	rs := BuildFromSource(c, pkg, pkg, route.CUDA)
	if len(rs) != 2 || rs[0].ID != "build-narrowed/"+pkg {
		t.Fatalf("want the narrowed build first: %+v", rs)
	}
	p := kb.Builds().Packages[pkg]
	tmp := t.TempDir() // mktemp -d makes $FASTPATH_SDIST_DIR in here
	script := strings.Join(append(append([]string{}, route.Commands...), rs[0].Commands...), " && ")
	t.Logf("fastpath's commands:\n%s", strings.Join(append(append([]string{}, route.Commands...), rs[0].Commands...), "\n"))
	logf := filepath.Join(tmp, "build.log")
	out, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(env, "TMPDIR="+tmp, "PIP_CACHE_DIR="+filepath.Join(testenv.CacheDir(t), "pip"))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }
	limit := time.After(20 * time.Minute) // a hung build, not a speed check
	unpacked := strings.TrimSuffix(p.Sdist, ".tar.gz")
	for {
		select {
		case err := <-done:
			b, _ := os.ReadFile(logf)
			if err != nil {
				t.Fatalf("fastpath's commands failed before a .cu compiled: %v\n%s", err, tail(string(b)))
			}
			t.Logf("the whole build finished:\n%s", tail(string(b)))
			return
		case <-limit:
			stop()
			b, _ := os.ReadFile(logf)
			t.Fatalf("no .cu object after 20 minutes:\n%s", tail(string(b)))
		case <-time.After(3 * time.Second):
		}
		ninja, _ := filepath.Glob(filepath.Join(tmp, "*", unpacked, "build", "temp*", "build.ninja"))
		if len(ninja) != 1 {
			continue
		}
		cu, flags := cudaObjects(t, ninja[0])
		obj := finished(filepath.Join(filepath.Dir(ninja[0]), ".ninja_log"), cu)
		if obj == "" {
			continue
		}
		stop()
		b, _ := os.ReadFile(logf)
		if strings.Contains(string(b), "bare_metal_version") {
			t.Errorf("the seed's error is still there:\n%s", tail(string(b)))
		}
		sms := regexp.MustCompile(`code=sm_(\d+)`).FindAllStringSubmatch(flags, -1)
		if len(sms) != 1 || sms[0][1] != "90" {
			t.Errorf("nvcc was asked for %v, want sm_90 only: %s", sms, flags)
		}
		t.Logf("%s compiled (of %d .cu objects) with %s", filepath.Base(obj), len(cu), regexp.MustCompile(`-gencode\S*\s*\S+`).FindAllString(flags, -1))
		return
	}
}

// cudaObjects are the objects build.ninja compiles from .cu files, and
// its cuda_cflags line.
func cudaObjects(t *testing.T, ninja string) (objs []string, flags string) {
	f, err := os.Open(ninja)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		l := s.Text()
		if strings.HasPrefix(l, "cuda_cflags = ") || strings.HasPrefix(l, "cuda_post_cflags = ") {
			flags += l + " "
		}
		if strings.HasPrefix(l, "build ") && strings.Contains(l, ": cuda_compile ") {
			o, _, _ := strings.Cut(strings.TrimPrefix(l, "build "), ": ")
			objs = append(objs, strings.ReplaceAll(o, "$:", ":"))
		}
	}
	return objs, flags
}

// finished is the first of objs that ninja's log records as built.
func finished(log string, objs []string) string {
	b, err := os.ReadFile(log)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "\t")
		for _, o := range objs {
			if len(f) >= 4 && f[3] == o {
				return o
			}
		}
	}
	return ""
}

func tail(s string) string {
	if len(s) > 6000 {
		return "…" + s[len(s)-6000:]
	}
	return s
}
