package elfdyn

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/hostile"
)

// F3: a 4 KB file claiming 10 million sections cost GBs in debug/elf. Open
// must refuse it from the header alone, allocating next to nothing.
func TestF3SectionCountBombRefused(t *testing.T) {
	for name, b := range map[string][]byte{
		"extended e_shnum 10M":   hostile.ELFSectionBomb(10_000_000),
		"extended e_shnum 2^63":  hostile.ELFSectionBomb(1 << 63),
		"e_shnum 65535 past EOF": hostile.ELFShnumBomb(),
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Open(bytes.NewReader(b), int64(len(b)))
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("Open accepted an ELF section-count bomb")
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("refusing the bomb allocated %d bytes", n)
			}
			if err := CheckHeader(bytes.NewReader(b), int64(len(b))); err == nil {
				t.Error("CheckHeader accepted the bomb")
			}
		})
	}
}

// F3: the check must pass real ELF files: this test binary and libc.
func TestF3CheckHeaderAcceptsRealELF(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{exe, "/bin/sh", "/lib/x86_64-linux-gnu/libc.so.6"} {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		fi, _ := f.Stat()
		if err := CheckHeader(f, fi.Size()); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		f.Close()
	}
	if err := CheckHeader(bytes.NewReader([]byte("#!/bin/sh\n")), 10); err == nil {
		t.Error("CheckHeader accepted a shell script")
	}
}

// FuzzF3CheckHeader: whatever the bytes, CheckHeader returns (never panics),
// and what it accepts debug/elf can parse without a runaway section count.
func FuzzF3CheckHeader(f *testing.F) {
	f.Add(hostile.ELFSectionBomb(10_000_000))
	f.Add(hostile.ELFShnumBomb())
	f.Add(hostile.ELFFittingHeaders(1 << 20))
	if exe, err := os.Executable(); err == nil {
		if fh, err := os.Open(exe); err == nil {
			b := make([]byte, 4096)
			n, _ := fh.Read(b)
			fh.Close()
			f.Add(b[:n])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := CheckHeader(bytes.NewReader(b), int64(len(b))); err == nil {
			if _, err := Open(bytes.NewReader(b), int64(len(b))); err != nil {
				return // a bad file is fine; a panic or a balloon is not
			}
		}
	})
}
