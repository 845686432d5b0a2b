package torch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// FuzzTorchLibs feeds arbitrary bytes as libc10.so and libtorch_cuda.so:
// the collector may warn, never panic, and never claims an ABI or targets
// it did not read.
func FuzzTorchLibs(f *testing.F) {
	f.Add([]byte("\x7fELF\x02\x01\x01"), []byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, c10, cuda []byte) {
		// A header that makes a reader loop shows up as a crash, not a stall.
		wd := time.AfterFunc(3*time.Second, func() { panic("torch libraries: reading took over 3 s") })
		defer wd.Stop()
		root := t.TempDir()
		lib := filepath.Join(root, "torch", "lib")
		if err := os.MkdirAll(lib, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(lib, "libc10.so"), c10, 0o644)
		os.WriteFile(filepath.Join(lib, "libtorch_cuda.so"), cuda, 0o644)
		src, err := source.Root(root, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr := &facts.Torch{Lib: "/torch/lib"}
		collectCXX11ABI(src, tr)
		collectArchs(src, tr)
		if (tr.CXX11ABI == nil) != (tr.CXX11ABIFrom == "") {
			t.Errorf("ABI %v from %q", tr.CXX11ABI, tr.CXX11ABIFrom)
		}
		if len(tr.Archs) > 0 && len(tr.ArchLibs) == 0 {
			t.Errorf("targets %v from no library", tr.Archs)
		}
	})
}
