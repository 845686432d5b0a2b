package elfdyn

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"math"
)

// The ELF and section headers, read directly. debug/elf.NewFile reads them
// too, but builds a Section (with its own SectionReader), a Prog for each
// program header and a string per name: for the 4,096 small libraries of a
// big environment that was more garbage than anything else the extension
// scan made. readHeaders reads the same fields for the files every
// environment holds, and hands everything else (compressed sections,
// extended section numbering, anything debug/elf would refuse) back to
// debug/elf, so that the errors stay debug/elf's.

// headers is what Open needs of the ELF header and the section headers.
type headers struct {
	machine  elf.Machine
	class    elf.Class
	typ      elf.Type
	order    binary.ByteOrder
	sections []rawSection
}

// rawSection is one section header as the file has it.
type rawSection struct {
	name     string
	typ      elf.SectionType
	offset   uint64
	fileSize uint64 // sh_size, also for SHT_NOBITS
	link     uint32
}

// headersOf is what debug/elf read.
func headersOf(ef *elf.File) headers {
	h := headers{machine: ef.Machine, class: ef.Class, typ: ef.Type, order: ef.ByteOrder, sections: make([]rawSection, len(ef.Sections))}
	for i, s := range ef.Sections {
		h.sections[i] = rawSection{name: s.Name, typ: s.Type, offset: s.Offset, fileSize: s.FileSize, link: s.Link}
	}
	return h
}

// maxNameTable caps the section name table readHeaders reads itself (real
// ones: a few hundred bytes); a bigger one is left to debug/elf.
const maxNameTable = 1 << 20

