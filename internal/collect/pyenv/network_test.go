package pyenv

import (
	"context"
	"github.com/fastpath-dev/fastpath/internal/testenv"
	"os/exec"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/pyenv/pyenvtest"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// assertPipList checks PipListJSON for python against pip's own output.
func assertPipList(t *testing.T, python string) {
	t.Helper()
	src, err := source.Host(source.ProcessEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	py, warnings := Collect(context.Background(), src, python)
	if py.Selected == nil {
		t.Fatalf("no environment selected for %q; resolution %q, warnings %q", python, py.Resolution, warnings)
	}
	oracle := "python3"
	if python != "" {
		oracle = python
	}
	want := pyenvtest.PipList(t, oracle)
	got := append(PipListJSON(py.Selected), '\n')
	if string(got) != string(want) {
		t.Errorf("PipListJSON(%s) differs from pip list:\n got: %s\nwant: %s\nresolution: %q\nsite path: %q",
			python, got, want, py.Resolution, py.Selected.SitePath)
	}
	if strings.Count(string(want), `"name"`) < 1 {
		t.Errorf("pip list of %s lists nothing: the comparison proves little", python)
	}
}

// The machine's own python3 (pyenv here): read without running it.
func TestHostPython3MatchesPipList(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pip list (seconds of CPU): not under -short")
	}
	testenv.Python3(t)
	assertPipList(t, "")
}

// The distribution's /usr/bin/python3 where it has pip (Debian's layout).
func TestSystemPython3MatchesPipList(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pip list (seconds of CPU): not under -short")
	}
	if err := exec.Command("/usr/bin/python3", "-m", "pip", "--version").Run(); err != nil {
		t.Skip("/usr/bin/python3 has no pip here")
	}
	assertPipList(t, "/usr/bin/python3")
}

func TestNetworkVenvMatchesPipList(t *testing.T) {
	py := pyenvtest.Venv(t)
	assertPipList(t, py)
	checkSpecimens(t, py, "venv")
}

func TestNetworkUVVenvMatchesPipList(t *testing.T) {
	py := pyenvtest.UVVenv(t)
	assertPipList(t, py)
	checkSpecimens(t, py, "uv")
}

// checkSpecimens checks the facts beyond pip list: the kind, the editable
// project, the sdist build, a wheel's tags.
func checkSpecimens(t *testing.T, python, kind string) {
	t.Helper()
	src, _ := source.Host(source.ProcessEnv(nil))
	py, _ := Collect(context.Background(), src, python)
	e := py.Selected
	if e.Kind != kind {
		t.Errorf("kind %q, want %q", e.Kind, kind)
	}
	byName := map[string]int{}
	for i, d := range e.Distributions {
		byName[canonicalize(d.Name)] = i
	}
	for _, n := range []string{"six", "docopt", "transformers", "flash-linear-attention", "fp-local-proj"} {
		if _, ok := byName[n]; !ok {
			t.Errorf("%s not found among %d distributions", n, len(e.Distributions))
		}
	}
	if i, ok := byName["fp-local-proj"]; ok {
		d := e.Distributions[i]
		if !d.Editable || !strings.HasSuffix(d.EditableLocation, "/my proj é") {
			t.Errorf("editable project: editable=%v location %q", d.Editable, d.EditableLocation)
		}
	}
	if i, ok := byName["six"]; ok {
		d := e.Distributions[i]
		if len(d.Tags) == 0 || d.Files == 0 || d.Installer == "" {
			t.Errorf("six: tags %q files %d installer %q", d.Tags, d.Files, d.Installer)
		}
	}
}
