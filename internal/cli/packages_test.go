package cli

import (
	"bytes"
	"context"
	"github.com/fastpath-dev/fastpath/internal/testenv"
	"os/exec"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/pyenv/pyenvtest"
	"github.com/fastpath-dev/fastpath/internal/fixture"
)

func runPackages(t *testing.T, o *PackagesOptions) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := RunPackages(context.Background(), o, &IO{Out: &out, Err: &errb}); err != nil {
		t.Fatalf("packages: %v (%s)", err, errb.String())
	}
	return out.String()
}

// `packages --json --python P` prints what `P -m pip list --format=json` prints.
func TestPackagesJSONMatchesPipList(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pip list (seconds of CPU): not under -short")
	}
	py := testenv.Python3(t)
	real := strings.TrimSpace(testenv.Run(t, nil, py, "-c", "import sys; print(sys.executable)"))
	pythons := []string{real}
	if err := exec.Command("/usr/bin/python3", "-m", "pip", "--version").Run(); err == nil && real != "/usr/bin/python3" {
		pythons = append(pythons, "/usr/bin/python3")
	}
	for _, p := range pythons {
		got := runPackages(t, &PackagesOptions{Source: SourceFlags{Python: p}, Output: Output{JSON: true}})
		if want := string(pyenvtest.PipList(t, p)); got != want {
			t.Errorf("packages --json --python %s\n got %s\nwant %s", p, got, want)
		}
	}
}

func TestNetworkPackagesJSONMatchesPipListInVenv(t *testing.T) {
	p := pyenvtest.Venv(t)
	got := runPackages(t, &PackagesOptions{Source: SourceFlags{Python: p}, Output: Output{JSON: true}})
	if want := string(pyenvtest.PipList(t, p)); got != want {
		t.Errorf("packages --json --python %s\n got %s\nwant %s", p, got, want)
	}
}

// The table names each distribution with its location, or its project
// folder for an editable install, under a root.
func TestPackagesTableUnderRoot(t *testing.T) {
	dir := t.TempDir()
	tr := fixture.New(dir)
	tr.PythonInstall("/usr", "3.12.3", true)
	v := tr.Venv("/root/venv", "/usr", "3.12.3", fixture.VenvOptions{Pip: true})
	tr.Dist(v.SitePackages(), fixture.Dist{Name: "Fla_Core", Version: "0.4.1", Editable: "/src/fla"})
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	got := runPackages(t, &PackagesOptions{Source: SourceFlags{Root: dir, Env: []string{"PATH=/root/venv/bin:/usr/bin"}}})
	want := "Package  Version Location\n" +
		"Fla_Core 0.4.1   /src/fla\n" +
		"pip      24.0    /root/venv/lib/python3.12/site-packages\n"
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	got = runPackages(t, &PackagesOptions{Source: SourceFlags{Root: dir, Env: []string{"PATH=/root/venv/bin:/usr/bin"}}, Output: Output{JSON: true}})
	if want := `[{"name": "Fla_Core", "version": "0.4.1", "editable_project_location": "/src/fla"}, {"name": "pip", "version": "24.0"}]` + "\n"; got != want {
		t.Errorf("json\n got %s\nwant %s", got, want)
	}
}
