package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocsCurrent regenerates the CLI reference into a temporary folder and
// fails on every committed page that differs, is missing or is left over.
func TestDocsCurrent(t *testing.T) {
	tmp := t.TempDir()
	md, man := filepath.Join(tmp, "cli"), filepath.Join(tmp, "man")
	if err := generate(md, man); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join("..", "..", "..")
	for _, d := range []struct{ fresh, committed, ext, shown string }{
		{md, filepath.Join(repo, "docs", "cli"), ".md", "docs/cli/"},
		{man, filepath.Join(repo, "docs", "man"), ".1", "docs/man/"},
	} {
		want, got := pages(t, d.fresh, d.ext), pages(t, d.committed, d.ext)
		if len(want) < 10 {
			t.Fatalf("generated only %d pages into %s", len(want), d.fresh)
		}
		for name, w := range want {
			g, ok := got[name]
			switch {
			case !ok:
				t.Errorf("%s is missing: run go run ./internal/cli/gendoc", d.shown+name)
			case !bytes.Equal(g, w):
				t.Errorf("%s is out of date: run go run ./internal/cli/gendoc", d.shown+name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s documents no current command: run go run ./internal/cli/gendoc", d.shown+name)
			}
		}
	}
}

// TestExitStatusPageCurrent fails while docs/exit-status.md differs from
// what gendoc writes, or leaves out a command.
func TestExitStatusPageCurrent(t *testing.T) {
	want := exitStatusPage(rootCommand())
	got, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "exit-status.md"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("docs/exit-status.md is out of date (%v): run go run ./internal/cli/gendoc", err)
	}
	for _, c := range []string{"`fastpath doctor`", "`fastpath k8s manifest`", "`fastpath explain`", "`fastpath remote`"} {
		if !bytes.Contains(want, []byte("| "+c+" |")) {
			t.Errorf("the exit-status page has no row for %s", c)
		}
	}
}

// TestReferenceCoversCommands checks the generator against the command tree
// itself: every command a user can run has a Markdown page and a man page.
func TestReferenceCoversCommands(t *testing.T) {
	tmp := t.TempDir()
	if err := generate(filepath.Join(tmp, "cli"), filepath.Join(tmp, "man")); err != nil {
		t.Fatal(err)
	}
	md, man := pages(t, filepath.Join(tmp, "cli"), ".md"), pages(t, filepath.Join(tmp, "man"), ".1")
	names := []string{"fastpath"}
	root := rootCommand()
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		names = append(names, "fastpath "+c.Name())
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, "fastpath "+c.Name()+" "+sub.Name())
			}
		}
	}
	for _, want := range []string{"fastpath doctor", "fastpath completion bash", "fastpath completion zsh", "fastpath completion fish"} {
		if !slices.Contains(names, want) {
			t.Errorf("command tree lacks %q: %q", want, names)
		}
	}
	for _, n := range names {
		if _, ok := md[strings.ReplaceAll(n, " ", "_")+".md"]; !ok {
			t.Errorf("no Markdown page for %q", n)
		}
		if _, ok := man[strings.ReplaceAll(n, " ", "-")+".1"]; !ok {
			t.Errorf("no man page for %q", n)
		}
	}
	if doctor := string(md["fastpath_doctor.md"]); !strings.Contains(doctor, "--json") {
		t.Errorf("fastpath_doctor.md does not list doctor's flags:\n%s", doctor)
	}
}

// pages reads the files of dir ending in ext.
func pages(t *testing.T, dir, ext string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ext) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}
