package explain

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// noiseLines are what a long build or training log is mostly made of.
var noiseLines = []string{
	"      [%d/4211] /usr/local/cuda-12.8/bin/nvcc -c csrc/flash_attn/src/flash_fwd_hdim128_bf16_sm80.cu -o build/temp/flash_fwd_%d.o -O3 -std=c++17 --threads 4 -gencode arch=compute_90,code=sm_90\n",
	"[rank0]: step %d/100000 loss 2.%04d lr 1.0e-05 (0.48 s/step)\n",
	"      /tmp/pip-install-3j2k/csrc/selective_scan/selective_scan_fwd_kernel.cuh(%d): warning #177-D: variable \"kNRows\" was declared but never referenced\n",
	"INFO 11-28 09:14:%02d [engine.py:%d] Avg prompt throughput: 1523.4 tokens/s, Avg generation throughput: 88.1 tokens/s, Running: 12 reqs\n",
	"  File \"/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py\", line %d, in _call_impl (frame %d)\n",
}

// bigLog is a log of about size bytes: noise with a few real failures,
// placed at known lines. It is written to w as it is generated.
type bigLog struct {
	size      int
	wantLines map[string]int // signature text -> line number it was placed on
}

const (
	sigNameError = "      NameError: name 'bare_metal_version' is not defined\n"
	sigOOM       = "      nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n"
	sigFallback  = "[transformers] `chunk_gated_delta_rule` is falling back to its reference PyTorch implementation because `flash-linear-attention` is not installed. This is correct but much slower; install `flash-linear-attention` for the optimized kernel.\n"
)

func (b *bigLog) bytes() []byte {
	var buf bytes.Buffer
	buf.Grow(b.size + 1024)
	b.wantLines = map[string]int{}
	line := 0
	place := map[int]string{1000: sigFallback, 250000: sigOOM, 350000: sigNameError}
	for buf.Len() < b.size {
		line++
		if s, ok := place[line]; ok {
			buf.WriteString(s)
			b.wantLines[s] = line
			continue
		}
		fmt.Fprintf(&buf, noiseLines[line%len(noiseLines)], line, line%9973)
	}
	return buf.Bytes()
}

// BenchmarkExplain: a 50 MB and a 1 MB log with three failures among the
// noise, scanned and explained (no facts), both ways in one run: "lines"
// is the line-by-line scan (the reference, what Scan was before),
// "blocks" the block scan Scan runs now. Reports MB/s and allocations:
//
//	go test ./internal/explain -run '^$' -bench Explain -benchtime 10x
func BenchmarkExplain(b *testing.B) {
	for _, size := range []int{50 << 20, 1 << 20} {
		lg := &bigLog{size: size}
		data := lg.bytes()
		want := 3
		if size < 50<<20 {
			want = 1 // the small log ends before the build failures
		}
		for _, way := range []struct {
			name string
			scan func(*Matcher, io.Reader) (*Scan, error)
		}{
			{"lines", func(m *Matcher, r io.Reader) (*Scan, error) { return refScan(m, r, MaxLine, nil) }},
			{"blocks", (*Matcher).Scan},
		} {
			b.Run(fmt.Sprintf("%dMB/%s", size>>20, way.name), func(b *testing.B) {
				m := Default()
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				cpu0 := cpuTime()
				for b.Loop() {
					s, err := way.scan(m, bytes.NewReader(data))
					if err != nil {
						b.Fatal(err)
					}
					if fs := Findings(s, nil); len(fs) != want {
						b.Fatalf("findings: %v", ids(fs))
					}
				}
				// CPU time (user+sys, all threads) per scan: on a loaded
				// machine wall time says little; this says what it costs.
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
			})
		}
	}
}

