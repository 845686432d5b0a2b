package plan

import (
	"testing"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// FuzzParseLinks: index and find-links pages are untrusted input.
func FuzzParseLinks(f *testing.F) {
	f.Add([]byte(`<a href="../../files/x-1.0-py3-none-any.whl#sha256=aa">x</a>`))
	f.Add([]byte(`<A HREF='a.whl' data-x="&gt;">`))
	f.Add([]byte(`<a href=unquoted.whl>`))
	f.Add([]byte(`<a`))
	f.Add([]byte(`<a href="`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range parseLinks(b, "http://127.0.0.1/simple/x/") {
			if l.File == "" {
				t.Fatalf("empty file name from %q", b)
			}
		}
		_, _ = parseSimpleJSON(b, "http://127.0.0.1/simple/x/")
	})
}

// FuzzParseWheel: file names come from indexes and releases.
func FuzzParseWheel(f *testing.F) {
	f.Add(seedWheel)
	f.Add("a-1-py3-none-any.whl")
	f.Add("a-1-2-cp312-cp312-manylinux_2_28_x86_64.manylinux2014_x86_64.whl")
	f.Add("--.whl")
	f.Fuzz(func(t *testing.T, s string) {
		w, ok := ParseWheel(s)
		if ok {
			_ = w.FitFor(kb.WheelEnv{CUDAMajor: 12, TorchMM: "2.11", CXX11ABI: true, PyTag: "cp312"})
			_ = w.TorchMM()
		}
	})
}
