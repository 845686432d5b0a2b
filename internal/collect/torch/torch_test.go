package torch

import (
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/google/go-cmp/cmp"
)

const site = "/root/venv/lib/python3.12/site-packages"

func venvEnv(sitePath ...string) *facts.PythonEnv {
	return &facts.PythonEnv{Kind: "venv", Prefix: "/root/venv", SitePath: sitePath}
}

// cu128Archs is torch.cuda.get_arch_list() of torch 2.11's cu128 and cu130 wheels.
var cu128Archs = []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}

func TestCollectFixtures(t *testing.T) {
	yes := true
	tests := []struct {
		name      string
		build     func(tr *fixture.Tree)
		sitePath  []string
		want      *facts.Torch
		wantWarns []string // substrings, one per warning
	}{
		{
			name: "seed: CUDA 12.8 wheel",
			build: func(tr *fixture.Tree) {
				_ = fixture.Seed(tr.Root)
				tr.TorchVersionPy(site, fixture.SeedTorch, "12.8")
			},
			sitePath: []string{site},
			want: &facts.Torch{Version: "2.11.0+cu128", CUDA: "12.8", BuildFrom: "torch/version.py", GitVer: "70d99e998b4955e0049ba3ed3ffd0e4ff0ea8e5e",
				Location: site + "/torch", Lib: site + "/torch/lib", CMake: site + "/torch/share/cmake",
				CXX11ABI: &yes, CXX11ABIFrom: site + "/torch/lib/libc10.so: std::__cxx11 in its dynamic symbol names",
				Archs: cu128Archs, ArchLibs: []string{site + "/torch/lib/libtorch_cuda.so"}},
		},
		{
			name: "CPU build has no cuda",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.11.0+cpu", "", "cp312")
				tr.TorchVersionPy(site, "2.11.0+cpu", "")
			},
			sitePath: []string{site},
			want: &facts.Torch{Version: "2.11.0+cpu", BuildFrom: "torch/version.py", GitVer: "70d99e998b4955e0049ba3ed3ffd0e4ff0ea8e5e",
				Location: site + "/torch", Lib: site + "/torch/lib", CMake: site + "/torch/share/cmake",
				CXX11ABI: &yes, CXX11ABIFrom: site + "/torch/lib/libc10.so: std::__cxx11 in its dynamic symbol names"},
		},
		{
			name: "ROCm build written with double quotes, no annotations",
			build: func(tr *fixture.Tree) {
				tr.File(site+"/torch/version.py", "__version__ = \"2.5.1+rocm6.2\"\ndebug = False\ncuda = None\ngit_version = \"a8d6afb511a69687bbb2b7e88a3cf67917e1697e\"\nhip = \"6.2.41133-dd7f95766\"\n")
			},
			sitePath: []string{site},
			want:     &facts.Torch{Version: "2.5.1+rocm6.2", BuildFrom: "torch/version.py", HIP: "6.2.41133-dd7f95766", GitVer: "a8d6afb511a69687bbb2b7e88a3cf67917e1697e", Location: site + "/torch"},
		},
		{
			name: "first SitePath entry with torch wins, and a bundled nvcc is noted",
			build: func(tr *fixture.Tree) {
				tr.Torch("/src/pythonpath", "2.12.0a0+git1234", "13.0", "cp312")
				tr.TorchVersionPy("/src/pythonpath", "2.12.0a0+git1234", "13.0")
				tr.Exec("/src/pythonpath/torch/bin/nvcc", "\x7fELF")
				tr.Torch(site, "2.11.0+cu128", "12.8", "cp312")
			},
			sitePath: []string{"/src/pythonpath", site},
			want: &facts.Torch{Version: "2.12.0a0+git1234", CUDA: "13.0", BuildFrom: "torch/version.py", GitVer: "70d99e998b4955e0049ba3ed3ffd0e4ff0ea8e5e",
				Location: "/src/pythonpath/torch", Lib: "/src/pythonpath/torch/lib", CMake: "/src/pythonpath/torch/share/cmake",
				BundledNV: "/src/pythonpath/torch/bin/nvcc",
				CXX11ABI:  &yes, CXX11ABIFrom: "/src/pythonpath/torch/lib/libc10.so: std::__cxx11 in its dynamic symbol names",
				Archs: cu128Archs, ArchLibs: []string{"/src/pythonpath/torch/lib/libtorch_cuda.so"}},
		},
		{
			name: "malformed version.py: warning, version from the dist-info",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.11.0+cu128", "12.8", "cp312")
				tr.File(site+"/torch/version.py", "__version__ = get_version()\ncuda: Optional[str] = '12.8\n")
			},
			sitePath: []string{site},
			// The wheel's +cu128 tag still names the build.
			want: &facts.Torch{Version: "2.11.0+cu128", CUDA: "12.8", BuildFrom: "the +cu128 tag of 2.11.0+cu128", Location: site + "/torch", Lib: site + "/torch/lib",
				CMake: site + "/torch/share/cmake", CXX11ABI: &yes, CXX11ABIFrom: site + "/torch/lib/libc10.so: std::__cxx11 in its dynamic symbol names",
				Archs: cu128Archs, ArchLibs: []string{site + "/torch/lib/libtorch_cuda.so"}},
			wantWarns: []string{"__version__: not a string literal", "cuda: unterminated string", "__version__ is empty", "version 2.11.0+cu128 taken from"},
		},
		{
			name: "binary junk in version.py",
			build: func(tr *fixture.Tree) {
				tr.File(site+"/torch/version.py", "\x7fELF\x00\x01\x02\xff\xfe")
			},
			sitePath:  []string{site},
			want:      &facts.Torch{Location: site + "/torch"},
			wantWarns: []string{"not a text file"},
		},
		{
			name: "version.py is a dangling link: unreadable, warned",
			build: func(tr *fixture.Tree) {
				tr.Dir(site + "/torch")
				tr.Symlink(site+"/torch/version.py", "/nowhere/version.py")
				tr.Symlink(site+"/torch/lib", "../../elsewhere")
			},
			sitePath: []string{site},
			want:     nil,
		},
		{
			name:     "no torch",
			build:    func(tr *fixture.Tree) { tr.Dist(site, fixture.Dist{Name: "numpy", Version: "2.3.5"}) },
			sitePath: []string{site, "relative/dir"},
			want:     nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture.New(t.TempDir())
			tc.build(tr)
			if err := tr.Err(); err != nil {
				t.Fatal(err)
			}
			src, err := source.Root(tr.Root, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, warns := Collect(src, venvEnv(tc.sitePath...))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("torch (-want +got):\n%s", diff)
			}
			if len(warns) != len(tc.wantWarns) {
				t.Fatalf("warnings = %q, want %d matching %q", warns, len(tc.wantWarns), tc.wantWarns)
			}
			for i, w := range tc.wantWarns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warns[i], w)
				}
			}
		})
	}
}

