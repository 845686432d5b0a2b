// Package elfdyn reads what the dynamic linker sees in an ELF shared object:
// the dynamic section (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH) and the
// dynamic symbol table (.dynsym with its .dynstr), names only.
//
// It is built for large libraries: torch's libtorch_cpu.so has a few hundred
// thousand dynamic symbols and tens of MB of .dynstr. Each table is read with
// one ReadAt and parsed in place; symbol names are substrings of one string,
// so walking every symbol allocates nothing per symbol.
//
// Sizes and offsets in the file are never trusted: each section is checked
// against the file's size, the tables read are capped (MaxTableBytes), and
// malformed input gives a *FormatError, never a panic.
package elfdyn

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"unsafe"
)

// MaxTableBytes caps the .dynsym and .dynstr bytes read from one file
// together. libtorch_cpu.so (torch 2.11) holds about 60 MB of both; 256 MB
// leaves room for bigger libraries and stops a hostile header from making us
// allocate gigabytes.
const MaxTableBytes = 256 << 20

// maxDynamicBytes caps the dynamic section: real ones hold a few dozen
// entries (16 bytes each); 1 MB is 65536 entries.
const maxDynamicBytes = 1 << 20

// maxDynString caps one string of the dynamic section (a library name, a
// run path).
const maxDynString = 4096

// FormatError reports a malformed file.
type FormatError struct {
	Msg string
}

func (e *FormatError) Error() string { return "elfdyn: " + e.Msg }

func formatErr(format string, args ...any) error {
	return &FormatError{Msg: fmt.Sprintf(format, args...)}
}

// ErrNotELF means the file does not start with the ELF magic.
var ErrNotELF = errors.New("elfdyn: not an ELF file")

// ErrNoDynamic means the file has no dynamic symbol table (a static
// executable, an object file).
var ErrNoDynamic = errors.New("elfdyn: no dynamic symbol table")

// Section is one section header, as much of it as callers need.
type Section struct {
	Name   string
	Type   elf.SectionType
	Offset uint64
	Size   uint64 // bytes in the file (0 for SHT_NOBITS)
	Link   uint32 // sh_link: the section a symbol or hash table belongs to
}

// File is an opened shared object. The dynamic section's strings are read by
// Open; the symbol table only when Symbols is called.
type File struct {
	Machine  elf.Machine
	Class    elf.Class
	Type     elf.Type
	Sections []Section
	// Needed are the DT_NEEDED entries in order; SOName is DT_SONAME.
	Needed  []string
	SOName  string
	RPath   string // DT_RPATH
	RunPath string // DT_RUNPATH

	r        io.ReaderAt
	data     []byte // the whole file, when it was opened in memory (OpenBytes)
	size     int64
	order    binary.ByteOrder
	dynsym   Section
	dynstr   Section
	hasTable bool
	dynsymAt int // index of .dynsym in Sections (hash tables link to it)
}

// Open reads the ELF header, the section headers and the dynamic section of
// the size bytes of r. A file without a dynamic section is not an error
// (Needed is empty).
func Open(r io.ReaderAt, size int64) (f *File, err error) { return openFile(r, size, nil) }