// BenchmarkFindCandidates: the workers' first pass alone (the byte-pair
// anchor search for candidate lines) over the 50 MB log, on one core.
func BenchmarkFindCandidates(b *testing.B) {
	data := (&bigLog{size: 50 << 20}).bytes()
	c := Default().candidates()
	b.SetBytes(int64(len(data)))
	var out []lineSpan
	cpu0 := cpuTime()
	for b.Loop() {
		out, _ = c.find(data, out[:0], len(data))
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
	b.ReportMetric(float64(len(out)), "lines")
}

// A 50 MB log streamed through explain: the failures are found on the
// lines they were written to, root cause first, and the heap does not grow
// with the log (it is never held whole: the reader hands out 64 KiB at a time).
func TestBigLogBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB log: skipped with -short")
	}
	if raceEnabled {
		t.Skip("measures memory: the race detector's shadow memory makes the numbers meaningless")
	}
	lg := &bigLog{size: 50 << 20}
	data := lg.bytes()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Default().Scan(onlyReader{bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Everything allocated while scanning, garbage or not: a scan that
	// copied the log, or each line, would allocate 50 MB or more.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("scanning 50 MB allocated %d MB; want < 8 MB", alloc>>20)
	}
	fs := Findings(s, nil)
	want := []finding.ID{finding.NoCUDACompiler, finding.BuildOutOfMemory, finding.FastPathFallback}
	if !slices.Equal(ids(fs), want) {
		t.Fatalf("ids = %v, want %v", ids(fs), want)
	}
	for _, f := range fs {
		for sig, line := range lg.wantLines {
			if strings.Contains(strings.Join(f.Evidence, "\n"), strings.TrimSpace(sig)) && !slices.Contains(f.Lines, line) {
				t.Errorf("%s: lines %v, want %d", f.ID, f.Lines, line)
			}
		}
	}
	if s.Bytes != int64(len(data)) {
		t.Errorf("bytes read %d, want %d", s.Bytes, len(data))
	}
}

// cpuTime is the process's user+sys time so far, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// onlyReader hides bytes.Reader's WriterTo, so the scan cannot see the
// whole buffer at once.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// Lines longer than MaxLine are matched on their start and skipped to
// their end: the next line is still read as its own line with its own
// number, and nothing is held beyond the buffer.
func TestLongLines(t *testing.T) {
	huge := strings.Repeat("x", 3*MaxLine+17)
	log := "      NameError: name 'bare_metal_version' is not defined " + huge + "\n" +
		huge + " nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n" + // beyond MaxLine: not seen
		"c++: fatal error: Killed signal terminated program cc1plus\n" +
		"no newline at the end: ImportError: libcudart.so.12: cannot open shared object file: No such file or directory"
	s, err := Default().Scan(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if s.Lines != 4 || s.LongLines != 2 || s.Bytes != int64(len(log)) {
		t.Errorf("lines %d long %d bytes %d; want 4, 2, %d", s.Lines, s.LongLines, s.Bytes, len(log))
	}
	var got []string
	for _, h := range s.Hits {
		got = append(got, fmt.Sprintf("%d:%s", h.Line, h.Signature.Name))
		if len(h.Text) > maxTextLen+len("…") {
			t.Errorf("line %d: evidence text of %d bytes", h.Line, len(h.Text))
		}
	}
	want := []string{"1:setup-bare-metal-version", "3:gcc-cc1plus-killed", "4:loader-libcudart-missing"}
	if !slices.Equal(got, want) {
		t.Errorf("hits %v, want %v", got, want)
	}
}

// A message repeated a million times is counted, not kept a million times.
func TestRepeatedMessageCapped(t *testing.T) {
	var b strings.Builder
	for range 5000 {
		b.WriteString("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
	}
	s, err := Default().Scan(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Hits) != maxHitsPerSignature || s.Counts["cuda-no-kernel-image"] != 5000 {
		t.Fatalf("hits %d, count %d", len(s.Hits), s.Counts["cuda-no-kernel-image"])
	}
	fs := Findings(s, nil)
	if len(fs) != 1 || !strings.Contains(strings.Join(fs[0].Evidence, "\n"), "and 4999 more matching lines") {
		t.Errorf("evidence %q", fs[0].Evidence)
	}
}

// Unknown logs say so: no findings, and the text says how many lines were
// read without guessing.
func TestUnknownLog(t *testing.T) {
	for _, log := range []string{"", "\n\n\n", "hello\nworld", "\x00\x01\xff\xfe binary junk \x1b[31m", strings.Repeat("ok\n", 1000)} {
		s, err := Default().Scan(strings.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		fs := Findings(s, nil)
		if len(fs) != 0 {
			t.Errorf("%q: findings %v", log, ids(fs))
		}
		rep := &Report{Log: "x.log", Findings: fs, LinesRead: s.Lines}
		var out strings.Builder
		if err := rep.Text(&out, render.Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), fmt.Sprintf("no known failure signature in %s", render.Count(s.Lines, "line", "lines"))) {
			t.Errorf("%q: text %q", log, out.String())
		}
	}
}
