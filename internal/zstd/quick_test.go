package zstd

import (
	"bytes"
	"io"
	"os"
	"testing"
)

func TestQuickFile(t *testing.T) {
	comp, err := os.ReadFile(os.Getenv("ZF"))
	if err != nil {
		t.Skip(err)
	}
	want, _ := os.ReadFile(os.Getenv("ZO"))
	r, _ := NewReader(bytes.NewReader(comp), 64<<20)
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		n := 0
		for n < len(got) && n < len(want) && got[n] == want[n] {
			n++
		}
		t.Fatalf("mismatch: got %d want %d, first diff at %d", len(got), len(want), n)
	}
}
