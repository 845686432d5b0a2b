package source

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"testing"
)

// BenchmarkReadDistInfo reads the five small files of 500 dist-info folders
// six levels down, as the Python collector does, through Root with each
// folder listed first (listed: the listing answers each open's type check,
// and the absent direct_url.json), through Root alone (kept folder
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
		list bool // list each folder first, as the Python collector does
	}{{"listed", Root, true}, {"fast", Root, false}, {"plain", RootPlain, false}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				src, err := c.open(dir, Env{})
				if err != nil {
					b.Fatal(err)
				}
				for i, n := range names {
					if c.list && i%6 == 0 {
						src.ReadDir(path.Dir(n))
					}
					ReadFile(src, n, 1<<16)
				}
				src.(*dirSource).dirs.closeAll()
			}
		})
	}
}
