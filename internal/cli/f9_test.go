package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// escapes are what a hostile image author puts in os-release and METADATA:
// clear the screen, retitle the terminal, set the clipboard (OSC 52), a C1
// CSI, a bidi override.
const escapes = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\u009b31m\u202e"

// rawControl reports the first raw control byte sequence in out, if any.
func rawControl(out string) string {
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e", "\r"} {
		if i := strings.Index(out, bad); i >= 0 {
			return out[max(0, i-40):min(len(out), i+40)]
		}
	}
	return ""
}

// F9: terminal escapes from untrusted input were printed raw by doctor
// (text, markdown, prom), packages, model, diff and `doctor --facts`.
func TestF9NoRawEscapesInAnyOutput(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "etc/os-release"), []byte("ID=ubuntu\nVERSION_ID=\"24.04\"\nPRETTY_NAME=\"Ubuntu "+escapes+"\"\n"), 0o644)
	sites, _ := filepath.Glob(filepath.Join(root, fixture.SeedVenv, "lib/python3*/site-packages"))
	if len(sites) != 1 {
		t.Fatalf("seed site-packages: %v", sites)
	}
	tr := fixture.New(root)
	tr.Dist(strings.TrimPrefix(sites[0], root), fixture.Dist{Name: "evil", Version: "1.0" + escapes})
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--root", root, "--env", fixture.SeedEnv[0], "--env", fixture.SeedEnv[1], "--env", fixture.SeedEnv[2]}
	for _, g := range fixture.SeedGPUs[:1] {
		flags = append(flags, "--gpu", g)
	}
	run := func(args ...string) string {
		var out, errb bytes.Buffer
		Main(args, strings.NewReader(""), &out, &errb)
		return out.String() + errb.String()
	}
	dir := t.TempDir()
	factsFile := filepath.Join(dir, "a.json")
	os.WriteFile(factsFile, []byte(run(append([]string{"facts"}, flags...)...)), 0o644)
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(run(append([]string{"doctor", "--json"}, flags...)...)), 0o644)
	cmds := [][]string{
		append([]string{"doctor"}, flags...),
		append([]string{"doctor", "--markdown"}, flags...),
		append([]string{"doctor", "--format", "prom"}, flags...),
		append([]string{"doctor", "--format", "nfd"}, flags...),
		append([]string{"doctor", "--json"}, flags...),
		append([]string{"facts"}, flags...),
		append([]string{"packages"}, flags...),
		append([]string{"model", fixture.SeedModel}, flags...),
		{"doctor", "--facts", factsFile},
		{"diff", factsFile, filepath.Join(dir, "b.json")},
		{"diff", "--markdown", factsFile, filepath.Join(dir, "b.json")},
		append([]string{"plan", "--offline"}, flags...),
	}
	shown := false
	for _, c := range cmds {
		out := run(c...)
		if s := rawControl(out); s != "" {
			t.Errorf("fastpath %s printed a raw control character: %q", strings.Join(c[:2], " "), s)
		}
		shown = shown || strings.Contains(out, `\u001b[2J`)
	}
	if !shown {
		t.Error("the escape was not shown in its visible form anywhere: was the hostile text read at all?")
	}
}
