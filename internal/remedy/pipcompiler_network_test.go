package remedy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPipCompilerBuildsTorchExtensionNetwork proves the CUDA 13 pip-compiler
// route by using it: a venv with torch 2.11.0 (PyPI's build is cu130) gets
// exactly the commands CompilerRoutes gives (NVIDIA's nvcc, runtime, crt,
// nvvm and cccl 13.0 wheels, CUDA_HOME, the lib64 and libcudart.so links),
// then torch.utils.cpp_extension compiles and links a real CUDA extension
// (testdata/axpy). No GPU is needed. Without nvidia-cuda-cccl the compile
// stops at "nv/target: No such file or directory", without the links the
// link at "cannot find -lcudart" (both seen on this route before the fix).
// The venv and uv's cache live in $FASTPATH_TEST_CACHE: the first run
// downloads about 3 GB (torch and its NVIDIA wheels), later runs none.
func TestPipCompilerBuildsTorchExtensionNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads torch and the CUDA 13 compiler wheels")
	}
	start := time.Now()
	c, env := torchVenv(t)
	var pip Remedy
	for _, r := range CompilerRoutes(c) {
		if r.ID == "compiler/pip" {
			pip = r
		}
	}
	if !pip.Viable() || len(pip.Commands) == 0 {
		t.Fatalf("no pip route for cu130: %+v", pip)
	}
	for _, want := range []string{"nvidia-cuda-cccl==13.0.*", "libcudart.so"} {
		if !strings.Contains(strings.Join(pip.Commands, "\n"), want) {
			t.Fatalf("the route lacks %s: %v", want, pip.Commands)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"axpy.cu", "setup.py"} {
		b, err := os.ReadFile(filepath.Join("testdata", "axpy", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := strings.Join(pip.Commands, " && ") + " && cd " + Quote(dir) + " && " + Command(c.Python.Value, "setup.py", "build_ext", "--inplace")
	out := run(t, env, "/bin/sh", "-c", script)
	so, _ := filepath.Glob(filepath.Join(dir, "fastpath_axpy*.so"))
	if len(so) != 1 {
		t.Fatalf("no extension built:\n%s", out)
	}
	t.Logf("built %s in %s (venv setup included)", filepath.Base(so[0]), time.Since(start).Round(time.Second))
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
