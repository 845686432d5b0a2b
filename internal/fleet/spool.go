package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// Slim is d with only what the comparison (the extractors and Packages)
// and the remote report read: the identity facts, the selected
// environment's version and its KernelPackages distributions (a real
// environment lists hundreds, most of a report's bytes), and each
// finding's id, severity and title.
func Slim(d *diagnose.Doctor) *diagnose.Doctor {
	out := &diagnose.Doctor{Schema: d.Schema, Models: d.Models}
	for _, fd := range d.Findings {
		out.Findings = append(out.Findings, finding.Finding{ID: fd.ID, Severity: fd.Severity, Title: fd.Title})
	}
	if d.Facts == nil {
		return out
	}
	in := d.Facts
	f := &facts.Facts{Schema: in.Schema, Tool: in.Tool, OS: in.OS, Torch: in.Torch, GPU: in.GPU}
	f.CUDA.Compilers, f.CUDA.TorchHome = in.CUDA.Compilers, in.CUDA.TorchHome
	f.Toolchain.GCC = in.Toolchain.GCC
	if sel := in.Python.Selected; sel != nil {
		want := map[string]bool{}
		for _, p := range KernelPackages() {
			want[p] = true
		}
		slim := &facts.PythonEnv{Version: sel.Version}
		for _, dist := range sel.Distributions {
			if want[Normalize(dist.Name)] {
				slim.Distributions = append(slim.Distributions, dist)
			}
		}
		f.Python.Selected = slim
	}
	out.Facts = f
	return out
}

// Spool keeps full doctor reports on disk, one file per target, so that a
// run over many targets holds only slim ones in memory.
type Spool struct{ dir string }

// NewSpool makes a private folder under the system's temporary folder.
func NewSpool() (*Spool, error) {
	dir, err := os.MkdirTemp("", "fastpath-remote-")
	if err != nil {
		return nil, err
	}
	return &Spool{dir: dir}, nil
}

func (s *Spool) path(i int) string { return filepath.Join(s.dir, strconv.Itoa(i)+".json") }

// Put stores target i's report.
func (s *Spool) Put(i int, d *diagnose.Doctor) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return os.WriteFile(s.path(i), b, 0o600)
}

// Get reads target i's report back; nil when none was stored.
func (s *Spool) Get(i int) (*diagnose.Doctor, error) {
	b, err := os.ReadFile(s.path(i))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d diagnose.Doctor
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("spooled report %d: %w", i, err)
	}
	return &d, nil
}

// Remove deletes the spool.
func (s *Spool) Remove() error { return os.RemoveAll(s.dir) }

// WriteJSON writes the report as report.JSON would, one target at a time:
// full(i), when set, gives target i's full doctor report in place of the
// one held (nil: keep it), so that memory holds one full report at most.
func (r *Report) WriteJSON(w io.Writer, full func(i int) (*diagnose.Doctor, error)) error {
	ew := &errWriter{w: w}
	enc := func(v any, prefix string) []byte {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetIndent(prefix, "  ")
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil && ew.err == nil {
			ew.err = err
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	ew.printf("{\n  \"schema\": %s,\n  \"targets\": [", enc(r.Schema, ""))
	for i := range r.Targets {
		t := r.Targets[i]
		if full != nil {
			d, err := full(i)
			if err != nil {
				return err
			}
			if d != nil {
				t.Doctor = d
			}
		}
		sep := ","
		if i == 0 {
			sep = ""
		}
		ew.printf("%s\n    %s", sep, enc(t, "    "))
	}
	if len(r.Targets) > 0 {
		ew.printf("\n  ")
	}
	ew.printf("],\n  \"diff\": %s\n}\n", enc(r.Diff, "  "))
	return ew.err
}