// openFile is Open; data, when not nil, is the whole file (r reads it).
func openFile(r io.ReaderAt, size int64, data []byte) (f *File, err error) {
	var magic [4]byte
	if _, err := r.ReadAt(magic[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrNotELF
		}
		return nil, err
	}
	if string(magic[:]) != elf.ELFMAG {
		return nil, ErrNotELF
	}
	// debug/elf has panicked on crafted inputs in past releases; whatever it
	// does, a malformed file must come back as an error.
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, formatErr("malformed ELF: %v", p)
		}
	}()
	if err := CheckHeader(r, size); err != nil { // F3: before debug/elf trusts the counts
		return nil, err
	}
	h, ok := readHeaders(r, size, data)
	if !ok {
		// Anything unusual (an error, compressed sections, extended
		// numbering) is left to debug/elf, which says what is wrong.
		ef, err := elf.NewFile(io.NewSectionReader(r, 0, size))
		if err != nil {
			return nil, formatErr("bad ELF: %v", err)
		}
		h = headersOf(ef)
	}
	f = &File{Machine: h.machine, Class: h.class, Type: h.typ, r: r, data: data, size: size, order: h.order}
	var dynamic *rawSection
	f.Sections = make([]Section, 0, len(h.sections))
	for i := range h.sections {
		s := &h.sections[i]
		sec := Section{Name: s.name, Type: s.typ, Offset: s.offset, Link: s.link}
		if s.typ != elf.SHT_NOBITS {
			sec.Size = s.fileSize
			if s.typ != elf.SHT_NULL && (s.offset > uint64(size) || s.fileSize > uint64(size)-s.offset) {
				return nil, formatErr("section %q (%d bytes at %#x) runs past the end of the file (%d bytes)", s.name, s.fileSize, s.offset, size)
			}
		}
		f.Sections = append(f.Sections, sec)
		switch s.typ {
		case elf.SHT_DYNSYM:
			if f.hasTable {
				continue
			}
			if int(s.link) >= len(h.sections) || h.sections[s.link].typ != elf.SHT_STRTAB {
				return nil, formatErr(".dynsym links section %d, not a string table", s.link)
			}
			str := h.sections[s.link]
			f.dynsym = sec
			f.dynsymAt = len(f.Sections) - 1
			f.dynstr = Section{Name: str.name, Type: str.typ, Offset: str.offset, Size: str.fileSize}
			if str.offset > uint64(size) || str.fileSize > uint64(size)-str.offset {
				return nil, formatErr("string table %q runs past the end of the file", str.name)
			}
			f.hasTable = true
		case elf.SHT_DYNAMIC:
			if dynamic == nil {
				dynamic = s
			}
		}
	}
	if dynamic != nil {
		if err := f.readDynamic(h.sections, dynamic); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// OpenBytes is Open on a file held whole in memory. The File and its
// Symbols read b in place instead of copying out of it (a dynamic string, a
// symbol table), so b must not change while they are in use, and a symbol
// name kept longer than b must be copied.
func OpenBytes(b []byte) (*File, error) { return openFile(bytes.NewReader(b), int64(len(b)), b) }

// Section returns the first section named name.
func (f *File) Section(name string) (Section, bool) {
	for _, s := range f.Sections {
		if s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// readDynamic reads the dynamic entries and the few strings they name, each
// with a small read: the string table itself can be tens of MB.
func (f *File) readDynamic(sections []rawSection, s *rawSection) error {
	if s.fileSize > maxDynamicBytes {
		return formatErr("dynamic section of %d bytes (cap %d)", s.fileSize, maxDynamicBytes)
	}
	if int(s.link) >= len(sections) || sections[s.link].typ != elf.SHT_STRTAB {
		return formatErr("dynamic section links section %d, not a string table", s.link)
	}
	strs := sections[s.link]
	if strs.offset > uint64(f.size) || strs.fileSize > uint64(f.size)-strs.offset {
		return formatErr("dynamic string table runs past the end of the file")
	}
	var buf []byte
	if f.data != nil {
		buf = f.data[s.offset : s.offset+s.fileSize] // Open checked it lies in the file
	} else {
		buf = make([]byte, s.fileSize)
		if _, err := f.r.ReadAt(buf, int64(s.offset)); err != nil {
			return formatErr("reading the dynamic section: %v", err)
		}
	}
	entSize := 16
	if f.Class == elf.ELFCLASS32 {
		entSize = 8
	}
	for off := 0; off+entSize <= len(buf); off += entSize {
		var tag, val uint64
		if entSize == 16 {
			tag, val = f.order.Uint64(buf[off:]), f.order.Uint64(buf[off+8:])
		} else {
			tag, val = uint64(f.order.Uint32(buf[off:])), uint64(f.order.Uint32(buf[off+4:]))
		}
		if elf.DynTag(tag) == elf.DT_NULL {
			break
		}
		var dst *string
		switch elf.DynTag(tag) {
		case elf.DT_NEEDED:
			f.Needed = append(f.Needed, "")
			dst = &f.Needed[len(f.Needed)-1]
		case elf.DT_SONAME:
			dst = &f.SOName
		case elf.DT_RPATH:
			dst = &f.RPath
		case elf.DT_RUNPATH:
			dst = &f.RunPath
		default:
			continue
		}
		str, err := f.stringAt(strs.offset, strs.fileSize, val)
		if err != nil {
			return err
		}
		*dst = str
	}
	return nil
}

// stringAt reads the NUL-terminated string at index idx of the string table
// at tabOff (tabSize bytes).
func (f *File) stringAt(tabOff, tabSize, idx uint64) (string, error) {
	if idx >= tabSize {
		return "", formatErr("string index %d outside its table (%d bytes)", idx, tabSize)
	}
	n := min(tabSize-idx, maxDynString)
	var buf []byte
	if f.data != nil {
		buf = f.data[tabOff+idx : tabOff+idx+n] // readDynamic checked the table lies in the file
	} else {
		buf = make([]byte, n)
		if _, err := f.r.ReadAt(buf, int64(tabOff+idx)); err != nil && !errors.Is(err, io.EOF) {
			return "", formatErr("reading a dynamic string: %v", err)
		}
	}
	end := bytes.IndexByte(buf, 0)
	if end < 0 {
		return "", formatErr("dynamic string at %d is not terminated within %d bytes", idx, n)
	}
	return string(buf[:end]), nil
}

// Symbol is one dynamic symbol.
type Symbol struct {
	Name string
	Bind elf.SymBind
	Type elf.SymType
	// Defined is false for undefined symbols (section index SHN_UNDEF):
	// references another object must satisfy.
	Defined bool
}

// Symbols is the dynamic symbol table, read once.
type Symbols struct {
	syms    []byte
	strs    string
	entSize int
	order   binary.ByteOrder
	is64    bool
}

// Symbols reads .dynsym and its string table, one ReadAt each. The tables
// may be large; the caller keeps the result only as long as it needs it.
func (f *File) Symbols() (*Symbols, error) {
	if !f.hasTable {
		return nil, ErrNoDynamic
	}
	if f.dynsym.Size > MaxTableBytes || f.dynstr.Size > MaxTableBytes-f.dynsym.Size {
		return nil, formatErr("dynamic symbol tables of %d + %d bytes exceed the %d-byte cap", f.dynsym.Size, f.dynstr.Size, MaxTableBytes)
	}
	s := &Symbols{order: f.order, is64: f.Class == elf.ELFCLASS64, entSize: 16}
	if s.is64 {
		s.entSize = 24
	}
	var strs []byte
	if f.data != nil {
		// Open checked that both lie in the file.
		s.syms = f.data[f.dynsym.Offset : f.dynsym.Offset+f.dynsym.Size]
		strs = f.data[f.dynstr.Offset : f.dynstr.Offset+f.dynstr.Size]
	} else {
		s.syms = make([]byte, f.dynsym.Size)
		if _, err := f.r.ReadAt(s.syms, int64(f.dynsym.Offset)); err != nil {
			return nil, formatErr("reading .dynsym: %v", err)
		}
		strs = make([]byte, f.dynstr.Size)
		if _, err := f.r.ReadAt(strs, int64(f.dynstr.Offset)); err != nil {
			return nil, formatErr("reading the dynamic string table: %v", err)
		}
	}
	// The bytes are never written again, so the string can share them
	// instead of copying tens of MB.
	if len(strs) > 0 {
		s.strs = unsafe.String(&strs[0], len(strs))
	}
	return s, nil
}

// Len is the number of entries, the null symbol included.
func (s *Symbols) Len() int { return len(s.syms) / s.entSize }

// All yields every named symbol but the null one, in table order. Names are
// substrings of the string table: keeping one keeps the table alive. A
// symbol whose name lies outside the table or is unterminated is skipped.
func (s *Symbols) All() iter.Seq[Symbol] {
	return func(yield func(Symbol) bool) {
		for off := s.entSize; off+s.entSize <= len(s.syms); off += s.entSize {
			e := s.syms[off : off+s.entSize]
			var name uint32
			var info uint8
			var shndx uint16
			if s.is64 {
				name, info, shndx = s.order.Uint32(e[0:]), e[4], s.order.Uint16(e[6:])
			} else {
				name, info, shndx = s.order.Uint32(e[0:]), e[12], s.order.Uint16(e[14:])
			}
			if name == 0 || int64(name) >= int64(len(s.strs)) {
				continue
			}
			rest := s.strs[name:]
			end := strings.IndexByte(rest, 0)
			if end <= 0 {
				continue
			}
			sym := Symbol{Name: rest[:end], Bind: elf.ST_BIND(info), Type: elf.ST_TYPE(info), Defined: elf.SectionIndex(shndx) != elf.SHN_UNDEF}
			if !yield(sym) {
				return
			}
		}
	}
}

// Exported reports whether sym is visible to other objects: global, weak
// or GNU unique binding.
func Exported(sym Symbol) bool {
	return sym.Bind == elf.STB_GLOBAL || sym.Bind == elf.STB_WEAK || sym.Bind == 10 /* STB_GNU_UNIQUE */
}
