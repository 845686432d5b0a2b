package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestIDsCurrent: internal/finding/ids.go is what the registry generates.
func TestIDsCurrent(t *testing.T) {
	want, err := render()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "ids.go"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("internal/finding/ids.go is out of date (%v): run go generate ./internal/finding", err)
	}
}
