package inspect

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// Caps on the RECORDs read to name a file's distribution: a folder being
// inspected is untrusted (an unpacked wheel, an image's site-packages). A
// RECORD is opened only if it is a regular file (a FIFO blocked inspect
// forever, /dev/zero fed it without end), at most maxRecordBytes of it is
// read, and a folder's RECORDs list at most maxRecordPaths paths (a big
// venv's site-packages holds about 100,000; 3 million lines took 700 MB).
const (
	maxRecordBytes = 64 << 20
	maxRecordPaths = 512 << 10
)

// distIndex says which installed Python distribution a file belongs to: the one
// whose *.dist-info/RECORD (paths relative to the folder holding the dist-info,
// site-packages or an unpacked wheel) lists it. Each folder's RECORDs are read once.
type distIndex struct {
	dirs map[string]map[string]string // folder -> path relative to it -> dist name
}

func newDistIndex() *distIndex { return &distIndex{dirs: map[string]map[string]string{}} }

// dist returns the distribution that installed path, or "" when no RECORD in a
// folder above it lists it.
func (x *distIndex) dist(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if rec := x.records(d); rec != nil {
			rel, err := filepath.Rel(d, abs)
			if err == nil {
				if n, ok := rec[filepath.ToSlash(rel)]; ok {
					return n
				}
			}
		}
		if p := filepath.Dir(d); p == d {
			return ""
		}
	}
}

// records reads the RECORD files of the dist-info folders directly in dir.
func (x *distIndex) records(dir string) map[string]string {
	if rec, ok := x.dirs[dir]; ok {
		return rec
	}
	var rec map[string]string
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		name, ok := strings.CutSuffix(de.Name(), ".dist-info")
		if !ok || !de.IsDir() {
			continue
		}
		dist, _, _ := strings.Cut(name, "-") // flashinfer_cubin-0.6.13
		f, _, err := source.OpenRegular(filepath.Join(dir, de.Name(), "RECORD"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(io.LimitReader(f, maxRecordBytes))
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			// path,sha256=...,size; a path with a comma is quoted (csv).
			line := sc.Text()
			var p string
			if strings.HasPrefix(line, `"`) {
				end := strings.Index(line[1:], `"`)
				if end < 0 {
					continue
				}
				p = line[1 : 1+end]
			} else {
				p, _, _ = strings.Cut(line, ",")
			}
			if p == "" || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
				continue
			}
			if rec == nil {
				rec = map[string]string{}
			}
			if len(rec) >= maxRecordPaths {
				break
			}
			rec[p] = dist
		}
		f.Close()
	}
	x.dirs[dir] = rec
	return rec
}
