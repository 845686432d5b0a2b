package fatbin

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// FuzzNewFile feeds arbitrary files (ELF, cubin, fatbin, junk) to NewFile: no panic,
// no hang, and what it returns lies inside the input.
func FuzzNewFile(f *testing.F) {
	f.Add(oneFatbin())
	f.Add(fixture.SharedObject{Needed: []string{"libcudart.so.12"},
		Sections: []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80", "sm_90"}, []string{"compute_90"})}}}.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := NewFile(bytes.NewReader(data))
		// Section headers read directly or by debug/elf: the same File.
		directHeaders = false
		viaDebugELF, errViaDebugELF := NewFile(bytes.NewReader(data))
		directHeaders = true
		if got, want := fileText(file, err), fileText(viaDebugELF, errViaDebugELF); got != want {
			t.Fatalf("headers read directly: %s\nread by debug/elf: %s", got, want)
		}
		if err != nil {
			return
		}
		if file.Kind != KindCubin {
			checkInvariants(t, file, int64(len(data)))
			if file.Relocatable != nil {
				checkInvariants(t, file.Relocatable, int64(len(data)))
				checkInvariants(t, file.All(), int64(len(data)))
			}
		}
		ListELF(io.Discard, file, "x")
		ListPTX(io.Discard, file, "x")
		file.Targets()
		file.CommonSASS()
		budget := int64(DecompressBudget)
		for c := range file.Containers {
			file.ContainerKernels(bytes.NewReader(data), c, &budget) // reads payloads: must not panic
		}
	})
}

// FuzzWalkFatbin feeds arbitrary section bytes to Walk.
func FuzzWalkFatbin(f *testing.F) {
	f.Add(oneFatbin())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Walk(bytes.NewReader(data), int64(len(data)))
		// Even on error, what was read before it must be sound.
		checkInvariants(t, file, int64(len(data)))
		if err == nil {
			ListELF(io.Discard, file, "x")
		}
	})
}

