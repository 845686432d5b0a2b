package nvcc

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const site = "/root/venv/lib/python3.12/site-packages"

var seedPython = facts.Python{Selected: &facts.PythonEnv{Kind: "venv", Prefix: "/root/venv", SitePath: []string{site}}}

func collectTree(t *testing.T, tr *fixture.Tree, env map[string]string, py facts.Python, tor *facts.Torch) (facts.CUDA, []string) {
	t.Helper()
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(tr.Root, source.Env(env))
	if err != nil {
		t.Fatal(err)
	}
	return Collect(context.Background(), src, py, tor, 0)
}

// The seed container has no nvcc anywhere: the list of places looked at is
// the evidence no-cuda-compiler prints, so it is checked entry by entry.
func TestSeedHasNoCompiler(t *testing.T) {
	tr := fixture.New(t.TempDir())
	if err := fixture.Seed(tr.Root); err != nil {
		t.Fatal(err)
	}
	env, _ := source.ParseEnv(fixture.SeedEnv)
	got, warns := collectTree(t, tr, env, seedPython, &facts.Torch{Location: site + "/torch"})
	want := facts.CUDA{
		Compilers: []facts.NVCC{},
		Searched: []string{
			"PATH: /root/venv/bin/nvcc (absent)",
			"PATH: /usr/local/sbin/nvcc (absent)",
			"PATH: /usr/local/bin/nvcc (absent)",
			"PATH: /usr/sbin/nvcc (absent)",
			"PATH: /usr/bin/nvcc (absent)",
			"PATH: /sbin/nvcc (absent)",
			"PATH: /bin/nvcc (absent)",
			"CUDA_HOME: not set",
			"CUDA_PATH: not set",
			"/usr/local/cuda: /usr/local/cuda/bin/nvcc (absent)",
			"/usr/local/cuda-*: no folder matches",
			"/opt/cuda*: no folder matches",
			"conda (CONDA_PREFIX): not set",
			"conda: /opt/conda (absent)",
			"conda: /root/miniconda3 (absent)",
			"conda: /root/miniforge3 (absent)",
			"conda: /root/anaconda3 (absent)",
			"pip (nvidia-cuda-nvcc-cu12 layout): " + site + "/nvidia/cuda_nvcc/bin/nvcc (absent)",
			"pip (nvidia-cuda-nvcc layout): " + site + "/nvidia/cu13/bin/nvcc (absent)",
			"torch/bin: " + site + "/torch/bin/nvcc (absent)",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CUDA facts (-want +got):\n%s", diff)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
}

func TestCollectLayouts(t *testing.T) {
	tests := []struct {
		name         string
		build        func(tr *fixture.Tree)
		env          map[string]string
		compilers    []facts.NVCC
		incomplete   []facts.IncompleteCompiler
		home         *facts.CUDAHome
		searched     []string // entries that must be present
		warnContains []string
	}{
		{
			name:  "/usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-12.8, not on PATH",
			build: func(tr *fixture.Tree) { tr.CUDAAlternatives("12.8.93") },
			env:   map[string]string{"PATH": "/usr/bin:/bin"},
			compilers: []facts.NVCC{{Path: "/usr/local/cuda/bin/nvcc", Home: "/usr/local/cuda", Version: "12.8.93", VersionFrom: "version.json",
				Via: []string{"/usr/local/cuda", "toolkit"}, CUDARuntimeH: "/usr/local/cuda/include/cuda_runtime.h"}},
			home: &facts.CUDAHome{Path: "/usr/local/cuda", Via: "/usr/local/cuda", NVCC: "/usr/local/cuda/bin/nvcc"},
			searched: []string{
				"/usr/local/cuda: /usr/local/cuda/bin/nvcc (found, resolves to /usr/local/cuda-12.8/bin/nvcc)",
				"/usr/local/cuda-*: /usr/local/cuda-12/bin/nvcc (found: the same file as /usr/local/cuda/bin/nvcc)",
				"/usr/local/cuda-*: /usr/local/cuda-12.8/bin/nvcc (found: the same file as /usr/local/cuda/bin/nvcc)",
			},
		},
		{
			name: "duplicates merged: PATH twice, CUDA_HOME, the link and the folder are one nvcc; a second toolkit stays apart",
			build: func(tr *fixture.Tree) {
				tr.CUDAAlternatives("12.8.93")
				tr.Toolkit("/usr/local/cuda-12.4", "12.4.131")
			},
			env: map[string]string{"PATH": "/usr/local/cuda/bin:/usr/local/cuda-12.8/bin:/usr/bin", "CUDA_HOME": "/usr/local/cuda-12.8"},
			compilers: []facts.NVCC{
				{Path: "/usr/local/cuda/bin/nvcc", Home: "/usr/local/cuda", Version: "12.8.93", VersionFrom: "version.json",
					Via: []string{"PATH", "CUDA_HOME", "/usr/local/cuda", "toolkit"}, CUDARuntimeH: "/usr/local/cuda/include/cuda_runtime.h"},
				{Path: "/usr/local/cuda-12.4/bin/nvcc", Home: "/usr/local/cuda-12.4", Version: "12.4.131", VersionFrom: "version.json",
					Via: []string{"toolkit"}, CUDARuntimeH: "/usr/local/cuda-12.4/include/cuda_runtime.h"},
			},
			home: &facts.CUDAHome{Path: "/usr/local/cuda-12.8", Via: "CUDA_HOME", NVCC: "/usr/local/cuda-12.8/bin/nvcc"},
			searched: []string{
				"PATH: /usr/local/cuda-12.8/bin/nvcc (found: the same file as /usr/local/cuda/bin/nvcc)",
				"/usr/local/cuda-*: /usr/local/cuda-12.4/bin/nvcc (found)",
			},
		},
		{
			name: "CUDA_HOME names a folder without bin/nvcc while a toolkit sits elsewhere",
			build: func(tr *fixture.Tree) {
				tr.File("/opt/mycuda/include/cuda_runtime.h", "/* headers only */\n")
				tr.Toolkit("/usr/local/cuda-12.4", "12.4.131")
			},
			env: map[string]string{"PATH": "/usr/bin", "CUDA_HOME": "/opt/mycuda"},
			compilers: []facts.NVCC{{Path: "/usr/local/cuda-12.4/bin/nvcc", Home: "/usr/local/cuda-12.4", Version: "12.4.131", VersionFrom: "version.json",
				Via: []string{"toolkit"}, CUDARuntimeH: "/usr/local/cuda-12.4/include/cuda_runtime.h"}},
			home:     &facts.CUDAHome{Path: "/opt/mycuda", Via: "CUDA_HOME"},
			searched: []string{"CUDA_HOME=/opt/mycuda: /opt/mycuda/bin/nvcc (absent)", "CUDA_PATH: not set"},
		},
		{
			name: "nvcc on PATH only (entry with a trailing slash), an old toolkit with version.txt",
			build: func(tr *fixture.Tree) {
				tr.Exec("/home/u/cuda-11.0/bin/nvcc", "\x7fELF")
				tr.File("/home/u/cuda-11.0/version.txt", "CUDA Version 11.0.228\n")
				tr.File("/home/u/cuda-11.0/include/cuda_runtime.h", "")
			},
			env: map[string]string{"PATH": "/usr/bin:/home/u/cuda-11.0/bin/"},
			compilers: []facts.NVCC{{Path: "/home/u/cuda-11.0/bin/nvcc", Home: "/home/u/cuda-11.0", Version: "11.0.228", VersionFrom: "version.txt",
				Via: []string{"PATH"}, CUDARuntimeH: "/home/u/cuda-11.0/include/cuda_runtime.h"}},
			home: &facts.CUDAHome{Path: "/home/u/cuda-11.0", Via: "PATH", NVCC: "/home/u/cuda-11.0/bin/nvcc"},
		},
		{
			name: "pip CUDA 12 wheel: no bin/nvcc, an incomplete compiler",
			build: func(tr *fixture.Tree) {
				tr.PipNVCCCu12(site, "12.8.93")
				tr.PipCUDARuntimeCu12(site, "12.8.90")
			},
			env:       map[string]string{"PATH": "/root/venv/bin:/usr/bin"},
			compilers: []facts.NVCC{},
			incomplete: []facts.IncompleteCompiler{{Home: site + "/nvidia/cuda_nvcc", Dist: "nvidia-cuda-nvcc-cu12", Version: "12.8.93",
				Has:     []string{"bin/ptxas", "nvvm/lib64/libnvvm.so", "nvvm/libdevice/libdevice.10.bc", "include/crt/host_config.h"},
				Missing: []string{"bin/nvcc", "nvvm/bin/cicc"}}},
			searched: []string{"pip (nvidia-cuda-nvcc-cu12 layout): " + site + "/nvidia/cuda_nvcc/bin/nvcc (absent; " + site +
				"/nvidia/cuda_nvcc holds an incomplete compiler: bin/ptxas, nvvm/lib64/libnvvm.so, nvvm/libdevice/libdevice.10.bc, include/crt/host_config.h)"},
		},
		{
			name:  "pip CUDA 13 wheels: a real nvcc torch cannot find",
			build: func(tr *fixture.Tree) { tr.PipNVCCCu13(site, "13.0.88") },
			env:   map[string]string{"PATH": "/root/venv/bin:/usr/bin"},
			compilers: []facts.NVCC{{Path: site + "/nvidia/cu13/bin/nvcc", Home: site + "/nvidia/cu13", Version: "13.0.88", VersionFrom: "dist-info",
				Via: []string{"pip"}, Dist: "nvidia-cuda-nvcc", CUDARuntimeH: site + "/nvidia/cu13/include/cuda_runtime.h"}},
		},
		{
			name:  "pip CUDA 13 wheels named by CUDA_HOME",
			build: func(tr *fixture.Tree) { tr.PipNVCCCu13(site, "13.0.88") },
			env:   map[string]string{"PATH": "/root/venv/bin:/usr/bin", "CUDA_HOME": site + "/nvidia/cu13"},
			compilers: []facts.NVCC{{Path: site + "/nvidia/cu13/bin/nvcc", Home: site + "/nvidia/cu13", Version: "13.0.88", VersionFrom: "dist-info",
				Via: []string{"CUDA_HOME", "pip"}, Dist: "nvidia-cuda-nvcc", CUDARuntimeH: site + "/nvidia/cu13/include/cuda_runtime.h"}},
			home: &facts.CUDAHome{Path: site + "/nvidia/cu13", Via: "CUDA_HOME", NVCC: site + "/nvidia/cu13/bin/nvcc"},
		},
		{
			name: "torch's CUDA 13 runtime wheels alone are no compiler",
			build: func(tr *fixture.Tree) {
				tr.Dist(site, fixture.Dist{Name: "nvidia-cuda-runtime", Version: "13.0.96",
					Files: []string{"nvidia/cu13/include/cuda_runtime.h", "nvidia/cu13/lib/libcudart.so.13"}})
			},
			env:       map[string]string{"PATH": "/usr/bin"},
			compilers: []facts.NVCC{},
			searched:  []string{"pip (nvidia-cuda-nvcc layout): " + site + "/nvidia/cu13/bin/nvcc (absent)"},
		},
		{
			name: "conda env named by CONDA_PREFIX and found again under /opt/conda/envs",
			build: func(tr *fixture.Tree) {
				tr.PythonInstall("/opt/conda", "3.12.3", true)
				tr.CondaNVCC("/opt/conda/envs/build", "12.4.131")
			},
			env: map[string]string{"PATH": "/opt/conda/bin:/usr/bin", "CONDA_PREFIX": "/opt/conda/envs/build", "HOME": "/home/u"},
			compilers: []facts.NVCC{{Path: "/opt/conda/envs/build/bin/nvcc", Home: "/opt/conda/envs/build", Version: "12.4.131", VersionFrom: "conda-meta",
				Via: []string{"conda"}, CUDARuntimeH: "/opt/conda/envs/build/targets/x86_64-linux/include/cuda_runtime.h"}},
			searched: []string{
				"conda (CONDA_PREFIX): /opt/conda/envs/build/bin/nvcc (found)",
				"PATH: /opt/conda/bin/nvcc (absent)", // looked at once, not again as conda's base
				"conda: /home/u/miniconda3 (absent)",
			},
		},
		{
			name: "bad links and files: warned or explained, never fatal",
			build: func(tr *fixture.Tree) {
				tr.Symlink("/usr/local/cuda", "/usr/local/cuda")
				tr.Symlink("/usr/local/bin/nvcc", "/nowhere/nvcc")
				tr.File("/opt/cuda/bin/nvcc", "not executable")
				tr.Dir("/usr/local/cuda-12.8/bin/nvcc")
			},
			env:       map[string]string{"PATH": "bin:/usr/local/bin", "CUDA_PATH": ""},
			compilers: []facts.NVCC{},
			searched: []string{
				`PATH: relative entry "bin" skipped (it depends on the working directory)`,
				"PATH: /usr/local/bin/nvcc (absent: a dangling link to /nowhere/nvcc)",
				"CUDA_PATH: set but empty",
				"/usr/local/cuda: /usr/local/cuda/bin/nvcc (unreadable: too many levels of symbolic links)",
				"/usr/local/cuda-*: /usr/local/cuda-12.8/bin/nvcc (a folder, not a program)",
				"/opt/cuda*: /opt/cuda/bin/nvcc (present but not executable)",
			},
			warnContains: []string{"cannot check /usr/local/cuda/bin/nvcc", "CUDA_PATH is set but empty"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture.New(t.TempDir())
			tc.build(tr)
			got, warns := collectTree(t, tr, tc.env, seedPython, nil)
			// Paths are checked below: every unresolved path a compiler was
			// found under, its own Path first, each resolving to one file.
			if diff := cmp.Diff(tc.compilers, got.Compilers, cmpopts.IgnoreFields(facts.NVCC{}, "Paths")); diff != "" {
				t.Errorf("compilers (-want +got):\n%s", diff)
			}
			src, _ := source.Root(tr.Root, nil)
			for _, n := range got.Compilers {
				if len(n.Paths) == 0 || n.Paths[0] != n.Path {
					t.Errorf("%s: Paths %v should start with Path", n.Path, n.Paths)
				}
				want, _ := src.Resolve(n.Path)
				for _, p := range n.Paths {
					if r, _ := src.Resolve(p); r != want {
						t.Errorf("%s: path %s resolves to %s, not %s", n.Path, p, r, want)
					}
				}
			}
			if diff := cmp.Diff(tc.incomplete, got.Incomplete); diff != "" {
				t.Errorf("incomplete (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.home, got.TorchHome); diff != "" {
				t.Errorf("torch home (-want +got):\n%s", diff)
			}
			for _, s := range tc.searched {
				if !slices.Contains(got.Searched, s) {
					t.Errorf("Searched lacks %q; it is:\n%s", s, strings.Join(got.Searched, "\n"))
				}
			}
			if len(warns) != len(tc.warnContains) {
				t.Fatalf("warnings = %q, want %d", warns, len(tc.warnContains))
			}
			for _, w := range tc.warnContains {
				if !slices.ContainsFunc(warns, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("no warning contains %q: %q", w, warns)
				}
			}
		})
	}
}

// The other environments' site-packages are searched too, and a folder in
// SitePath that is gone is reported.
func TestPipInOtherEnvironments(t *testing.T) {
	tr := fixture.New(t.TempDir())
	other := "/opt/other/lib/python3.11/site-packages"
	tr.PipNVCCCu13(other, "13.0.88")
	py := facts.Python{
		Selected: &facts.PythonEnv{SitePath: []string{site}},
		Others:   []facts.PythonEnv{{Prefix: "/opt/other", SitePath: []string{other, site}}},
	}
	got, _ := collectTree(t, tr, map[string]string{"PATH": "/usr/bin"}, py, nil)
	if len(got.Compilers) != 1 || got.Compilers[0].Path != other+"/nvidia/cu13/bin/nvcc" {
		t.Fatalf("compilers = %+v, want the one in %s", got.Compilers, other)
	}
	if !slices.Contains(got.Searched, "pip: "+site+" (absent)") {
		t.Errorf("Searched lacks the missing site folder: %q", got.Searched)
	}
}
