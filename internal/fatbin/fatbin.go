// Package fatbin reads the CUDA code inside binaries: the fatbin containers of an ELF
// host binary's .nv_fatbin / __nv_relfatbin section, standalone .fatbin files and bare
// cubins. It walks entry headers only, so a 300 MB section costs a few thousand small
// reads; payloads are read (and decompressed, capped) only by ContainerKernels, which
// callers ask about the few containers that decide a verdict. The layout is the one documented in
// internal/fatbin/testdata/torch-2.11-cu130/READINGS.md and checked against cuobjdump there.
//
// Every size and offset in the input is distrusted: each is bounds-checked against the
// section, counts are capped, and malformed input gives a *FormatError, never a panic.
package fatbin

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

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

	// Name is what cuobjdump lists an entry by in place of "FILE.N" when nvcc recorded
	// the source file's name in its header (builds with -lineinfo or -G): that name's
	// last path element without its extension ("axpy" for axpy.cu, "evaluator" for
	// catboost 1.2.10's /src/catboost/catboost/libs/model/cuda/evaluator.cu), at most
	// 255 bytes; empty for other builds (ListELF).
	Name string
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
//
// Containers and Entries are the code the CUDA runtime loads: for an ELF file that
// has an executable fatbin (.nv_fatbin), only that one; otherwise every fatbin
// section (an object built with -rdc has only __nv_relfatbin). This is also what
// cuobjdump lists by default ("executable fatbin (if exists), else relocatable
// fatbin", cuobjdump --help, -all). Relocatable holds the __nv_relfatbin code of a
// file that also has an executable fatbin: device code kept for a later device link,
// never registered with the runtime (every bitsandbytes library, libtorch_nvshmem.so).
type File struct {
	Kind        FileKind
	Containers  []Container
	Entries     []Entry // in file order, across containers
	Sections    []string
	Relocatable *File // nil unless both kinds of fatbin section are present

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
		if err := f.walk(r, 0, size, "", nil); err != nil {
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
	// A host library's section headers are read directly (elfdyn reads
	// them as debug/elf does, without a Section and SectionReader per
	// header), unless its fatbin is big enough for the segment's hints,
	// which need debug/elf's view of the file.
	if machine, secs, ok := elfdyn.SectionHeaders(r, elfSize); ok && directHeaders && machine != elf.EM_CUDA && !wantsSegment(secs) {
		sections := make([]hostSection, len(secs))
		for i, s := range secs {
			sections[i] = hostSection{name: s.Name, typ: s.Type, offset: s.Offset, size: s.Size}
		}
		return hostFile(r, sections, nil)
	}
	ef, err := elf.NewFile(cubinVersionFix(r))
	if err != nil {
		return nil, &FormatError{Off: 0, Msg: "bad ELF: " + err.Error()}
	}
	if ef.Machine == elf.EM_CUDA {
		return cubinFile(r, ef)
	}
	sections := make([]hostSection, len(ef.Sections))
	for i, s := range ef.Sections {
		sections[i] = hostSection{name: s.Name, typ: s.Type, offset: s.Offset, size: s.FileSize, addr: s.Addr}
	}
	return hostFile(r, sections, ef)
}

// directHeaders turns the direct reading of a host library's section
// headers on (tests turn it off to compare with debug/elf's reading).
var directHeaders = true

// hostSection is what hostFile needs of a section header.
type hostSection struct {
	name         string
	typ          elf.SectionType
	offset, size uint64 // size: in the file
	addr         uint64
}

// wantsSegment reports whether hostFile would read .nvFatBinSegment for
// one of secs (an executable fatbin of prefetchMin bytes or more).
func wantsSegment(secs []elfdyn.Section) bool {
	for _, s := range secs {
		if s.Name == ExecutableSection && s.Type != elf.SHT_NOBITS && s.Size >= prefetchMin && segmentHints {
			return true
		}
	}
	return false
}

// hostFile walks the fatbin sections of a host ELF file. ef is debug/elf's
// view of it, needed (and given) only where .nvFatBinSegment is read.
func hostFile(r io.ReaderAt, sections []hostSection, ef *elf.File) (*File, error) {
	f := &File{Kind: KindHostELF}
	fileSize, sizeKnown := knownSize(r)
	var segment []uint64 // where .nvFatBinSegment says the containers are, read on demand
	segmentRead := false
	for _, s := range sections {
		if !isFatbinSection(s.name) || s.typ == elf.SHT_NOBITS {
			continue
		}
		f.Sections = append(f.Sections, s.name)
		off, size := int64(s.offset), int64(s.size)
		if off < 0 || size < 0 || off+size < off {
			return f, formatErr(int64(s.offset), "section %s: offset/size out of range", s.name)
		}
		if sizeKnown && off+size > fileSize {
			return f, formatErr(off, "section %s (%d bytes) runs past the end of the file (%d bytes)", s.name, size, fileSize)
		}
		var starts []int64
		if s.name == ExecutableSection && size >= prefetchMin && segmentHints && ef != nil {
			if !segmentRead {
				segment, segmentRead = segmentPointers(r, ef, fileSize, sizeKnown), true
			}
			starts = containerStarts(segment, s.addr, off, size)
		}
		if err := f.walk(r, off, size, s.name, starts); err != nil {
			return f.splitRelocatable(), err
		}
	}
	return f.splitRelocatable(), nil
}

// ExecutableSection holds the fatbin the runtime registers; RelocatableSection the
// -rdc code kept for device linking.
const (
	ExecutableSection  = ".nv_fatbin"
	RelocatableSection = "__nv_relfatbin"
)

// splitRelocatable moves __nv_relfatbin containers to f.Relocatable when f also has
// an executable fatbin container, re-indexing entries so both Files are consistent.
func (f *File) splitRelocatable() *File {
	hasExec, hasRel := false, false
	for _, c := range f.Containers {
		hasExec = hasExec || c.Section == ExecutableSection
		hasRel = hasRel || c.Section == RelocatableSection
	}
	if !hasExec || !hasRel {
		return f
	}
	exec := f.subset(func(c Container) bool { return c.Section != RelocatableSection })
	exec.Relocatable = f.subset(func(c Container) bool { return c.Section == RelocatableSection })
	exec.closer = f.closer
	return exec
}

// subset is a File of the containers keep accepts, with their entries.
func (f *File) subset(keep func(Container) bool) *File {
	out := &File{Kind: f.Kind, Sections: f.Sections}
	for _, c := range f.Containers {
		if !keep(c) || c.First < 0 || c.N < 0 || c.First+c.N > len(f.Entries) {
			continue
		}
		ci := len(out.Containers)
		nc := c
		nc.First = len(out.Entries)
		out.Containers = append(out.Containers, nc)
		for _, e := range f.Entries[c.First : c.First+c.N] {
			e.Container = ci
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// All is every fatbin of f, executable and relocatable, in file order: what
// `cuobjdump -all` lists. It is f itself when f has no separate relocatable code.
func (f *File) All() *File {
	if f == nil || f.Relocatable == nil {
		return f
	}
	both := &File{Kind: f.Kind, Sections: f.Sections,
		Containers: append(append([]Container(nil), f.Containers...), f.Relocatable.Containers...)}
	slices.SortStableFunc(both.Containers, func(a, b Container) int { return cmp.Compare(a.Offset, b.Offset) })
	for ci, c := range both.Containers {
		src := f.Entries
		if c.Section == RelocatableSection {
			src = f.Relocatable.Entries
		}
		first := len(both.Entries)
		for _, e := range src[c.First : c.First+c.N] {
			e.Container = ci
			both.Entries = append(both.Entries, e)
		}
		both.Containers[ci].First = first
	}
	return both
}

func isFatbinSection(name string) bool {
	for _, n := range fatbinSections {
		if name == n {
			return true
		}
	}
	return false
}

// cubinVersionFix lets debug/elf read cubins of ptxas 12.x, which write the CUDA
// version into e_version (121 for 12.1, 128 for 12.8: bitsandbytes 0.50.2's cuda121
// library, ptxas 12.8 -arch=sm_90) where debug/elf insists on EV_CURRENT (1). For an
// ELF whose e_machine is EM_CUDA it returns r with e_version read as 1; anything else
// is returned as is.
func cubinVersionFix(r io.ReaderAt) io.ReaderAt {
	var h [24]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return r
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	if elf.Machine(bo.Uint16(h[18:])) != elf.EM_CUDA || bo.Uint32(h[20:]) == uint32(elf.EV_CURRENT) {
		return r
	}
	return versionPatched{r, bo}
}

// versionPatched is a cubin whose e_version (bytes 20-23) reads as EV_CURRENT.
type versionPatched struct {
	io.ReaderAt
	bo binary.ByteOrder
}

func (v versionPatched) ReadAt(p []byte, off int64) (int, error) {
	n, err := v.ReaderAt.ReadAt(p, off)
	var one [4]byte
	v.bo.PutUint32(one[:], uint32(elf.EV_CURRENT))
	for i := 0; i < 4; i++ {
		if at := 20 + int64(i) - off; at >= 0 && at < int64(n) {
			p[at] = one[i]
		}
	}
	return n, err
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
	flags := ef.ByteOrder.Uint32(b[:])
	sm := CubinSM(flags)
	if sm == 0 {
		return nil, formatErr(off, "cubin: no SM in e_flags %#x", flags)
	}
	e := Entry{Kind: cudaarch.SASS, RawKind: rawKindELF, SM: sm, Container: -1}
	if CubinArchSpecific(flags) || compatArchSpecific(ef) {
		e.Variant = cudaarch.VariantArch
	}
	return &File{Kind: KindCubin, Entries: []Entry{e}}, nil
}

// CubinSM reads the SM number from a cubin's e_flags. Two layouts exist:
//   - ptxas up to CUDA 12.x for sm_90 and older (EI_ABIVERSION 7): the SM in the low
//     byte, the virtual SM in bits 16-23 (sm_90: 0x5a055a);
//   - the newer one (EI_ABIVERSION 8; every target of CUDA 13's ptxas, sm_100+ of
//     12.8's): the SM in bits 8-15, small flags in the low byte (sm_100: 0x6006402).
//
// The low byte of the newer layout is a small flag value, never an SM number (>= 20),
// which tells the two apart (readings in testdata/real/cubins/README.md). 0 means no
// SM could be read.
func CubinSM(flags uint32) int {
	if lo := int(flags & 0xff); lo >= 20 {
		return lo
	}
	if sm := int(flags >> 8 & 0xff); sm >= 20 {
		return sm
	}
	return 0
}

// e_flags bits marking an arch-specific (`a`) cubin: 0x800 in the older layout
// (ptxas 12.8 -arch=sm_90a: 0x5a0d5a vs sm_90's 0x5a055a), 0x8 in the newer one
// (ptxas 12.8 sm_100a: 0x600640a; flashinfer-cubin's sm_100a/sm_103a kernels). cuobjdump
// 13.5 prints sm_90a / sm_100a for exactly these (testdata/real/cubins).
const (
	cubinArchFlagV1 = 0x800
	cubinArchFlagV2 = 0x8
)

// CubinArchSpecific says whether e_flags mark an arch-specific cubin. CUDA 13's ptxas
// sets neither bit and says it in the .nv.compat section instead (compatArchSpecific).
func CubinArchSpecific(flags uint32) bool {
	if flags&0xff >= 20 {
		return flags&cubinArchFlagV1 != 0
	}
	return flags&cubinArchFlagV2 != 0
}

// maxCompatSection caps the .nv.compat bytes read: real ones are 36-40 bytes.
const maxCompatSection = 4096

// compatAttrArchSpecific is the .nv.compat attribute that CUDA 13's ptxas sets to 1
// for -arch=sm_XXa (and to 0 for sm_XX and sm_XXf): the only byte that differs
// between nvcc 13.0's sm_100 and sm_100a cubins besides the ptxas command line note.
const compatAttrArchSpecific = 0x09

// compatArchSpecific reads the cubin's .nv.compat attributes, records in .nv.info's
// format: u8 format, u8 attribute, then a byte (format 2) or u16 (format 3) value in
// the next two bytes, or (format 4) a u16 size and that many bytes. Anything it does
// not understand ends the reading: the answer is then "not arch-specific".
func compatArchSpecific(ef *elf.File) bool {
	s := ef.Section(".nv.compat")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 || s.Size > maxCompatSection {
		return false
	}
	b, err := s.Data()
	if err != nil {
		return false
	}
	for len(b) >= 4 {
		format, attr := b[0], b[1]
		switch format {
		case 2, 3:
			if attr == compatAttrArchSpecific {
				return b[2] != 0
			}
			b = b[4:]
		case 4:
			n := int(binary.LittleEndian.Uint16(b[2:]))
			if 4+n > len(b) {
				return false
			}
			b = b[4+n:]
		default:
			return false
		}
	}
	return false
}

// SegmentSection is where the CUDA runtime's registration records live: one
// __fatBinC_Wrapper_t per container of .nv_fatbin, {u32 magic, u32 version,
// u64 address of the container, u64 unused}, 24 bytes each.
const SegmentSection = ".nvFatBinSegment"

// segmentHints turns the use of .nvFatBinSegment on (tests and benchmarks
// turn it off to compare).
var segmentHints = true

const (
	wrapperMagic = 0x466243b1
	wrapperSize  = 24
	// maxSegmentBytes caps what is read of .nvFatBinSegment (libtorch_cuda.so's is
	// 10,656 bytes for 444 containers).
	maxSegmentBytes = 4 << 20
)

// segmentPointers returns the container addresses that ef's .nvFatBinSegment
// records, or nil. The addresses are link-time virtual addresses: a shared
// library's loader relocates them, and the linker writes the unrelocated value
// in the file (checked on torch 2.11's libtorch_cuda.so: all 444 point at a
// container's magic). Only 64-bit little-endian ELF files are read.
func segmentPointers(r io.ReaderAt, ef *elf.File, fileSize int64, sizeKnown bool) []uint64 {
	if ef.Class != elf.ELFCLASS64 || ef.ByteOrder != binary.LittleEndian {
		return nil
	}
	s := ef.Section(SegmentSection)
	if s == nil || s.Type == elf.SHT_NOBITS || s.FileSize == 0 || s.FileSize > maxSegmentBytes {
		return nil
	}
	off, n := int64(s.Offset), int64(s.FileSize)
	if off < 0 || off+n < off || (sizeKnown && off+n > fileSize) {
		return nil
	}
	b := make([]byte, n)
	if readFull(r, b, off) != nil {
		return nil
	}
	return parseSegment(b)
}

// parseSegment reads the container addresses of the wrapper records in b
// (records without the wrapper magic are skipped).
func parseSegment(b []byte) []uint64 {
	var ptrs []uint64
	for p := 0; p+wrapperSize <= len(b); p += wrapperSize {
		if binary.LittleEndian.Uint32(b[p:]) != wrapperMagic {
			continue
		}
		ptrs = append(ptrs, binary.LittleEndian.Uint64(b[p+8:]))
	}
	return ptrs
}

// containerStarts turns the addresses that fall inside the section loaded at
// addr (file offset off, size bytes) into file offsets, sorted and unique.
// They are hints for the prefetch only: nothing is believed until the walk
// reads a container's magic there.
func containerStarts(ptrs []uint64, addr uint64, off, size int64) []int64 {
	if addr == 0 || size < containerHeaderSize {
		return nil // not loaded: the addresses cannot be placed
	}
	var starts []int64
	for _, p := range ptrs {
		if p >= addr && p-addr <= uint64(size-containerHeaderSize) {
			starts = append(starts, off+int64(p-addr))
		}
	}
	slices.Sort(starts)
	return slices.Compact(starts)
}
