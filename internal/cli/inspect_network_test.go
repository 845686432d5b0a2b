package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// testCache is $FASTPATH_TEST_CACHE, else <repo root>/.cache (git-ignored): wheels are
// downloaded into it once and installed from it offline.
func testCache(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("FASTPATH_TEST_CACHE"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

func runCmd(t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// nvccWheels are NVIDIA's pip CUDA 13 compilers the oracle builds with: the first
// 13.0 release and the newest 13.x when this was written. nvidia-cuda-nvcc-cu12 has no
// nvcc (only ptxas and libnvvm), so CUDA 12 cannot be tested this way.
var nvccWheels = []struct {
	name  string
	reqs  []string
	files []string // the wheels' file name prefixes, to find them in the cache
}{
	{"13.0", []string{"nvidia-cuda-nvcc==13.0.88", "nvidia-nvvm==13.0.88", "nvidia-cuda-crt==13.0.88", "nvidia-cuda-runtime==13.0.96"},
		[]string{"nvidia_cuda_nvcc-13.0.88-", "nvidia_nvvm-13.0.88-", "nvidia_cuda_crt-13.0.88-", "nvidia_cuda_runtime-13.0.96-"}},
	{"13.5", []string{"nvidia-cuda-nvcc==13.5.37", "nvidia-nvvm==13.5.37", "nvidia-cuda-crt==13.5.37", "nvidia-cuda-runtime==13.5.37"},
		[]string{"nvidia_cuda_nvcc-13.5.37-", "nvidia_nvvm-13.5.37-", "nvidia_cuda_crt-13.5.37-", "nvidia_cuda_runtime-13.5.37-"}},
}

// cuobjdump 13.2 is the oldest on PyPI; the newest is used.
var cuobjdumpWheel = struct{ req, file string }{"nvidia-cuda-cuobjdump==13.5.37", "nvidia_cuda_cuobjdump-13.5.37-"}

// ensureWheels downloads reqs into dir unless a wheel starting with each prefix is there.
func ensureWheels(t *testing.T, python, dir string, reqs, prefixes []string) {
	t.Helper()
	for _, p := range prefixes {
		if m, _ := filepath.Glob(filepath.Join(dir, p+"*.whl")); len(m) == 0 {
			runCmd(t, nil, python, append([]string{"-m", "pip", "download", "--quiet", "--disable-pip-version-check",
				"--only-binary=:all:", "--no-deps", "-d", dir}, reqs...)...)
			return
		}
	}
}

// venvWith makes a venv at venv with reqs installed offline from wheels
// and returns its site-packages.
func venvWith(t *testing.T, python, venv, wheels string, reqs []string) string {
	t.Helper()
	runCmd(t, nil, python, "-m", "venv", "--without-pip", venv)
	runCmd(t, nil, python, append([]string{"-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "install", "--quiet",
		"--disable-pip-version-check", "--no-index", "--no-deps", "--find-links", wheels}, reqs...)...)
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages of %s: %v", venv, sites)
	}
	return sites[0]
}

// cuobjdumpBoth runs the real cuobjdump --list-elf then --list-ptx on path.
func cuobjdumpBoth(t *testing.T, cuobjdump, path string) (stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	for _, flag := range []string{"--list-elf", "--list-ptx"} {
		cmd := exec.Command(cuobjdump, flag, path)
		cmd.Stdout, cmd.Stderr = &o, &e
		_ = cmd.Run() // exits 255 for a file without device code, 1 for a fatal error
	}
	return o.String(), e.String()
}

// TestNetworkCuobjdumpOracle builds axpy.cu the reference ways with NVIDIA's pip nvcc
// 13.0 and 13.5 (internal/fatbin/testdata/real/src/build.sh) and checks that
// `fastpath inspect --cuobjdump FILE` prints, on stdout and stderr, exactly what the
// real cuobjdump --list-elf then --list-ptx print, for every output, for a host-only
// ELF, a text file and a missing file, one at a time and all in one call.
func TestNetworkCuobjdumpOracle(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	for _, tool := range []string{"gcc", "g++"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: nvcc needs a host compiler", tool)
		}
	}
	wheels := filepath.Join(testCache(t), "pip-wheels")
	if err := os.MkdirAll(wheels, 0o755); err != nil {
		t.Fatal(err)
	}
	ensureWheels(t, python, wheels, []string{cuobjdumpWheel.req}, []string{cuobjdumpWheel.file})
	for _, w := range nvccWheels {
		ensureWheels(t, python, wheels, w.reqs, w.files)
	}
	buildSh, err := filepath.Abs(filepath.Join("..", "fatbin", "testdata", "real", "src", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}

	// The two compilers install and build in parallel: each is ~100 MB of wheels.
	type build struct {
		name, out, cuobjdump string
	}
	builds := make([]build, len(nvccWheels))
	tmp := t.TempDir() // outlives the build subtests
	t.Run("build", func(t *testing.T) {
		for i, w := range nvccWheels {
			t.Run(w.name, func(t *testing.T) {
				t.Parallel()
				site := venvWith(t, python, filepath.Join(tmp, "venv-"+w.name), wheels, append(append([]string(nil), w.reqs...), cuobjdumpWheel.req))
				home := filepath.Join(site, "nvidia", "cu13")
				// nvcc.profile links from lib64; the wheels ship lib only.
				if err := os.Symlink("lib", filepath.Join(home, "lib64")); err != nil && !os.IsExist(err) {
					t.Fatal(err)
				}
				out := filepath.Join(tmp, "nvcc-"+w.name)
				cuobjdump := filepath.Join(home, "bin", "cuobjdump")
				runCmd(t, []string{"CUDA_HOME=" + home, "NVCC=" + filepath.Join(home, "bin", "nvcc"), "CUOBJDUMP=" + cuobjdump},
					"bash", buildSh, out)
				builds[i] = build{w.name, out, cuobjdump}
			})
		}
	})
	if t.Failed() {
		return
	}

	self, err := os.Executable() // a host-only ELF
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range builds {
		t.Run("nvcc-"+b.name, func(t *testing.T) {
			bins, _ := filepath.Glob(filepath.Join(b.out, "*"))
			var files []string
			for _, p := range bins {
				if !strings.HasSuffix(p, ".txt") {
					files = append(files, p)
				}
			}
			sort.Strings(files)
			if len(files) < 10 {
				t.Fatalf("build.sh made %d files: %v", len(files), files)
			}
			notes := filepath.Join(b.out, "notes.txt")
			if err := os.WriteFile(notes, []byte("not a binary\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, self, notes, filepath.Join(b.out, "missing.so"))

			var allOut, allErr strings.Builder
			for _, f := range files {
				wantOut, wantErr := cuobjdumpBoth(t, b.cuobjdump, f)
				allOut.WriteString(wantOut)
				allErr.WriteString(wantErr)
				var gotOut, gotErr bytes.Buffer
				code := Main([]string{"inspect", "--cuobjdump", f}, nil, &gotOut, &gotErr)
				gotE := strings.TrimSuffix(gotErr.String(), "fastpath: could not read "+f+"\n")
				if gotOut.String() != wantOut || gotE != wantErr {
					t.Errorf("%s:\nfastpath stdout:\n%s\ncuobjdump stdout:\n%s\nfastpath stderr:\n%s\ncuobjdump stderr:\n%s",
						filepath.Base(f), gotOut.String(), wantOut, gotE, wantErr)
				}
				wantCode := ExitOK
				if f == notes || strings.HasSuffix(f, "missing.so") {
					wantCode = ExitFailure
				}
				if code != wantCode {
					t.Errorf("%s: exit %d, want %d", filepath.Base(f), code, wantCode)
				}
			}
			// build.sh's own recording agrees with the one above (same cuobjdump).
			rec, err := os.ReadFile(filepath.Join(b.out, "sm80_sm90_ptx90.so.list-elf.txt"))
			if err != nil || !strings.Contains(allOut.String(), string(rec)) || len(rec) == 0 {
				t.Errorf("build.sh's listing %q (%v) is not in cuobjdump's output", rec, err)
			}

			// Several files in one call: cuobjdump takes one file, so the listing is
			// its per-file runs one after another.
			var gotOut, gotErr bytes.Buffer
			Main(append([]string{"inspect", "--cuobjdump"}, files...), nil, &gotOut, &gotErr)
			gotE := gotErr.String()
			if i := strings.Index(gotE, "fastpath: could not read "); i >= 0 {
				gotE = gotE[:i]
			}
			if gotOut.String() != allOut.String() || gotE != allErr.String() {
				t.Errorf("all files in one call:\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", gotOut.String(), allOut.String(), gotE, allErr.String())
			}
		})
	}
}
