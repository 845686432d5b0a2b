package explain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// The block scan (Scan) must give what the line-by-line scan (refScan,
// the plain reference: every line normalized and matched) gives, on every
// log: the same hits with the same text, captures, packages and frames,
// the same counts, facts and totals. These tests and FuzzBlockScan hold
// it to that.

// blockSizes are the sizes the block scan is compared at: the real ones,
// and small ones that put block boundaries and overlong lines everywhere
// (the reference then cuts lines at the same small maxLine).
var blockSizes = []struct{ size, maxLine, maxCands int }{
	{blockSize, MaxLine, maxAnalyzed},
	{4096, 1024, 4096},
	{4096, 1024, 3},
	{1024, 256, 8},
	{200, 64, 1},
	{40, 16, 2},
	{17, 16, 1},
}

// sameScan scans log both ways at one size and reports any difference.
func sameScan(t testing.TB, name string, log []byte, size, maxLine, maxCands int, wrap func(io.Reader) io.Reader) {
	t.Helper()
	if wrap == nil {
		wrap = func(r io.Reader) io.Reader { return r }
	}
	m := Default()
	want, wantErr := refScan(m, wrap(bytes.NewReader(log)), maxLine, nil)
	got, gotErr := m.scanBlocksSized(wrap(bytes.NewReader(log)), size, maxLine, maxCands)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%s (block %d, line %d): error %v, want %v", name, size, maxLine, gotErr, wantErr)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s (block %d, line %d): block scan differs from line scan (-line +block):\n%s", name, size, maxLine, d)
	}
	// And the line-by-line scan --follow runs (scanLines: the same
	// analysis and state as the block scan, one line at a time).
	lines, linesErr := m.scanLinesSized(wrap(bytes.NewReader(log)), maxLine, func(*Scan, *Hit) {})
	if fmt.Sprint(wantErr) != fmt.Sprint(linesErr) {
		t.Fatalf("%s (line %d): scanLines error %v, want %v", name, maxLine, linesErr, wantErr)
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Fatalf("%s (line %d): scanLines differs from the reference (-reference +scanLines):\n%s", name, maxLine, d)
	}
}

// realLogs are the corpus of real logs and the hand-written ones.
func realLogs(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range []string{"testdata/corpus", "testdata/logs"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".log") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Join(dir, e.Name())] = b
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d logs found", len(out))
	}
	return out
}

// Every real log, at every block size: the same scan.
func TestBlockScanMatchesLineScan(t *testing.T) {
	logs := realLogs(t)
	hits := 0
	for name, log := range logs {
		for _, bs := range blockSizes {
			sameScan(t, name, log, bs.size, bs.maxLine, bs.maxCands, nil)
		}
		s, _ := Default().Scan(bytes.NewReader(log))
		hits += len(s.Hits)
	}
	// The comparison means something only if the logs hit.
	if hits < 100 {
		t.Errorf("only %d hits in %d logs", hits, len(logs))
	}
}

// The real logs joined into one (many blocks), and read in odd pieces: one
// byte at a time, half reads, an error after 100,000 bytes. (An error
// after a number of reads would come after a different number of bytes:
// the two read in different sizes.)
func TestBlockScanReaders(t *testing.T) {
	var all []byte
	for _, log := range realLogs(t) {
		all = append(all, log...)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    nil,
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"error": func(r io.Reader) io.Reader {
			return io.MultiReader(io.LimitReader(r, 100_000), iotest.ErrReader(errors.New("disk gone")))
		},
	}
	for name, wrap := range readers {
		for _, bs := range blockSizes {
			if name == "one byte" && bs.size < 4096 {
				continue // slow, and nothing the other sizes do not cover
			}
			sameScan(t, name, all, bs.size, bs.maxLine, bs.maxCands, wrap)
		}
	}
}

