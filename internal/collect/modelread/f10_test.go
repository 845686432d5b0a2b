package modelread

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// F10: `model /etc/shadow --root R` read the host's file when R lacked it.
// Under a root an absolute path must be read there or not at all.
func TestF10ModelAbsPathNeverFallsBackToHost(t *testing.T) {
	host := t.TempDir()
	const canary = "HOSTCANARY10"
	hostCfg := filepath.Join(host, "config.json")
	if err := os.WriteFile(hostCfg, []byte(`{"model_type":"llama","note":"`+canary+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := source.Root(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Locate(root, hostCfg)
	if err == nil {
		t.Fatalf("Locate(%s) under a root lacking it read %s (%q)", hostCfg, l.Path, l.Data)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("error shows host content: %v", err)
	}
	// On the host the same path is read, as before.
	h, err := source.Host(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Locate(h, hostCfg); err != nil {
		t.Errorf("Locate on the host: %v", err)
	}
}

// A config.json with anything after its object is not a config.json.
func TestModelConfigTrailingGarbageRefused(t *testing.T) {
	for _, b := range []string{
		`{"model_type":"llama"}garbage`,
		`{"model_type":"llama"} {"model_type":"bert"}`,
		`{"model_type":"llama"}]`,
		`{"model_type":"llama"}` + "\x00",
	} {
		if _, err := ParseConfig([]byte(b)); err == nil {
			t.Errorf("ParseConfig(%q) accepted trailing data", b)
		}
	}
	if _, err := ParseConfig([]byte("{\"model_type\":\"llama\"}\n\t \n")); err != nil {
		t.Errorf("trailing white space refused: %v", err)
	}
}
