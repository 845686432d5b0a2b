package fatbin

import (
	"debug/elf"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// realTorchCUDA is a real libtorch_cuda.so: $FASTPATH_FATBIN_LIB, else torch
// 2.11.0+cu130's (PyPI torch==2.11.0, Linux x86-64) in the venv that
// internal/remedy's network test installs into the test cache. Nothing is
// downloaded here: without the file the test is skipped.
func realTorchCUDA(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("FASTPATH_FATBIN_LIB"); p != "" {
		return p
	}
	var matches []string
	home, _ := os.UserHomeDir()
	for _, cache := range []string{os.Getenv("FASTPATH_TEST_CACHE"), filepath.Join(home, ".cache", "fastpath-test")} {
		if cache != "" && len(matches) == 0 {
			matches, _ = filepath.Glob(filepath.Join(cache, "venvs", "torch-2.11.0-cu130", "lib", "python3*", "site-packages", "torch", "lib", "libtorch_cuda.so"))
		}
	}
	if len(matches) == 0 {
		tb.Skip("no libtorch_cuda.so: set FASTPATH_FATBIN_LIB or install torch 2.11.0+cu130 in the test cache")
	}
	return matches[0]
}

// TestSegmentHintsSameFile: reading libtorch_cuda.so with the container
// starts of .nvFatBinSegment and the header cache gives the same File as
// the plain walk, and the segment names every container the walk finds.
func TestSegmentHintsSameFile(t *testing.T) {
	p := realTorchCUDA(t)
	with, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	with.Close()
	segmentHints = false
	without, err := Open(p)
	segmentHints = true
	if err != nil {
		t.Fatal(err)
	}
	without.Close()
	with.closer, without.closer = nil, nil
	if !reflect.DeepEqual(with, without) {
		t.Fatal("the File read with the segment's hints differs from the plain walk")
	}
	lf, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	ef, err := elf.NewFile(lf)
	if err != nil {
		t.Fatal(err)
	}
	s := ef.Section(ExecutableSection)
	starts := containerStarts(segmentPointers(lf, ef, 0, false), s.Addr, int64(s.Offset), int64(s.FileSize))
	if len(starts) != len(with.Containers) {
		t.Fatalf("the segment names %d containers, the walk finds %d", len(starts), len(with.Containers))
	}
	for i, c := range with.Containers {
		if starts[i] != c.Offset {
			t.Fatalf("container %d: the segment says offset %d, the walk %d", i, starts[i], c.Offset)
		}
	}
}

// evict drops path's pages from the page cache (posix_fadvise DONTNEED:
// clean pages only, no privilege needed).
func evict(tb testing.TB, path string) {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	const fadvDontNeed = 4
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
		tb.Skipf("fadvise: %v", e)
	}
}

// BenchmarkRealTorchCUDA reads the fatbin headers of a real
// libtorch_cuda.so, warm and cold (evicted before each run), with and
// without the container starts of .nvFatBinSegment, and cold with the
// kernel's readahead on or off (POSIX_FADV_RANDOM). disk-MB/op is what the
// kernel fetched from storage, readahead included.
func BenchmarkRealTorchCUDA(b *testing.B) {
	p := realTorchCUDA(b)
	for _, tc := range []struct {
		name                string
		cold, hints, random bool
	}{
		{"warm/segment", false, true, false}, {"warm/chain", false, false, false},
		{"cold/segment", true, true, false}, {"cold/chain", true, false, false},
		// As doctor reads it: the source layer opens binaries with
		// POSIX_FADV_RANDOM (internal/source/advise_linux.go).
		{"cold/segment+random", true, true, true}, {"cold/chain+random", true, false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			segmentHints = tc.hints
			defer func() { segmentHints = true }()
			b.ReportAllocs()
			before, readBefore := cpuTime(), storageRead()
			for b.Loop() {
				if tc.cold {
					b.StopTimer()
					evict(b, p)
					b.StartTimer()
				}
				lib, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				if tc.random {
					const fadvRandom = 1
					syscall.Syscall6(syscall.SYS_FADVISE64, lib.Fd(), 0, 0, fadvRandom, 0, 0)
				}
				if _, err := NewFile(lib); err != nil {
					b.Fatal(err)
				}
				lib.Close()
			}
			b.ReportMetric(float64(cpuTime()-before)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(storageRead()-readBefore)/1e6/float64(b.N), "disk-MB/op")
		})
	}
}

// cpuTime is this process's user+system time in nanoseconds: on a loaded
// machine the figure to compare, where wall time is only an upper bound.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// storageRead is what this process made the kernel fetch from storage, in
// bytes (/proc/self/io read_bytes): readahead included, page-cache hits not.
func storageRead() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
