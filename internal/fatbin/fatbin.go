// Package fatbin reads the CUDA code inside binaries: the fatbin containers of an ELF
// host binary's .nv_fatbin / __nv_relfatbin section, standalone .fatbin files and bare
// cubins. It walks entry headers only: payloads are never read or decompressed, so a
// 300 MB section costs a few thousand small reads. The layout is the one documented in
// shared/reference/h200-torch-2.11-cu130/README.md and checked against cuobjdump there.
//
// Every size and offset in the input is distrusted: each is bounds-checked against the
// section, counts are capped, and malformed input gives a *FormatError, never a panic.
package fatbin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/elfdyn"
)

// Magic starts every fatbin container (little-endian u32).
const Magic = 0xBA55ED50

// Section names that hold fatbin containers: linked binaries and shared objects keep
// them in .nv_fatbin, relocatable objects built with -rdc in __nv_relfatbin.
var fatbinSections = []string{".nv_fatbin", "__nv_relfatbin"}

const (
	containerHeaderSize = 16 // u32 magic, u16 version, u16 header size, u64 size of the entries
	entryHeaderMin      = 64 // every field read lies in the first 64 bytes

	// Seen: 64, 80, 96, 112. A header beyond this is corruption, not a new layout.
	entryHeaderMax = 4096

	// Zero bytes tolerated between containers (alignment a linker may leave) and after
	// the last one; real files (torch 2.11: 543 containers) have none.
	maxPadding = 4096

	// MaxEntries caps the entries of one file: libtorch_cuda.so has 2789, cuBLASLt about
	// 5400. The cap bounds memory on hostile input (a 300 MB run of empty 64-byte entries).
	MaxEntries = 1 << 18
	// MaxContainers caps the containers of one file for the same reason.
	MaxContainers = 1 << 18
)

// Entry header flags (offset 40, u64).
const (
	FlagLZ4          = 0x2000   // payload compressed by nvcc --compress-mode=speed (an LZ4-class codec)
	FlagZstd         = 0x8000   // payload zstd-compressed (CUDA 13 default)
	FlagArchSpecific = 0x100000 // built for an `a` target: cuobjdump prints sm_90a
	FlagFamily       = 0x200000 // built for an `f` target: cuobjdump prints it plain
)

// Raw entry kinds (offset 0, u16).
const (
	rawKindPTX = 1
	rawKindELF = 2
)

// Compression is how an entry's payload is stored.
type Compression uint8

const (
	CompressionNone Compression = iota
	CompressionZstd
	CompressionLZ4 // --compress-mode=speed
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionZstd:
		return "zstd"
	case CompressionLZ4:
		return "lz4"
	}
	return fmt.Sprintf("compression(%d)", c)
}

// FileKind says what Open found.
type FileKind uint8

const (
	KindHostELF FileKind = iota + 1 // an ELF host binary/object; fatbins in its sections (maybe none)
	KindCubin                       // a bare cubin (ELF, e_machine EM_CUDA)
	KindFatbin                      // a standalone fatbin file
)

// Entry is one fatbin entry: a cubin (SASS) or PTX for one target.
type Entry struct {
	Kind        cudaarch.Kind // 0 when the raw kind is neither PTX nor ELF (see RawKind)
	RawKind     uint16
	SM          int
	Variant     cudaarch.Variant
	PTXVersion  cudaarch.Version // PTX ISA of a PTX entry (9.0); zero for SASS
	CodeVersion cudaarch.Version // a SASS entry's cubin code version ([1,8]); zero for PTX
	Compression Compression
	Flags       uint64

	HeaderSize       uint32
	PayloadSize      uint64 // padded size on disk
	CompressedSize   uint64 // 0 when not compressed
	UncompressedSize uint64 // 0 when not compressed

	Offset    int64 // file offset of the entry header (payload at Offset+HeaderSize)
	Container int   // index into File.Containers; -1 for a bare cubin's pseudo-entry
}

// Target is the compilation target of the entry: sm_90a, compute_90, sm_120f.
func (e Entry) Target() cudaarch.Target {
	return cudaarch.Target{Kind: e.Kind, SM: e.SM, Variant: e.Variant}
}

// Container is one fatbin: a 16-byte header and the entries that follow it.
type Container struct {
	Section    string // ELF section name; "" for a standalone fatbin file
	Offset     int64  // file offset of the container header
	Version    uint16
	HeaderSize uint16
	Size       uint64 // bytes of entries after the header
	First, N   int    // its entries are File.Entries[First:First+N]
}

// File is what was read from one file.
type File struct {
	Kind       FileKind
	Containers []Container
	Entries    []Entry // in file order, across containers
	Sections   []string

	closer io.Closer
}

// FormatError reports malformed input at file offset Off.
type FormatError struct {
	Off int64
	Msg string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("fatbin: %s at offset %#x", e.Msg, e.Off)
}

func formatErr(off int64, format string, args ...any) error {
	return &FormatError{Off: off, Msg: fmt.Sprintf(format, args...)}
}

// ErrNotCUDA means the file is readable but is neither ELF nor a fatbin.
var ErrNotCUDA = errors.New("fatbin: not an ELF file or fatbin")

