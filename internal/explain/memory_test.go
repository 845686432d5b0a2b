// The race detector multiplies memory and time: a memory bound measured
// under it says nothing about the binary.

//go:build !race

package explain

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// genLog is a log of size bytes generated as it is read (never held
// whole): training and build noise, with a few failures at known offsets.
type genLog struct {
	size, sent int64
	line       int
	buf        []byte
	place      map[int]string
}

func newGenLog(size int64) *genLog {
	return &genLog{size: size, place: map[int]string{
		1000:    sigFallback,
		2500000: sigOOM,
		5000000: "2026-11-30T16:59:23.5211732Z [rank3]: ImportError: /venv/lib/python3.12/site-packages/causal_conv1d_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_jRKSs\n",
	}}
}

func (g *genLog) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.buf) == 0 {
			if g.sent >= g.size {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			g.line++
			if s, ok := g.place[g.line]; ok {
				g.buf = append(g.buf[:0], s...)
			} else {
				g.buf = fmt.Appendf(g.buf[:0], noiseLines[g.line%len(noiseLines)], g.line, g.line%9973)
			}
			g.sent += int64(len(g.buf))
		}
		c := copy(p[n:], g.buf)
		n += c
		g.buf = g.buf[c:]
	}
	return n, nil
}

// peakMemory samples the memory the Go runtime holds from the OS (heap,
// stacks, GC metadata; less what it has returned) while f runs. Memory
// left over by earlier tests is returned first.
func peakMemory(f func()) (peak uint64) {
	debug.FreeOSMemory()
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	read := func() {
		metrics.Read(sample)
		mu.Lock()
		peak = max(peak, sample[0].Value.Uint64()-sample[1].Value.Uint64())
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			read()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	f()
	stop.Store(true)
	wg.Wait()
	read()
	return peak
}

// TestExplainGigabyteLogMemory streams a 1 GB log (64 MB under -short)
// through explain and measures the most memory the Go runtime held while
// it ran: it must stay under 32 MB, the figure the issue asks for, and the
// failures must all be found on their lines. Repeat with
//
//	go test ./internal/explain -run TestExplainGigabyteLogMemory -v
func TestExplainGigabyteLogMemory(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	runtime.GC()
	var (
		s     *Scan
		fs    []Finding
		err   error
		start = time.Now()
	)
	peak := peakMemory(func() {
		s, err = Default().Scan(newGenLog(size))
		if err == nil {
			fs = Findings(s, nil)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	fmt.Printf("explain on a %d MB log: %d lines, peak Go memory %.1f MB, %.1f s (%.0f MB/s)\n",
		size>>20, s.Lines, float64(peak)/(1<<20), elapsed.Seconds(), float64(size)/(1<<20)/elapsed.Seconds())
	if s.Bytes < size {
		t.Errorf("read %d bytes of %d", s.Bytes, size)
	}
	if peak >= 32<<20 {
		t.Errorf("peak memory %.1f MB, want < 32 MB", float64(peak)/(1<<20))
	}
	want := []finding.ID{finding.BuildOutOfMemory, finding.ExtensionABIMismatch, finding.FastPathFallback}
	if size < 1<<30 {
		want = []finding.ID{finding.FastPathFallback} // the small log ends before the others
	}
	if got := ids(fs); !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
}
