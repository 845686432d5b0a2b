package zstd

import (
	"encoding/binary"
	"math/bits"
)

// XXH64 with seed 0, written from the xxHash specification
// (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md). A
// frame's Content_Checksum is the low 32 bits of it over the frame's
// decompressed bytes.

const (
	prime64x1 uint64 = 0x9E3779B185EBCA87
	prime64x2 uint64 = 0xC2B2AE3D27D4EB4F
	prime64x3 uint64 = 0x165667B19E3779F9
	prime64x4 uint64 = 0x85EBCA77C2B2AE63
	prime64x5 uint64 = 0x27D4EB2F165667C5
)

// xxh64 is the streaming state: four lane accumulators, the bytes of an
// unfinished 32-byte stripe and the total length.
type xxh64 struct {
	acc   [4]uint64
	buf   [32]byte
	nbuf  int
	total uint64
}

func (h *xxh64) reset() {
	p1 := prime64x1 // a variable: the sum below wraps, as the spec means it to
	h.acc = [4]uint64{p1 + prime64x2, prime64x2, 0, -p1}
	h.nbuf = 0
	h.total = 0
}

func xxhRound(acc, lane uint64) uint64 {
	return bits.RotateLeft64(acc+lane*prime64x2, 31) * prime64x1
}

func (h *xxh64) write(p []byte) {
	h.total += uint64(len(p))
	if h.nbuf > 0 {
		n := copy(h.buf[h.nbuf:], p)
		h.nbuf += n
		p = p[n:]
		if h.nbuf < 32 {
			return
		}
		h.stripes(h.buf[:])
		h.nbuf = 0
	}
	if len(p) >= 32 {
		n := len(p) &^ 31
		h.stripes(p[:n])
		p = p[n:]
	}
	h.nbuf = copy(h.buf[:], p)
}

// stripes consumes whole 32-byte stripes; len(p) is a multiple of 32.
func (h *xxh64) stripes(p []byte) {
	a0, a1, a2, a3 := h.acc[0], h.acc[1], h.acc[2], h.acc[3]
	for ; len(p) >= 32; p = p[32:] {
		a0 = xxhRound(a0, binary.LittleEndian.Uint64(p[0:8]))
		a1 = xxhRound(a1, binary.LittleEndian.Uint64(p[8:16]))
		a2 = xxhRound(a2, binary.LittleEndian.Uint64(p[16:24]))
		a3 = xxhRound(a3, binary.LittleEndian.Uint64(p[24:32]))
	}
	h.acc = [4]uint64{a0, a1, a2, a3}
}

func xxhMerge(acc, lane uint64) uint64 {
	return (acc^xxhRound(0, lane))*prime64x1 + prime64x4
}

func (h *xxh64) sum() uint64 {
	var acc uint64
	if h.total >= 32 {
		a := h.acc
		acc = bits.RotateLeft64(a[0], 1) + bits.RotateLeft64(a[1], 7) +
			bits.RotateLeft64(a[2], 12) + bits.RotateLeft64(a[3], 18)
		for _, v := range a {
			acc = xxhMerge(acc, v)
		}
	} else {
		acc = prime64x5 // the seed is 0
	}
	acc += h.total
	p := h.buf[:h.nbuf]
	for ; len(p) >= 8; p = p[8:] {
		acc ^= xxhRound(0, binary.LittleEndian.Uint64(p))
		acc = bits.RotateLeft64(acc, 27)*prime64x1 + prime64x4
	}
	if len(p) >= 4 {
		acc ^= uint64(binary.LittleEndian.Uint32(p)) * prime64x1
		acc = bits.RotateLeft64(acc, 23)*prime64x2 + prime64x3
		p = p[4:]
	}
	for _, c := range p {
		acc ^= uint64(c) * prime64x5
		acc = bits.RotateLeft64(acc, 11) * prime64x1
	}
	acc ^= acc >> 33
	acc *= prime64x2
	acc ^= acc >> 29
	acc *= prime64x3
	acc ^= acc >> 32
	return acc
}
