package source

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReadDistInfo reads the five small files of 500 dist-info folders
// six levels down, as the Python collector does, through Root (kept folder
// handles, one lstat of the final component) and through RootPlain (every
// path walked from the top by os.Root), with allocations:
//
//	go test ./internal/source -run '^$' -bench ReadDistInfo -benchmem
func BenchmarkReadDistInfo(b *testing.B) {
	dir := b.TempDir()
	const site = "root/venv/lib/python3.12/site-packages"
	var names []string
	for i := range 500 {
		d := fmt.Sprintf("%s/pkg_%03d-1.0.dist-info", site, i)
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
		for _, f := range []string{"METADATA", "INSTALLER", "WHEEL", "RECORD", "top_level.txt"} {
			if err := os.WriteFile(filepath.Join(dir, d, f), []byte("Name: pkg\nVersion: 1.0\n\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			names = append(names, "/"+d+"/"+f)
		}
		names = append(names, "/"+d+"/direct_url.json") // absent, as it mostly is
	}
	for _, c := range []struct {
		name string
		open func(string, Env) (Source, error)
	}{{"fast", Root}, {"plain", RootPlain}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				src, err := c.open(dir, Env{})
				if err != nil {
					b.Fatal(err)
				}
				for _, n := range names {
					ReadFile(src, n, 1<<16)
				}
				src.(*dirSource).dirs.closeAll()
			}
		})
	}
}
