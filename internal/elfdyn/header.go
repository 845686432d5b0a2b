package elfdyn

import (
	"debug/elf"
	"encoding/binary"
	"io"
)

// Caps on the header tables of an ELF file (SECURITY.md, docs/security.md).
// debug/elf allocates a Section for every entry e_shnum claims before it
// reads any of them, so a 4 KB file claiming 10 million sections cost GBs
// (F3). Every place fastpath opens an ELF file calls CheckHeader first.
const (
	// MaxSections is the most section headers accepted. Real shared
	// libraries have about 30 to 60; objects built with
	// -ffunction-sections a few thousand.
	MaxSections = 1 << 16
	// MaxProgHeaders is the most program headers accepted (real: < 20).
	MaxProgHeaders = 1 << 12
)

// CheckHeader validates the ELF header of the size-byte file r against the
// file's size and the caps above, before debug/elf is handed the file: the
// section and program header tables must lie inside the file, have the
// entry size of their class, and hold at most MaxSections/MaxProgHeaders
// entries. It reads only the header and, for the extended section count
// (e_shnum 0), section header 0. A file that is not ELF is an error.
func CheckHeader(r io.ReaderAt, size int64) error {
	var id [elf.EI_NIDENT]byte
	if size < int64(len(id)) {
		return formatErr("bad ELF: header: file of %d bytes is too short", size)
	}
	if _, err := r.ReadAt(id[:], 0); err != nil {
		return formatErr("bad ELF: header: %v", err)
	}
	if string(id[:4]) != elf.ELFMAG {
		return ErrNotELF
	}
	var order binary.ByteOrder
	switch elf.Data(id[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return formatErr("bad ELF: header: unknown data encoding %d", id[elf.EI_DATA])
	}
	var (
		phoff, shoff                   uint64
		phentsize, phnum               uint64
		shentsize, shnum, shstrndx     uint64
		wantShentsize, wantPhentsize   uint64
		hdrSize                        int64
		sh0SizeOff, sh0LinkOff, sh0Len int64
	)
	switch elf.Class(id[elf.EI_CLASS]) {
	case elf.ELFCLASS64:
		hdrSize, wantShentsize, wantPhentsize = 64, 64, 56
		sh0SizeOff, sh0LinkOff, sh0Len = 32, 40, 64
	case elf.ELFCLASS32:
		hdrSize, wantShentsize, wantPhentsize = 52, 40, 32
		sh0SizeOff, sh0LinkOff, sh0Len = 20, 24, 40
	default:
		return formatErr("bad ELF: header: unknown class %d", id[elf.EI_CLASS])
	}
	if size < hdrSize {
		return formatErr("bad ELF: header: file of %d bytes is shorter than its header", size)
	}
	hdr := make([]byte, hdrSize)
	if _, err := r.ReadAt(hdr, 0); err != nil {
		return formatErr("bad ELF: header: %v", err)
	}
	if hdrSize == 64 {
		phoff, shoff = order.Uint64(hdr[32:]), order.Uint64(hdr[40:])
		phentsize, phnum = uint64(order.Uint16(hdr[54:])), uint64(order.Uint16(hdr[56:]))
		shentsize, shnum, shstrndx = uint64(order.Uint16(hdr[58:])), uint64(order.Uint16(hdr[60:])), uint64(order.Uint16(hdr[62:]))
	} else {
		phoff, shoff = uint64(order.Uint32(hdr[28:])), uint64(order.Uint32(hdr[32:]))
		phentsize, phnum = uint64(order.Uint16(hdr[42:])), uint64(order.Uint16(hdr[44:]))
		shentsize, shnum, shstrndx = uint64(order.Uint16(hdr[46:])), uint64(order.Uint16(hdr[48:])), uint64(order.Uint16(hdr[50:]))
	}
	fsize := uint64(size)
	fits := func(off, n, ent uint64) bool {
		return off <= fsize && n <= (fsize-off)/max(ent, 1)
	}
	// Extended numbering: e_shnum 0 (with a section table) or e_shstrndx
	// SHN_XINDEX put the real values in section header 0, as debug/elf reads.
	if shoff != 0 && (shnum == 0 || shstrndx == uint64(elf.SHN_XINDEX)) {
		if shentsize != wantShentsize || !fits(shoff, 1, shentsize) {
			return formatErr("bad ELF: header: section header 0 at %#x is outside the %d-byte file", shoff, size)
		}
		sh0 := make([]byte, sh0Len)
		if _, err := r.ReadAt(sh0, int64(shoff)); err != nil {
			return formatErr("bad ELF: section header 0: %v", err)
		}
		if shnum == 0 {
			if hdrSize == 64 {
				shnum = order.Uint64(sh0[sh0SizeOff:])
			} else {
				shnum = uint64(order.Uint32(sh0[sh0SizeOff:]))
			}
		}
		if shstrndx == uint64(elf.SHN_XINDEX) {
			shstrndx = uint64(order.Uint32(sh0[sh0LinkOff:]))
		}
	}
	if phnum == 0xffff { // PN_XNUM: the count is in section 0's sh_info; never real
		return formatErr("bad ELF: header: extended program header count is not supported")
	}
	if shnum > MaxSections {
		return formatErr("bad ELF: header claims %d sections, more than the %d read", shnum, MaxSections)
	}
	if phnum > MaxProgHeaders {
		return formatErr("bad ELF: header claims %d program headers, more than the %d read", phnum, MaxProgHeaders)
	}
	if shnum > 0 {
		if shentsize != wantShentsize {
			return formatErr("bad ELF: header: section header size %d, want %d", shentsize, wantShentsize)
		}
		if !fits(shoff, shnum, shentsize) {
			return formatErr("bad ELF: header: %d section headers at %#x run past the end of the %d-byte file", shnum, shoff, size)
		}
		if shstrndx >= shnum && shstrndx != uint64(elf.SHN_UNDEF) {
			return formatErr("bad ELF: header: section name table index %d out of %d sections", shstrndx, shnum)
		}
	}
	if phnum > 0 {
		if phentsize != wantPhentsize {
			return formatErr("bad ELF: header: program header size %d, want %d", phentsize, wantPhentsize)
		}
		if !fits(phoff, phnum, phentsize) {
			return formatErr("bad ELF: header: %d program headers at %#x run past the end of the %d-byte file", phnum, phoff, size)
		}
	}
	return nil
}
