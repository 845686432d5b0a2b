package toolchain

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/google/go-cmp/cmp"
)

const site = "/root/venv/lib/python3.12/site-packages"

var venv = &facts.PythonEnv{Kind: "venv", Prefix: "/root/venv", SitePath: []string{site}}

func TestCollectFixtures(t *testing.T) {
	gcc13 := &facts.Tool{Path: "/usr/bin/gcc", Version: "13", VersionFrom: "link name x86_64-linux-gnu-gcc-13, /usr/lib/gcc/x86_64-linux-gnu/13", Via: "PATH"}
	gxx13 := &facts.Tool{Path: "/usr/bin/g++", Version: "13", VersionFrom: "link name x86_64-linux-gnu-g++-13, /usr/lib/gcc/x86_64-linux-gnu/13", Via: "PATH"}
	tests := []struct {
		name     string
		build    func(tr *fixture.Tree)
		env      map[string]string
		pyenv    *facts.PythonEnv
		want     facts.Toolchain
		searched []string
		warns    int
	}{
		{
			name:  "seed: Ubuntu gcc 13, pip ninja on the venv's PATH, no cmake",
			build: func(tr *fixture.Tree) { _ = fixture.Seed(tr.Root) },
			env:   map[string]string{"PATH": fixture.SeedPATH},
			pyenv: venv,
			want: facts.Toolchain{GCC: gcc13, GXX: gxx13,
				Ninja: &facts.Tool{Path: "/root/venv/bin/ninja", Version: "1.13.0", VersionFrom: "dist-info", Via: "PATH"}},
			searched: []string{
				"PATH: /root/venv/bin/gcc (absent)",
				"PATH: /usr/bin/gcc (found, resolves to /usr/bin/x86_64-linux-gnu-gcc-13)",
				"/usr/lib/gcc/x86_64-linux-gnu/13/cc1 (found)",
			},
		},
		{
			name: "gcc 12 and 13 installed, gcc links to 13, CUDAHOSTCXX picks g++-12",
			build: func(tr *fixture.Tree) {
				tr.GCC("x86_64-linux-gnu", 12)
				tr.GCC("x86_64-linux-gnu", 13)
			},
			env: map[string]string{"PATH": "/usr/local/bin:/usr/bin", "CUDAHOSTCXX": "g++-12"},
			want: facts.Toolchain{GCC: gcc13, GXX: gxx13,
				CUDAHostCXX: &facts.Tool{Path: "/usr/bin/g++-12", Version: "12", VersionFrom: "link name x86_64-linux-gnu-g++-12, /usr/lib/gcc/x86_64-linux-gnu/12", Via: "env"}},
			searched: []string{"CUDAHOSTCXX=g++-12: /usr/bin/g++-12 (found)", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1 (found)"},
		},
		{
			name: "Red Hat layout: a real /usr/bin/gcc, cc1 in /usr/libexec/gcc; system cmake",
			build: func(tr *fixture.Tree) {
				tr.Exec("/usr/bin/gcc", "\x7fELF")
				tr.Dir("/usr/lib/gcc/x86_64-redhat-linux/11")
				tr.File("/usr/libexec/gcc/x86_64-redhat-linux/11/cc1", "")
				tr.File("/usr/libexec/gcc/x86_64-redhat-linux/8/cc1", "")
				tr.Exec("/usr/bin/cmake", "\x7fELF")
				tr.Dir("/usr/share/cmake-3.26/Modules")
			},
			env: map[string]string{"PATH": "/usr/bin"},
			want: facts.Toolchain{
				GCC:   &facts.Tool{Path: "/usr/bin/gcc", Version: "11", VersionFrom: "/usr/libexec/gcc/x86_64-redhat-linux/11", Via: "PATH"},
				CMake: &facts.Tool{Path: "/usr/bin/cmake", Version: "3.26", VersionFrom: "/usr/share/cmake-3.26", Via: "PATH"}},
			searched: []string{"/usr/lib/gcc/x86_64-redhat-linux/11/cc1 (absent)", "PATH: /usr/bin/g++ (absent)"},
		},
		{
			name: "gcc link names a version whose cc1 is gone: warned, name kept",
			build: func(tr *fixture.Tree) {
				tr.GCC("x86_64-linux-gnu", 14)
				_ = os.Remove(tr.Host("/usr/lib/gcc/x86_64-linux-gnu/14/cc1"))
			},
			env: map[string]string{"PATH": "/usr/bin"},
			want: facts.Toolchain{
				GCC: &facts.Tool{Path: "/usr/bin/gcc", Version: "14", VersionFrom: "link name x86_64-linux-gnu-gcc-14", Via: "PATH"},
				GXX: &facts.Tool{Path: "/usr/bin/g++", Version: "14", VersionFrom: "link name x86_64-linux-gnu-g++-14, /usr/lib/gcc/x86_64-linux-gnu/14", Via: "PATH"}},
			warns: 1,
		},
		{
			name: "nothing on PATH; pip ninja and cmake in the venv are found through the wheels",
			build: func(tr *fixture.Tree) {
				tr.Dist(site, fixture.Dist{Name: "ninja", Version: "1.13.0", Files: []string{"ninja/__init__.py"}})
				tr.Exec(site+"/ninja/data/bin/ninja", "\x7fELF")
				tr.Dist(site, fixture.Dist{Name: "cmake", Version: "4.1.2", Files: []string{"cmake/__init__.py"}})
				tr.Exec("/root/venv/bin/cmake", "#!/root/venv/bin/python\n")
			},
			env:   map[string]string{"PATH": "/usr/bin", "CUDAHOSTCXX": "/opt/clang/bin/clang++"},
			pyenv: venv,
			want: facts.Toolchain{
				CUDAHostCXX: &facts.Tool{Path: "/opt/clang/bin/clang++", Via: "env"},
				Ninja:       &facts.Tool{Path: site + "/ninja/data/bin/ninja", Version: "1.13.0", VersionFrom: "dist-info", Via: "pip"},
				CMake:       &facts.Tool{Path: "/root/venv/bin/cmake", Version: "4.1.2", VersionFrom: "dist-info", Via: "pip"}},
			searched: []string{"PATH: /usr/bin/gcc (absent)", "CUDAHOSTCXX=/opt/clang/bin/clang++: /opt/clang/bin/clang++ is not an executable file"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture.New(t.TempDir())
			tc.build(tr)
			if err := tr.Err(); err != nil {
				t.Fatal(err)
			}
			src, err := source.Root(tr.Root, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			got, warns := Collect(context.Background(), src, tc.pyenv, 0)
			searched := got.GCCSearched
			got.GCCSearched = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("toolchain (-want +got):\n%s", diff)
			}
			for _, s := range tc.searched {
				if !slices.Contains(searched, s) {
					t.Errorf("GCCSearched lacks %q; it is:\n%s", s, strings.Join(searched, "\n"))
				}
			}
			if len(warns) != tc.warns {
				t.Errorf("warnings = %q, want %d", warns, tc.warns)
			}
		})
	}
}

// On the live host gcc is asked its version, as `gcc -dumpfullversion` says.
func TestLiveHostGCC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed")
	}
	out, err := exec.Command(gcc, "-dumpfullversion").Output()
	if err != nil {
		t.Skipf("gcc -dumpfullversion: %v", err)
	}
	src, err := source.Host(source.ProcessEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	got, warns := Collect(context.Background(), src, nil, 0)
	if got.GCC == nil || got.GCC.Version != strings.TrimSpace(string(out)) || got.GCC.VersionFrom != "gcc -dumpfullversion" {
		t.Errorf("gcc = %+v, want version %q from gcc -dumpfullversion (warnings %q)", got.GCC, strings.TrimSpace(string(out)), warns)
	}
}
