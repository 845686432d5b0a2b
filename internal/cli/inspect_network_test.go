package cli

import (
	"bytes"
	"github.com/fastpath-dev/fastpath/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// nvccWheels are NVIDIA's pip CUDA 13 compilers the oracle builds with: the first
// 13.0 release and the newest 13.x when this was written. nvidia-cuda-nvcc-cu12 has no
// nvcc (only ptxas and libnvvm), so CUDA 12 cannot be tested this way.
var nvccWheels = []struct {
	name string
	reqs []string
}{
	{"13.0", []string{"nvidia-cuda-nvcc==13.0.88", "nvidia-nvvm==13.0.88", "nvidia-cuda-crt==13.0.88", "nvidia-cuda-runtime==13.0.96"}},
	{"13.5", []string{"nvidia-cuda-nvcc==13.5.37", "nvidia-nvvm==13.5.37", "nvidia-cuda-crt==13.5.37", "nvidia-cuda-runtime==13.5.37"}},
}

// cuobjdump 13.2 is the oldest on PyPI; the newest is used.
const cuobjdumpWheel = "nvidia-cuda-cuobjdump==13.5.37"

// venvWith makes a venv at venv with reqs installed offline from wheels
// and returns its site-packages.
func venvWith(t *testing.T, python, venv, wheels string, reqs []string) string {
	t.Helper()
	testenv.Run(t, nil, python, "-m", "venv", "--without-pip", venv)
	testenv.Run(t, nil, python, append([]string{"-m", "pip", "--python", filepath.Join(venv, "bin", "python"), "install", "--quiet",
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
	python := testenv.Python3(t)
	for _, tool := range []string{"gcc", "g++"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: nvcc needs a host compiler", tool)
		}
	}
	wheels := testenv.Wheels(t, cuobjdumpWheel)
	for _, w := range nvccWheels {
		testenv.Wheels(t, w.reqs...)
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
				site := venvWith(t, python, filepath.Join(tmp, "venv-"+w.name), wheels, append(append([]string(nil), w.reqs...), cuobjdumpWheel))
				home := filepath.Join(site, "nvidia", "cu13")
				// nvcc.profile links from lib64; the wheels ship lib only.
				if err := os.Symlink("lib", filepath.Join(home, "lib64")); err != nil && !os.IsExist(err) {
					t.Fatal(err)
				}
				out := filepath.Join(tmp, "nvcc-"+w.name)
				cuobjdump := filepath.Join(home, "bin", "cuobjdump")
				testenv.Run(t, []string{"CUDA_HOME=" + home, "NVCC=" + filepath.Join(home, "bin", "nvcc"), "CUOBJDUMP=" + cuobjdump},
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
