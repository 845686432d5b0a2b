package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelUnknownFamilyText: a family fastpath does not know (rwkv, from
// transformers 5.24.0's RwkvConfig) has no source for its layer kinds: the
// config line names the file without an empty "()" after it.
func TestModelUnknownFamilyText(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "model", "testdata", "real-configs", "rwkv-default-5.24.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() // the --root: an empty machine, the config inside it
	if err := os.WriteFile(filepath.Join(dir, "config.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	root := NewRootCommand(&IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	root.SetArgs([]string{"model", "/config.json", "--root", dir, "--gpu", "9.0"})
	root.SetOut(&out)
	root.SetErr(&errOut)
	err = root.Execute() // exit status 1: not judged
	got := out.String()
	if !strings.Contains(got, "rwkv, 32 layers") || !strings.Contains(got, "model-not-judged") {
		t.Fatalf("rwkv (%v):\n%s\n%s", err, got, errOut.String())
	}
	if strings.Contains(got, "()") || strings.Contains(got, "(;") {
		t.Errorf("empty parentheses:\n%s", got)
	}
}
