package fatbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// Walk reads the fatbin containers in the first size bytes of r: the raw bytes of a
// .nv_fatbin section or a standalone fatbin. Offsets in the result are relative to r.
// On error the File holds what was read before it.
func Walk(r io.ReaderAt, size int64) (*File, error) {
	f := &File{Kind: KindFatbin}
	if size < 0 {
		return f, formatErr(0, "negative size %d", size)
	}
	return f, f.walk(r, 0, size, "", nil)
}

// readFull reads exactly len(b) bytes at off; a short read is a FormatError (the
// input is shorter than its headers say).
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return formatErr(off, "truncated: want %d bytes, file has %d", len(b), n)
	}
	return err
}

// walk reads the containers in [base, base+size) of r. Containers follow each other;
// each is a 16-byte header then entries, each entry header_size + padded payload
// bytes long, which together fill the container exactly (as in every container of
// torch 2.11's libraries). Zero bytes between containers are skipped, up to maxPadding.
// starts, when known (segmentStarts), are where the containers begin: a hint that
// lets the prefetch read every container at once; the walk itself still follows
// the chain and checks every header.
func (f *File) walk(r io.ReaderAt, base, size int64, section string, starts []int64) error {
	end := base + size
	if base < 0 || size < 0 || end < base {
		return formatErr(base, "section range out of bounds")
	}
	// Large sections only (prefetch.go): the headers are read ahead, in
	// parallel, and the walk below takes them from memory.
	if hdr := prefetch(r, base, size, starts); len(hdr) > 0 {
		r = cachedReader{r, hdr}
	}
	var ch [containerHeaderSize]byte
	var eh [entryHeaderMin]byte
	var names entryNames
	pos := base
	for pos < end {
		if end-pos < containerHeaderSize {
			next, err := skipZeros(r, pos, end)
			if err != nil {
				return err
			}
			if next != end {
				return formatErr(pos, "%d stray bytes after the last fatbin", end-pos)
			}
			return nil
		}
		if err := readFull(r, ch[:], pos); err != nil {
			return err
		}
		if binary.LittleEndian.Uint32(ch[0:]) != Magic {
			next, err := skipZeros(r, pos, end)
			if err != nil {
				return err
			}
			if next == pos {
				return formatErr(pos, "no fatbin magic (%#08x)", binary.LittleEndian.Uint32(ch[0:]))
			}
			pos = next
			continue
		}
		if len(f.Containers) >= MaxContainers {
			return formatErr(pos, "more than %d fatbin containers", MaxContainers)
		}
		c := Container{
			Section:    section,
			Offset:     pos,
			Version:    binary.LittleEndian.Uint16(ch[4:]),
			HeaderSize: binary.LittleEndian.Uint16(ch[6:]),
			Size:       binary.LittleEndian.Uint64(ch[8:]),
			First:      len(f.Entries),
		}
		if c.HeaderSize < containerHeaderSize || int64(c.HeaderSize) > end-pos {
			return formatErr(pos, "fatbin header size %d out of range", c.HeaderSize)
		}
		start := pos + int64(c.HeaderSize)
		if c.Size > uint64(end-start) {
			return formatErr(pos, "fatbin size %d runs past the section end (%d bytes left)", c.Size, end-start)
		}
		cend := start + int64(c.Size)
		// Appended before its entries, so that on error the File read so far stays
		// consistent: every entry's container exists and counts it.
		ci := len(f.Containers)
		f.Containers = append(f.Containers, c)
		for p := start; p < cend; {
			if cend-p < entryHeaderMin {
				return formatErr(p, "truncated entry header: %d bytes left in the fatbin", cend-p)
			}
			if len(f.Entries) >= MaxEntries {
				return formatErr(p, "more than %d fatbin entries", MaxEntries)
			}
			if err := readFull(r, eh[:], p); err != nil {
				return err
			}
			e, err := decodeEntry(eh[:], p, cend)
			if err != nil {
				return err
			}
			if e.Name, err = names.read(r, eh[:], p, e.HeaderSize); err != nil {
				return err
			}
			e.Container = ci
			f.Entries = append(f.Entries, e)
			f.Containers[ci].N++
			// Progress: at least entryHeaderMin bytes per entry, so this loop ends.
			p += int64(e.HeaderSize) + int64(e.PayloadSize)
		}
		pos = cend
	}
	return nil
}