func TestCollectNilEnv(t *testing.T) {
	src, err := source.Root(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, warns := Collect(src, nil); got != nil || warns != nil {
		t.Errorf("Collect(nil env) = %v, %v; want nil, nil", got, warns)
	}
}

// The fixture's version.py is the text torch's build writes; this keeps the
// test honest about the exact layout read.
func TestParseVersionPy(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     VersionPy
		problems []string
	}{
		{
			name: "torch 2.11 wheel",
			in: "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n" +
				"__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\n" +
				"git_version = '70d99e998b4955e0049ba3ed3ffd0e4ff0ea8e5e'\nhip: Optional[str] = None\nxpu: Optional[str] = None\n",
			want: VersionPy{Version: "2.11.0+cu130", CUDA: "13.0", GitVersion: "70d99e998b4955e0049ba3ed3ffd0e4ff0ea8e5e"},
		},
		{
			name: "old torch 1.13 layout, CRLF, comments",
			in:   "__version__ = '1.13.1+cu117'\r\ndebug = False\r\ncuda = '11.7'  # built with\r\ngit_version = \"49444c3e546bf240bed24a101e747422d1f8a0ee\"\r\nhip = None\r\n",
			want: VersionPy{Version: "1.13.1+cu117", CUDA: "11.7", GitVersion: "49444c3e546bf240bed24a101e747422d1f8a0ee"},
		},
		{
			name: "indented and compared names are not assignments",
			in:   "__version__ = '2.4.0'\nif cuda == '12.1':\n    cuda = '99'\ncuda: Optional[str] = None\n",
			want: VersionPy{Version: "2.4.0"},
		},
		{
			name:     "empty file",
			in:       "",
			problems: []string{"no __version__ assignment"},
		},
		{
			name:     "expression instead of a literal",
			in:       "__version__ = '2.1.0'\ncuda = os.environ['CUDA']\n",
			want:     VersionPy{Version: "2.1.0"},
			problems: []string{"line 2: cuda: not a string literal: \"os.environ['CUDA']\""},
		},
		{
			name:     "trailing junk after the literal",
			in:       "__version__ = '2.1.0' + suffix\n",
			problems: []string{"line 1: __version__: unexpected text after the value: \"'2.1.0' + suffix\"", "__version__ is empty"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := ParseVersionPy([]byte(tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseVersionPy (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzVersionPy(f *testing.F) {
	f.Add([]byte("__version__ = '2.11.0+cu128'\ncuda: Optional[str] = '12.8'\nhip: Optional[str] = None\n"))
	f.Add([]byte("__version__ = \"2.5.1+rocm6.2\"\nhip = \"6.2\"\n"))
	f.Add([]byte("cuda = '''12.8'''\n__version__ = x\n"))
	f.Add([]byte(":= =\n=\n a = '\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := ParseVersionPy(data)
		for _, s := range []string{v.Version, v.CUDA, v.HIP, v.GitVersion} {
			// A value is always the inside of one quoted literal on one line.
			if strings.ContainsAny(s, "\n'\"\\") {
				t.Fatalf("value %q holds a quote, backslash or newline", s)
			}
		}
	})
}

func TestBuildFromLocalTag(t *testing.T) {
	for _, tc := range []struct {
		in        string
		cuda, hip string
		ok        bool
	}{
		{"2.11.0+cu128", "12.8", "", true},
		{"2.11.0+cu130", "13.0", "", true},
		{"1.13.1+cu117", "11.7", "", true},
		{"1.4.0+cu92", "9.2", "", true},
		{"2.11.0+cpu", "", "", true},
		{"2.11.0+cpu.cxx11.abi", "", "", true},
		{"2.7.0+rocm6.3", "", "6.3", true},
		{"2.11.0", "", "", false},
		{"2.11.0+local", "", "", false},
		{"2.11.0+cu", "", "", false},
		{"2.11.0+cu1234", "", "", false},
	} {
		cuda, hip, ok := BuildFromLocalTag(tc.in)
		if cuda != tc.cuda || hip != tc.hip || ok != tc.ok {
			t.Errorf("BuildFromLocalTag(%q) = %q, %q, %v; want %q, %q, %v", tc.in, cuda, hip, ok, tc.cuda, tc.hip, tc.ok)
		}
	}
}
