// Package hostile generates hostile inputs for fastpath's tests: roots with
// FIFOs, link loops and links to the host, ELF bombs, huge and binary logs,
// malformed configs. The inputs are small on disk and built at test time;
// the harness (internal/hostile's tests) runs the real binary on each.
package hostile

import "encoding/binary"

// ELFSectionBomb returns a 4 KiB little-endian ELF64 shared object whose
// header claims nsect section headers through extended numbering (e_shnum
// 0, the count in section header 0's sh_size), as the F3 report's file did.
// debug/elf allocates a Section per claimed entry before reading any.
func ELFSectionBomb(nsect uint64) []byte {
	b := make([]byte, 4096)
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = 2, 1, 1 // ELFCLASS64, little-endian, EV_CURRENT
	le := binary.LittleEndian
	le.PutUint16(b[16:], 3)        // ET_DYN
	le.PutUint16(b[18:], 62)       // EM_X86_64
	le.PutUint32(b[20:], 1)        // e_version
	le.PutUint64(b[40:], 64)       // e_shoff: right after the header
	le.PutUint16(b[52:], 64)       // e_ehsize
	le.PutUint16(b[58:], 64)       // e_shentsize
	le.PutUint16(b[60:], 0)        // e_shnum 0: see section header 0
	le.PutUint16(b[62:], 1)        // e_shstrndx
	le.PutUint64(b[64+32:], nsect) // section header 0's sh_size: the real count
	return b
}

// ELFShnumBomb is ELFSectionBomb without extended numbering: e_shnum 65535
// section headers of 64 bytes claimed at an offset near the end of a 4 KiB file.
func ELFShnumBomb() []byte {
	b := ELFSectionBomb(0)
	le := binary.LittleEndian
	le.PutUint16(b[60:], 0xffff)
	le.PutUint64(b[40:], 4000)
	return b
}

// ELFFittingHeaders returns the 64-byte header of a size-byte ELF64 file
// whose 65,535 section headers lie at its very end: every count and offset
// is within the file and the caps, so debug/elf is handed it. Used with a
// sparse file, it checks that memory stays bounded when the check passes.
func ELFFittingHeaders(size int64) []byte {
	b := ELFSectionBomb(0)[:64]
	le := binary.LittleEndian
	le.PutUint16(b[60:], 0xffff)
	le.PutUint64(b[40:], uint64(size-0xffff*64))
	return b
}