// Open reads path. Close the File when done. Like NewFile, on a malformed fatbin it
// returns what it read before the error (already closed) with the error.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ff, err := NewFile(f)
	if err != nil {
		f.Close()
		return ff, err
	}
	ff.closer = f
	return ff, nil
}

// Close closes the file Open opened; it does nothing for NewFile's.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// NewFile reads an ELF file (host binary, object or bare cubin) or a standalone fatbin
// from r. It reads headers only. When a fatbin is malformed it returns the containers
// and entries read before the *FormatError together with it.
func NewFile(r io.ReaderAt) (*File, error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrNotCUDA
		}
		return nil, err
	}
	if binary.LittleEndian.Uint32(magic[:]) == Magic {
		f := &File{Kind: KindFatbin}
		size, err := readerSize(r)
		if err != nil {
			return nil, err
		}
		if err := f.walk(r, 0, size, ""); err != nil {
			return f, err
		}
		return f, nil
	}
	if !bytes.Equal(magic[:], []byte(elf.ELFMAG)) {
		return nil, ErrNotCUDA
	}
	// F3: debug/elf trusts e_shnum; check the header tables fit the file first.
	elfSize, err := readerSize(r)
	if err != nil {
		return nil, err
	}
	if err := elfdyn.CheckHeader(r, elfSize); err != nil {
		msg := err.Error()
		var fe *elfdyn.FormatError
		if errors.As(err, &fe) {
			msg = fe.Msg
		}
		return nil, &FormatError{Off: 0, Msg: msg}
	}
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, &FormatError{Off: 0, Msg: "bad ELF: " + err.Error()}
	}
	if ef.Machine == elf.EM_CUDA {
		return cubinFile(r, ef)
	}
	f := &File{Kind: KindHostELF}
	fileSize, sizeKnown := knownSize(r)
	for _, s := range ef.Sections {
		if !isFatbinSection(s.Name) || s.Type == elf.SHT_NOBITS {
			continue
		}
		f.Sections = append(f.Sections, s.Name)
		off, size := int64(s.Offset), int64(s.FileSize)
		if off < 0 || size < 0 || off+size < off {
			return f, formatErr(int64(s.Offset), "section %s: offset/size out of range", s.Name)
		}
		if sizeKnown && off+size > fileSize {
			return f, formatErr(off, "section %s (%d bytes) runs past the end of the file (%d bytes)", s.Name, size, fileSize)
		}
		if err := f.walk(r, off, size, s.Name); err != nil {
			return f, err
		}
	}
	return f, nil
}

func isFatbinSection(name string) bool {
	for _, n := range fatbinSections {
		if name == n {
			return true
		}
	}
	return false
}

// knownSize is r's size where r can tell it without probing.
func knownSize(r io.ReaderAt) (int64, bool) {
	switch v := r.(type) {
	case interface{ Size() int64 }:
		return v.Size(), true
	case *os.File:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size(), true
		}
	}
	return 0, false
}

// readerSize finds how many bytes r holds, for a standalone fatbin whose end is the
// file's end.
func readerSize(r io.ReaderAt) (int64, error) {
	if n, ok := knownSize(r); ok {
		return n, nil
	}
	// Unknown length: find it by probing one byte at a time, doubling then bisecting
	// (at most ~125 reads).
	has := func(off int64) bool {
		var b [1]byte
		n, _ := r.ReadAt(b[:], off)
		return n == 1
	}
	lo, hi := int64(0), int64(1) // has(lo-1) holds (or lo == 0); find the first missing byte
	for has(hi - 1) {
		lo = hi
		if hi > 1<<61 {
			return 0, errors.New("fatbin: cannot tell the input's size")
		}
		hi *= 2
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if has(mid) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// cubinFile describes a bare cubin as one SASS pseudo-entry. debug/elf does not expose
// e_flags, so it is read here: u32 at 48 (ELF64) or 36 (ELF32).
func cubinFile(r io.ReaderAt, ef *elf.File) (*File, error) {
	off := int64(48)
	if ef.Class == elf.ELFCLASS32 {
		off = 36
	}
	var b [4]byte
	if _, err := r.ReadAt(b[:], off); err != nil {
		return nil, formatErr(off, "cubin: cannot read e_flags: %v", err)
	}
	sm := CubinSM(ef.ByteOrder.Uint32(b[:]))
	if sm == 0 {
		return nil, formatErr(off, "cubin: no SM in e_flags %#x", ef.ByteOrder.Uint32(b[:]))
	}
	return &File{
		Kind:    KindCubin,
		Entries: []Entry{{Kind: cudaarch.SASS, RawKind: rawKindELF, SM: sm, Container: -1}},
	}, nil
}

// CubinSM reads the SM number from a cubin's e_flags: the low byte up to sm_90
// (0x5a055a), bits 8-15 from sm_100 on (0x6006402), per cuobjdump --dump-elf readings.
// The low byte of the newer layout is a small flag value, never an SM number (>= 20),
// which tells the two apart. The cubin header does not say `a` or `f` reliably, so a
// bare cubin's Variant stays plain. 0 means no SM could be read.
func CubinSM(flags uint32) int {
	if lo := int(flags & 0xff); lo >= 20 {
		return lo
	}
	if sm := int(flags >> 8 & 0xff); sm >= 20 {
		return sm
	}
	return 0
}
