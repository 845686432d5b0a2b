package zstd

import (
	"encoding/binary"
	"math/bits"
)

// backReader reads a bitstream backwards, as FSE and Huffman streams are
// written (RFC 8878 section 4.1): the stream's last byte holds a 1 bit above
// its highest payload bit, and fields are read from the top down.
//
// value holds the 8 bytes in[pos:pos+8] little-endian, so the next unread
// bit is bit 63-consumed. A refill moves pos down by the whole bytes already
// consumed, so one refill leaves at least 57 bits to read while pos > 0.
// A stream shorter than 8 bytes is copied into short with zero bytes on top
// counted as consumed. Reading past the stream's start yields zero bits;
// finished tells whether exactly every bit was read, the check of a
// well-formed stream.
type backReader struct {
	value    uint64
	consumed uint
	pos      int
	in       []byte
	short    [8]byte
}

// init starts reading stream; it fails on an empty stream or a last byte
// of zero (no end marker).
func (b *backReader) init(stream []byte) bool {
	n := len(stream)
	if n == 0 || stream[n-1] == 0 {
		return false
	}
	if n >= 8 {
		b.in = stream
		b.pos = n - 8
		b.consumed = 0
	} else {
		b.short = [8]byte{}
		copy(b.short[:], stream)
		b.in = b.short[:]
		b.pos = 0
		b.consumed = uint(8-n) * 8
	}
	b.value = binary.LittleEndian.Uint64(b.in[b.pos:])
	b.consumed += uint(bits.LeadingZeros8(stream[n-1])) + 1
	return true
}

// refill loads the bytes below the consumed ones.
func (b *backReader) refill() {
	if b.pos == 0 {
		return
	}
	step := int(b.consumed >> 3)
	if step <= b.pos {
		b.pos -= step
		b.consumed &= 7
	} else {
		b.consumed -= uint(b.pos) * 8
		b.pos = 0
	}
	b.value = binary.LittleEndian.Uint64(b.in[b.pos : b.pos+8])
}

// get reads n bits (n <= 57 after a refill); n may be 0.
func (b *backReader) get(n uint8) uint64 {
	v := (b.value << (b.consumed & 63)) >> 1 >> ((63 - n) & 63)
	b.consumed += uint(n)
	return v
}

// finished reports whether every bit of the stream was read, no more.
func (b *backReader) finished() bool {
	return b.pos == 0 && b.consumed == 64
}

// overflowed reports whether more bits were read than the stream holds.
func (b *backReader) overflowed() bool {
	return b.pos == 0 && b.consumed > 64
}

// forwardBits reads the little-endian, low-bit-first fields of an FSE table
// description. Bits past the end of src read as zero; the caller checks the
// final position against len(src).
type forwardBits struct {
	src []byte
	pos int // in bits
}

// peek returns the next n bits (n <= 24) without consuming them.
func (f *forwardBits) peek(n int) uint32 {
	i := f.pos >> 3
	var w uint32
	for k := 0; k < 4; k++ {
		if i+k < len(f.src) && i+k >= 0 {
			w |= uint32(f.src[i+k]) << (8 * k)
		}
	}
	return (w >> (f.pos & 7)) & (1<<n - 1)
}