// The cases the block scan treats apart: lines the normalizer rewrites, a
// message continued on the next line across a block boundary, overlong
// lines at a boundary and at the end, logs with no newline at all.
func TestBlockScanEdges(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("x", n) }
	cases := map[string]string{
		"empty":         "",
		"newlines":      "\n\n\n",
		"no newline":    "NameError: name 'bare_metal_version' is not defined",
		"escape splits": "\x1b[31mNameError\x1b[0m: name 'bare_metal_version' is not defined\n",
		"remnant split": "[0;31mNameError[0m: name 'bare_metal_version' is not defined\n",
		"progress bar":  "NameError: name 'bare_me\rNameError: name 'bare_metal_version' is not defined\n",
		"crlf":          "ok\r\nNameError: name 'bare_metal_version' is not defined\r\n\r\n",
		"continued at boundaries": strings.Repeat(pad(37)+"\n", 3) +
			"RuntimeError: The detected CUDA version (12.1) mismatches the version that was used to compile\n" +
			"PyTorch (11.8). Please make sure to use the same CUDA versions.\n",
		"long at eof":   pad(70) + "NameError: name 'bare_metal_version' is not defined",
		"long exactly":  pad(63) + "\n" + pad(64) + "\n" + pad(65) + "\n" + pad(1023) + "\n" + pad(1024) + "\n" + pad(1025) + "\nc++: fatal error: Killed signal terminated program cc1plus\n",
		"long then hit": pad(5000) + "\nc++: fatal error: Killed signal terminated program cc1plus\n",
		"single bytes":  "\x1b\n\r\n[1m\n\x1b",
		"frames far above": strings.Repeat("  File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 12, in f\n", 20) +
			strings.Repeat("noise\n", 45) + "  File \"/x/y.py\", line 1, in g\n" + strings.Repeat("noise\n", 14) +
			"ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n" +
			strings.Repeat("  File \"/z.py\", line 1, in h\n", 3) + strings.Repeat("noise\n", 57) + strings.Repeat("  File \"/w.py\", line 1, in h\n", 3) +
			"ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n",
		"frames": strings.Repeat("  File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line 12, in f\n", 20) +
			"ImportError: /venv/lib/python3.12/site-packages/causal_conv1d_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n",
	}
	for name, log := range cases {
		for _, bs := range blockSizes {
			sameScan(t, name, []byte(log), bs.size, bs.maxLine, bs.maxCands, nil)
			// And at every offset of a boundary.
			for shift := range min(bs.size, 80) {
				sameScan(t, name, []byte(pad(shift)+"\n"+log), bs.size, bs.maxLine, bs.maxCands, nil)
			}
		}
	}
}

// Traceback frames count for a hit only within frameWindow lines above it,
// and the block scan matches frames only there (or near a block's end):
// frames every 13 lines, hits every 83, so that hits see frames at every
// distance, 60 and 61 lines included, across block boundaries.
func TestBlockScanFramesNearHits(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		switch {
		case i%166 == 0:
			b.WriteString("NameError: name 'bare_metal_version' is not defined\n")
		case i%83 == 0:
			b.WriteString("c++: fatal error: Killed signal terminated program cc1plus\n")
		case i%13 == 0:
			fmt.Fprintf(&b, "  File \"/f/%d.py\", line 1, in g\n", i)
		default:
			fmt.Fprintf(&b, "step %d\n", i)
		}
	}
	frames := 0
	s, _ := Default().Scan(strings.NewReader(b.String()))
	for _, h := range s.Hits {
		frames += len(h.Frames)
	}
	if frames < 50 {
		t.Fatalf("only %d frames in the hits", frames)
	}
	for _, bs := range blockSizes {
		sameScan(t, "frames", []byte(b.String()), bs.size, bs.maxLine, bs.maxCands, nil)
	}
}

// The 50 MB log of BenchmarkExplain50MB: the same scan.
func TestBlockScanBigLog(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB log: skipped with -short")
	}
	data := (&bigLog{size: 50 << 20}).bytes()
	sameScan(t, "50 MB", data, blockSize, MaxLine, maxAnalyzed, nil)
	sameScan(t, "50 MB", data, 100_000, 1000, 50, nil)
}

// FuzzBlockScan: on any input, at any of the block sizes, the block scan
// gives the line-by-line scan's result.
func FuzzBlockScan(f *testing.F) {
	for _, b := range corpusSeeds(f) {
		f.Add(b, uint8(0))
		f.Add(b, uint8(3))
	}
	entries, _ := os.ReadDir("testdata/logs")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("testdata/logs", e.Name())); err == nil {
			f.Add(b, uint8(2))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		bs := blockSizes[int(which)%len(blockSizes)]
		sameScan(t, "fuzz", data, bs.size, bs.maxLine, bs.maxCands, nil)
	})
}