// TestWriteFuzzSeeds regenerates testdata/fuzz/* from the reference headers when
// FASTPATH_WRITE_FUZZ_SEEDS=1; otherwise it checks the committed seeds are there.
func TestWriteFuzzSeeds(t *testing.T) {
	walk, elfs := fuzzSeeds(t)
	if os.Getenv("FASTPATH_WRITE_FUZZ_SEEDS") != "1" {
		for name, n := range map[string]int{"FuzzWalkFatbin": len(walk), "FuzzNewFile": len(elfs)} {
			ents, err := os.ReadDir(filepath.Join("testdata", "fuzz", name))
			if err != nil || len(ents) < n {
				t.Errorf("%s: %d committed seeds, want %d (%v); run with FASTPATH_WRITE_FUZZ_SEEDS=1", name, len(ents), n, err)
			}
		}
		return
	}
	for name, seeds := range map[string]map[string][]byte{"FuzzWalkFatbin": walk, "FuzzNewFile": elfs} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for seed, b := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
			if err := os.WriteFile(filepath.Join(dir, seed), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// materialise turns a small sparse image into bytes.
func materialise(t testing.TB, r *sparseReader) []byte {
	t.Helper()
	if r.size > 1<<20 {
		t.Fatalf("image of %d bytes too large for a seed", r.size)
	}
	b := make([]byte, r.size)
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

func fuzzSeeds(t testing.TB) (walk, elfs map[string][]byte) {
	walk, elfs = map[string][]byte{}, map[string][]byte{}
	all := loadRef(t, "small-kernels-fatbin-entry-headers.json")
	files := []string{}
	seen := map[string]bool{}
	for _, r := range all {
		if !seen[r.File] {
			seen[r.File] = true
			files = append(files, r.File)
		}
	}
	for _, file := range files {
		rows := rowsOf(all, file)
		segs, _, size := sectionSegments(t, rows, 0)
		sec := materialise(t, newSparse(size, segs))
		walk["ref-"+file] = sec
		if file == "arch_specific.so" || file == "plain.so" { // a few truncations; seeds stay small
			walk["ref-truncated-"+file] = sec[:len(sec)*2/3]
		}
		img, _ := refELF(t, rows, etDyn, rows[0].Section, 0x200)
		b := materialise(t, img)
		elfs["ref-"+file] = b
		if file == "rdc.o" || file == "cmode_speed.so" {
			elfs["ref-truncated-"+file] = b[:len(b)/2]
		}
	}
	// A slice of libtorch_cuda.so: its first container (6 entries, arch-specific ones
	// with 112-byte headers), payloads shrunk to nothing so the seed stays small.
	big := rowsOf(loadRef(t, "fatbin-entry-headers.json.gz"), "libtorch_cuda.so")
	var first []byte
	var entries [][]byte
	for _, r := range big {
		if r.Fatbin != 0 {
			break
		}
		h := unhex(t, r.Hdr)
		clear(h[8:16])
		entries = append(entries, h)
	}
	var n uint64
	for _, h := range entries {
		n += uint64(len(h))
	}
	first = cat(append([][]byte{containerHdr(n)}, entries...)...)
	walk["torch-first-container"] = first

	ok := oneFatbin()
	walk["one"] = ok
	walk["padded"] = cat(ok, make([]byte, 8), ok)
	walk["size-2e62"] = withU64(ok, 8, 1<<62)
	walk["entry-payload-2e62"] = withU64(ok, 16+8, 1<<62)
	walk["entry-payload-wraps"] = withU64(ok, 16+8, ^uint64(63))
	walk["entry-header-size-0"] = withU32(ok, 16+4, 0)
	walk["empty-container"] = containerHdr(0)
	walk["truncated"] = ok[:40]

	elfs["fatbin-file"] = cat(ok, ok)
	segs, size := elfHeaders(etExec, emCUDA, 0x6007802, nil)
	elfs["cubin-sm120"] = materialise(t, newSparse(size, segs))
	segs, size = elfHeaders(etExec, emCUDA, 0x5a055a, nil)
	elfs["cubin-sm90"] = materialise(t, newSparse(size, segs))
	segs, size = elfHeaders(etDyn, emX8664, 0, []elfSection{{".nv_fatbin", 0x200, int64(len(ok))}})
	segs = append(segs, seg{0x200, ok})
	good := materialise(t, newSparse(size, segs))
	elfs["host-one"] = good
	past := materialise(t, newSparse(size, segs))
	copy(past[segs[2].off+64+24:], []byte{0, 0, 0, 0, 0, 1, 0, 0}) // sh_offset 2^40
	elfs["host-section-past-end"] = past
	huge := materialise(t, newSparse(size, segs))
	copy(huge[segs[2].off+64+32:], []byte{0, 0, 0, 0, 0, 0, 0, 0x40}) // sh_size 2^62
	elfs["host-section-2e62"] = huge
	elfs["zero-size-section"] = func() []byte {
		s, n := elfHeaders(etDyn, emX8664, 0, []elfSection{{".nv_fatbin", 0x200, 0}})
		return materialise(t, newSparse(n, s))
	}()
	elfs["not-elf"] = []byte("#!/bin/sh\nexit 0\n")
	// Real compressed payloads (nvcc 13.0's .nv_fatbin sections as standalone
	// fatbins), for ContainerKernels' decompression: zstd and LZ4.
	for _, name := range []string{"compressed.so", "cmode_size.so", "cmode_speed.so"} {
		sec, _ := realSection(t, name)
		elfs["real-fatbin-"+name] = sec
	}
	return walk, elfs
}

// fileText is what NewFile returned, as text (the relocatable File's
// contents, not its address).
func fileText(f *File, err error) string {
	if f == nil {
		return fmt.Sprintf("nil %v", err)
	}
	rel := ""
	if f.Relocatable != nil {
		rel = fileText(f.Relocatable, nil)
	}
	return fmt.Sprintf("%v %v %v %v %v [%s] %v", f.Kind, f.Containers, f.Entries, f.Sections, f.closer, rel, err)
}
