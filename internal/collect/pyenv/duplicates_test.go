package pyenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// TestDuplicatesAndEggLinkMatchPipList lays out the listings pip has rules for, in a
// real venv, and holds PipListJSON to that venv's own pip: two dist-info folders of
// one project (dupe 1.0 and 2.0), the same project again as an egg-info (0.5) and
// under another spelling (Dupe 3.0), and a legacy editable project (an .egg-link plus
// easy-install.pth naming a folder that holds edpkg.egg-info).
func TestDuplicatesAndEggLinkMatchPipList(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a real venv with pip (ensurepip, slow): not under -short")
	}
	python := testenv.Python3(t)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	testenv.Run(t, nil, python, "-m", "venv", venv)
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages: %v", sites)
	}
	site := sites[0]
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := func(name, version string) string {
		return "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
	}
	write(filepath.Join(site, "dupe-1.0.dist-info", "METADATA"), meta("dupe", "1.0"))
	write(filepath.Join(site, "dupe-2.0.dist-info", "METADATA"), meta("dupe", "2.0"))
	write(filepath.Join(site, "Dupe-3.0.dist-info", "METADATA"), meta("Dupe", "3.0"))
	write(filepath.Join(site, "dupe-0.5.egg-info", "PKG-INFO"), meta("dupe", "0.5"))
	proj := filepath.Join(dir, "proj")
	write(filepath.Join(proj, "edpkg.egg-info", "PKG-INFO"), meta("edpkg", "0.1"))
	write(filepath.Join(site, "easy-install.pth"), proj+"\n")
	write(filepath.Join(site, "edpkg.egg-link"), proj+"\n.\n")
	assertPipList(t, filepath.Join(venv, "bin", "python"))
}
