package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCudnnVersion reads the versions torch prints in its cuDNN check:
// the tuple since torch 1.12 and the CUDNN_VERSION integer of torch
// 1.0-1.4 (MAJOR*1000+MINOR*100+PATCHLEVEL before cuDNN 9,
// MAJOR*10000+MINOR*100+PATCHLEVEL from cuDNN 9: cudnn_version.h).
func TestCudnnVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"8, 7, 0", "8.7.0"},
		{"9, 19, 0", "9.19.0"},
		{"7102", "7.1.2"},
		{"7605", "7.6.5"},
		{"8907", "8.9.7"},
		{"90100", "9.1.0"},
		{"91002", "9.10.2"},
		{"8", "8"},
	} {
		if got := cudnnVersion(c.in); got != c.want {
			t.Errorf("cudnnVersion(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCorpusTitles checks the first finding's title on real logs of the
// corpus where the title itself was wrong: cuDNN versions quoted raw, and
// "an extension" where the log names the one it is.
func TestCorpusTitles(t *testing.T) {
	for _, c := range []struct{ file, want, not string }{
		// sgl-project/sglang#8432: no module path; the listing names sgl_kernel.
		{"sglang-8432-cugreenctxdestroy-driver-535.log", "sgl-kernel calls the CUDA driver function cuGreenCtxDestroy", "an extension"},
		// xingyizhou/CenterNet#119: torch 1.x's CUDNN_VERSION integers.
		{"centernet-119-cudnn-version-mismatch-7102.log", "cuDNN 7.1.2 but loaded cuDNN 7.6.5", "7102"},
		// akanimax/T2F#6
		{"t2f-6-cudnn-7401-linked-7301.log", "cuDNN 7.4.1 but loaded cuDNN 7.3.1", "7401"},
		// bmaltais/kohya_ss#1096: torch >= 1.12's tuples.
		{"kohya-ss-1096-cudnn-ld-library-path.log", "cuDNN 8.7.0 but loaded cuDNN 8.2.4", "(8, 7, 0)"},
	} {
		fh, err := os.Open(filepath.Join("testdata/corpus", c.file))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Default().Scan(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		fs := Findings(s, nil)
		if len(fs) == 0 {
			t.Errorf("%s: no finding", c.file)
			continue
		}
		if !strings.Contains(fs[0].Title, c.want) || strings.Contains(fs[0].Title, c.not) {
			t.Errorf("%s: title %q, want %q and not %q", c.file, fs[0].Title, c.want, c.not)
		}
	}
}

// TestExtDistAmbiguous: a log naming two compiled extensions names
// neither.
func TestExtDistAmbiguous(t *testing.T) {
	var lf LogFacts
	lf.record("ext_dist", "sgl_kernel", 1)
	if lf.ExtDist == nil || lf.ExtDist.Value != "sgl-kernel" {
		t.Fatalf("one listing: %+v", lf.ExtDist)
	}
	lf.record("ext_dist2", "sgl_kernel", 5)
	if lf.ExtDist == nil {
		t.Fatal("the same distribution twice made it ambiguous")
	}
	lf.record("ext_dist", "vllm", 9)
	if lf.ExtDist != nil {
		t.Errorf("two distributions named, still %+v", lf.ExtDist)
	}
	lf.record("ext_dist", "xformers", 12)
	if lf.ExtDist != nil {
		t.Errorf("a third one brought back %+v", lf.ExtDist)
	}
}
