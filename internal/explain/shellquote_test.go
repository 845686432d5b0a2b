package explain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// runExports runs each fix's export lines with /bin/sh in a fresh folder
// and reports whether the payload "$(touch${IFS}pwned)" created its file
// there: an export line only sets a variable, so running it is harmless
// unless a value taken from the log or the machine escaped its quoting.
func runExports(t *testing.T, fixes []finding.Fix) (ran int, pwned bool) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range fixes {
		for _, c := range f.Commands {
			if !strings.HasPrefix(c, "export ") {
				continue
			}
			cmd := exec.Command("/bin/sh", "-c", c)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Logf("%s: %v %s", c, err, out)
			}
			ran++
		}
	}
	_, err := os.Stat(filepath.Join(dir, "pwned"))
	return ran, err == nil
}

const shellPayload = "$(touch${IFS}pwned)"

// A log is untrusted: a CUDA_HOME it names (here ":/opt/x$(...)", a path
// list, which the fix turns into the folder meant) is a quoted word in the
// export line, never shell code. Before, explain printed
// `export CUDA_HOME=/opt/x$(touch${IFS}pwned)`.
func TestExplainExportQuotesCUDAHomeFromLog(t *testing.T) {
	log := "running build_ext\nsh: 1: :/opt/x" + shellPayload + "/bin/nvcc: not found\nerror: command failed\n"
	s, err := Default().Scan(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, nil)
	if len(fs) == 0 {
		t.Fatal("no finding")
	}
	txt := fixText(fs[0].Fixes)
	if !strings.Contains(txt, "export CUDA_HOME='/opt/x"+shellPayload+"'") {
		t.Errorf("the CUDA_HOME fix does not quote the log's path:\n%s", txt)
	}
	if ran, pwned := runExports(t, fs[0].Fixes); ran == 0 || pwned {
		t.Errorf("%d export lines run; the payload ran: %v\n%s", ran, pwned, txt)
	}
}

// The g++ path found on the diagnosed machine (a root or an image names
// its own) is quoted in the CC and CXX export lines.
func TestExplainExportQuotesCompilerPathFromFacts(t *testing.T) {
	log := corpusLog(t, "deepspeed-7143-gcc-too-old.log")
	s, err := Default().Scan(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	f := seedFacts(t)
	if f.Toolchain.GXX == nil {
		t.Fatal("the seed has no g++")
	}
	g := *f.Toolchain.GXX
	g.Path = "/opt/" + shellPayload + "/bin/g++"
	f.Toolchain.GXX = &g
	fs := Findings(s, f)
	if len(fs) == 0 {
		t.Fatal("no finding")
	}
	txt := fixText(fs[0].Fixes)
	if !strings.Contains(txt, "export CXX='/opt/"+shellPayload+"/bin/g++'") {
		t.Errorf("the compiler fix does not quote the machine's g++ path:\n%s", txt)
	}
	if ran, pwned := runExports(t, fs[0].Fixes); ran == 0 || pwned {
		t.Errorf("%d export lines run; the payload ran: %v\n%s", ran, pwned, txt)
	}
}

// A package name a log gives ("X was requested, but nvcc was not found")
// must be a distribution name: "--break-system-packages" or "--no-deps"
// there put an option on the printed pip line
// (`pip install --no-build-isolation --break-system-packages`).
func TestExplainPackageFromLogIsNeverAnOption(t *testing.T) {
	seed := seedFacts(t)
	for _, name := range []string{"--break-system-packages", "--no-deps", "-U", "mmcv-"} {
		log := "Building wheel\n" + name + " was requested, but nvcc was not found\nerror: failed\n"
		s, err := Default().Scan(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		fs := Findings(s, seed)
		if len(fs) == 0 {
			t.Fatalf("%s: no finding", name)
		}
		for _, f := range fs {
			for _, fx := range f.Fixes {
				for _, c := range fx.Commands {
					if strings.Contains(c, " "+strings.ToLower(name)) {
						t.Errorf("%s from the log reached a command: %s", name, c)
					}
				}
			}
		}
	}
	// A real name still does.
	s, err := Default().Scan(strings.NewReader("Building wheel\nmmcv was requested, but nvcc was not found\nerror: failed\n"))
	if err != nil {
		t.Fatal(err)
	}
	if txt := fixText(Findings(s, seed)[0].Fixes); !strings.Contains(txt, "--no-build-isolation mmcv") {
		t.Errorf("mmcv not rebuilt:\n%s", txt)
	}
}