// readHeaders reads the headers of the size bytes of r (data: the same
// bytes in memory, or nil), which CheckHeader accepted. ok is false where
// debug/elf.NewFile would fail or do more than read them; the caller then
// asks debug/elf.
func readHeaders(r io.ReaderAt, size int64, data []byte) (h headers, ok bool) {
	read := func(off, n uint64) ([]byte, bool) {
		if off > uint64(size) || n > uint64(size)-off {
			return nil, false
		}
		if data != nil {
			return data[off : off+n], true
		}
		b := make([]byte, n)
		_, err := r.ReadAt(b, int64(off))
		return b, err == nil
	}
	id, ok := read(0, elf.EI_NIDENT)
	if !ok || elf.Version(id[elf.EI_VERSION]) != elf.EV_CURRENT {
		return h, false
	}
	h.class = elf.Class(id[elf.EI_CLASS])
	switch elf.Data(id[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		h.order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		h.order = binary.BigEndian
	default:
		return h, false
	}
	o := h.order
	var version uint32
	var phoff, shoff uint64
	var phentsize, phnum, shentsize, shnum, shstrndx uint64
	var wantPhentsize, wantShentsize uint64
	switch h.class {
	case elf.ELFCLASS64:
		hdr, ok := read(0, 64)
		if !ok {
			return h, false
		}
		h.typ, h.machine, version = elf.Type(o.Uint16(hdr[16:])), elf.Machine(o.Uint16(hdr[18:])), o.Uint32(hdr[20:])
		phoff, shoff = o.Uint64(hdr[32:]), o.Uint64(hdr[40:])
		phentsize, phnum = uint64(o.Uint16(hdr[54:])), uint64(o.Uint16(hdr[56:]))
		shentsize, shnum, shstrndx = uint64(o.Uint16(hdr[58:])), uint64(o.Uint16(hdr[60:])), uint64(o.Uint16(hdr[62:]))
		wantPhentsize, wantShentsize = 56, 64
	case elf.ELFCLASS32:
		hdr, ok := read(0, 52)
		if !ok {
			return h, false
		}
		h.typ, h.machine, version = elf.Type(o.Uint16(hdr[16:])), elf.Machine(o.Uint16(hdr[18:])), o.Uint32(hdr[20:])
		phoff, shoff = uint64(o.Uint32(hdr[28:])), uint64(o.Uint32(hdr[32:]))
		phentsize, phnum = uint64(o.Uint16(hdr[42:])), uint64(o.Uint16(hdr[44:]))
		shentsize, shnum, shstrndx = uint64(o.Uint16(hdr[46:])), uint64(o.Uint16(hdr[48:])), uint64(o.Uint16(hdr[50:]))
		wantPhentsize, wantShentsize = 32, 40
	default:
		return h, false
	}
	// What debug/elf checks, or does beyond reading: each case goes to it.
	if version != uint32(elf.EV_CURRENT) || phoff > math.MaxInt64 || shoff > math.MaxInt64 ||
		shoff == 0 && shnum != 0 || shnum > 0 && shstrndx >= shnum ||
		phnum > 0 && phentsize != wantPhentsize || shnum > 0 && shentsize != wantShentsize ||
		shoff > 0 && shnum == 0 { // extended numbering
		return h, false
	}
	// Program headers: debug/elf reads them and refuses an offset or size
	// with the top bit set.
	if phnum > 0 {
		ph, ok := read(phoff, phnum*phentsize)
		if !ok {
			return h, false
		}
		for i := uint64(0); i < phnum; i++ {
			p := ph[i*phentsize:]
			var off, filesz uint64
			if h.class == elf.ELFCLASS64 {
				off, filesz = o.Uint64(p[8:]), o.Uint64(p[32:])
			} else {
				off, filesz = uint64(o.Uint32(p[4:])), uint64(o.Uint32(p[16:]))
			}
			if off > math.MaxInt64 || filesz > math.MaxInt64 {
				return h, false
			}
		}
	}
	if shnum == 0 {
		return h, true
	}
	sh, ok := read(shoff, shnum*shentsize)
	if !ok {
		return h, false
	}
	h.sections = make([]rawSection, shnum)
	names := make([]uint32, shnum)
	for i := range h.sections {
		e := sh[uint64(i)*shentsize:]
		s := &h.sections[i]
		var flags uint64
		if h.class == elf.ELFCLASS64 {
			names[i], s.typ, flags = o.Uint32(e[0:]), elf.SectionType(o.Uint32(e[4:])), o.Uint64(e[8:])
			s.offset, s.fileSize, s.link = o.Uint64(e[24:]), o.Uint64(e[32:]), o.Uint32(e[40:])
		} else {
			names[i], s.typ, flags = o.Uint32(e[0:]), elf.SectionType(o.Uint32(e[4:])), uint64(o.Uint32(e[8:]))
			s.offset, s.fileSize, s.link = uint64(o.Uint32(e[16:])), uint64(o.Uint32(e[20:])), o.Uint32(e[24:])
		}
		if s.offset > math.MaxInt64 || s.fileSize > math.MaxInt64 || flags&uint64(elf.SHF_COMPRESSED) != 0 {
			return h, false
		}
	}
	if shstrndx == 0 {
		return h, true // no names, as debug/elf leaves them
	}
	str := h.sections[shstrndx]
	if str.typ != elf.SHT_STRTAB || str.fileSize > maxNameTable {
		return h, false
	}
	tab, ok := read(str.offset, str.fileSize)
	if !ok {
		return h, false
	}
	// One string for all the names (a copy: data may be a reused buffer).
	all := string(tab)
	for i := range h.sections {
		start := uint64(names[i])
		if start >= uint64(len(all)) {
			return h, false
		}
		end := bytes.IndexByte(tab[start:], 0)
		if end < 0 {
			return h, false
		}
		h.sections[i].name = all[start : start+uint64(end)]
	}
	return h, true
}

// SectionHeaders reads the machine and the section headers of the size
// bytes of r, which CheckHeader accepted, without debug/elf: Section.Size
// is the size in the file, 0 for SHT_NOBITS. ok is false where debug/elf
// must read them (compressed sections, extended numbering, anything it
// would refuse); where ok is true, debug/elf reads the same headers.
func SectionHeaders(r io.ReaderAt, size int64) (machine elf.Machine, sections []Section, ok bool) {
	h, ok := readHeaders(r, size, nil)
	if !ok {
		return 0, nil, false
	}
	sections = make([]Section, len(h.sections))
	for i, s := range h.sections {
		sections[i] = Section{Name: s.name, Type: s.typ, Offset: s.offset, Link: s.link}
		if s.typ != elf.SHT_NOBITS {
			sections[i].Size = s.fileSize
		}
	}
	return h.machine, sections, true
}
