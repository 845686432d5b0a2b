package torch

import (
	"slices"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// TestMissingLibraries lays out torch 2.15's import closure the way its real wheel
// does (DT_NEEDED and RUNPATH as `readelf -d` shows them on torch-2.15.0-cp311
// manylinux_2_28_x86_64) with one nvidia library absent: only that one is missing.
// libcudnn.so.9 is there under another minor (libcudnn.so.9.26.0 only), which torch's
// _preload_cuda_deps glob finds; libc.so.6 and libcuda.so.1 are not judged.
func TestMissingLibraries(t *testing.T) {
	root := t.TempDir()
	runpath := "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib:$ORIGIN/../../nvidia/cu13/lib:$ORIGIN"
	so := func(needed ...string) string {
		return string(fixture.SharedObject{Needed: needed, RunPath: runpath}.Bytes())
	}
	tr := fixture.New(root).
		File(site+"/torch/version.py", "__version__ = '2.15.0+cu132'\ncuda = '13.2'\n").
		File(site+"/torch/_C.cpython-311-x86_64-linux-gnu.so", string(fixture.SharedObject{Needed: []string{"libtorch_python.so"}, RunPath: "$ORIGIN/lib"}.Bytes())).
		File(site+"/torch/lib/libtorch_global_deps.so", so("libcudart.so.13", "libc.so.6")).
		File(site+"/torch/lib/libtorch_python.so", so("libtorch_cuda.so", "libc.so.6")).
		File(site+"/torch/lib/libtorch_cuda.so", so("libcublasLt.so.13", "libcudart.so.13", "libcudnn.so.9", "libnccl.so.2", "libcuda.so.1")).
		File(site+"/torch/lib/libcaffe2_nvrtc.so", so("libnvrtc.so.13")). // dlopened later: not judged
		File(site+"/nvidia/cu13/lib/libcudart.so.13", so()).
		File(site+"/nvidia/nccl/lib/libnccl.so.2", so()).
		File(site+"/nvidia/cudnn/lib/libcudnn.so.9.26.0", so()).
		File(site+"/nvidia/cu13/lib/libcublasLt.so.13.moved", so()) // not a version: torch's glob skips it
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	tt, _ := Collect(src, venvEnv(site))
	if tt == nil {
		t.Fatal("no torch")
	}
	if len(tt.MissingLibraries) != 1 || tt.MissingLibraries[0].Name != "libcublasLt.so.13" {
		t.Fatalf("missing %+v (checked %d, lib %q)", tt.MissingLibraries, tt.LibrariesChecked, tt.Lib)
	}
	m := tt.MissingLibraries[0]
	if !slices.Equal(m.NeededBy, []string{site + "/torch/lib/libtorch_cuda.so"}) || !slices.Contains(m.Searched, site+"/nvidia/cu13/lib") {
		t.Errorf("missing %+v", m)
	}
	if tt.LibrariesChecked < 6 {
		t.Errorf("%d libraries checked", tt.LibrariesChecked)
	}
}