// decodeEntry reads the 64 header bytes of the entry at p, which must end by cend.
// Field offsets: testdata/torch-2.11-cu130/READINGS.md (read off an H200's libtorch_cuda.so).
func decodeEntry(h []byte, p, cend int64) (Entry, error) {
	le := binary.LittleEndian
	e := Entry{
		RawKind:        le.Uint16(h[0:]),
		HeaderSize:     le.Uint32(h[4:]),
		PayloadSize:    le.Uint64(h[8:]),
		CompressedSize: uint64(le.Uint32(h[16:])),
		SM:             int(le.Uint32(h[28:])),
		Flags:          le.Uint64(h[40:]),
		Offset:         p,
	}
	if e.HeaderSize < entryHeaderMin || e.HeaderSize > entryHeaderMax {
		return Entry{}, formatErr(p, "entry header size %d out of range", e.HeaderSize)
	}
	left := cend - p - int64(e.HeaderSize)
	if left < 0 || e.PayloadSize > uint64(left) {
		return Entry{}, formatErr(p, "entry of %d+%d bytes runs past its fatbin (%d bytes left)", e.HeaderSize, e.PayloadSize, cend-p)
	}
	// u32 at 24: minor in the low half, major in the high half. PTX: the ISA (0x90000 = 9.0);
	// ELF: the cubin code version (0x10008 = [1,8], as cuobjdump prints it).
	ver := cudaarch.Version{Major: int(le.Uint16(h[26:])), Minor: int(le.Uint16(h[24:]))}
	switch e.RawKind {
	case rawKindPTX:
		e.Kind, e.PTXVersion = cudaarch.PTX, ver
	case rawKindELF:
		e.Kind, e.CodeVersion = cudaarch.SASS, ver
	}
	switch {
	case e.Flags&FlagArchSpecific != 0:
		e.Variant = cudaarch.VariantArch
	case e.Flags&FlagFamily != 0:
		e.Variant = cudaarch.VariantFamily
	}
	switch {
	case e.Flags&FlagZstd != 0:
		e.Compression = CompressionZstd
	case e.Flags&FlagLZ4 != 0:
		e.Compression = CompressionLZ4
	}
	if e.Compression != CompressionNone {
		e.UncompressedSize = le.Uint64(h[56:])
	}
	return e, nil
}

// maxNameBase caps a kept name (Entry.Name): a file name's longest on Linux
// (NAME_MAX), so no real listing changes, while a hostile file of 2^18 entries
// with 4 KB names cannot hold a gigabyte of them.
const maxNameBase = 255

// entryNames reads the source file names of a walk's entries, reusing one buffer,
// and hands consecutive entries of one source (every entry of a -lineinfo build)
// the same string.
type entryNames struct {
	buf  []byte
	last string
}

// read returns the name of the entry whose header is at p, h its first
// entryHeaderMin bytes: a u32 offset (from p) at 32 and a u32 length at 36, the
// bytes inside the header past its fixed fields, NUL-terminated (nvcc 13.0
// -lineinfo: offset 64, length 7, "axpy.cu"; catboost 1.2.10: offset 96, length 51,
// "/src/catboost/catboost/libs/model/cuda/evaluator.cu"). It keeps what cuobjdump
// prints of it (NameBase). A name outside the header is ignored, as one that is
// absent: it names, it does not locate anything.
func (n *entryNames) read(r io.ReaderAt, h []byte, p int64, headerSize uint32) (string, error) {
	off, size := binary.LittleEndian.Uint32(h[32:]), binary.LittleEndian.Uint32(h[36:])
	if size == 0 || off < entryHeaderMin || off > headerSize || size > headerSize-off {
		return "", nil
	}
	if cap(n.buf) < int(size) { // size < entryHeaderMax: the header size is capped
		n.buf = make([]byte, size)
	}
	b := n.buf[:size]
	if err := readFull(r, b, p+int64(off)); err != nil {
		return "", err
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	b = nameBase(b)
	if len(b) > maxNameBase {
		b = b[:maxNameBase]
	}
	if string(b) != n.last { // no allocation for the comparison
		n.last = string(b)
	}
	return n.last, nil
}

// skipZeros returns the offset of the first non-zero byte at or after pos (end if
// there is none before end), reading at most maxPadding bytes; more zeros than that
// is an error, so a section of zeros is not scanned to its end.
func skipZeros(r io.ReaderAt, pos, end int64) (int64, error) {
	var buf [512]byte
	for p := pos; p < end; {
		if p-pos >= maxPadding {
			return 0, formatErr(pos, "more than %d zero bytes where a fatbin should start", maxPadding)
		}
		n := int64(len(buf))
		if end-p < n {
			n = end - p
		}
		if err := readFull(r, buf[:n], p); err != nil {
			return 0, err
		}
		for i, b := range buf[:n] {
			if b != 0 {
				return p + int64(i), nil
			}
		}
		p += n
	}
	return end, nil
}
