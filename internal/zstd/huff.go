package zstd

import "math/bits"

// Huffman-coded literals, RFC 8878 section 4.2.

const maxHuffLog = 11

// huffTable decodes one symbol per lookup: the next log bits of the stream
// index entries, each holding the symbol (low byte) and its code length
// (high byte).
type huffTable struct {
	entries [1 << maxHuffLog]uint16
	log     uint8
}

// readHuffTable reads a Huffman tree description from src into t and
// returns its size in bytes. scratch holds the FSE table of the weights.
func (t *huffTable) read(src []byte, scratch *[64]fseState) (int, bool) {
	if len(src) == 0 {
		return 0, false
	}
	var weights [256]uint8
	nw := 0
	size := 0
	hdr := int(src[0])
	if hdr >= 128 {
		// Direct representation: 4 bits per weight.
		nw = hdr - 127
		size = 1 + (nw+1)/2
		if size > len(src) {
			return 0, false
		}
		for i := 0; i < nw; i++ {
			b := src[1+i/2]
			if i&1 == 0 {
				weights[i] = b >> 4
			} else {
				weights[i] = b & 15
			}
		}
	} else {
		// FSE-compressed weights: hdr bytes, a table description then
		// a backward stream read by two interleaved states.
		size = 1 + hdr
		if size > len(src) {
			return 0, false
		}
		data := src[1:size]
		var norm [256]int16
		al, nsym, n, ok := readNormalized(data, 15, 6, &norm)
		if !ok || !buildFSE(norm[:nsym], al, scratch[:]) {
			return 0, false
		}
		var br backReader
		if !br.init(data[n:]) {
			return 0, false
		}
		mask := 1<<al - 1
		s1 := int(br.get(uint8(al)))
		s2 := int(br.get(uint8(al)))
		br.refill()
		for {
			if nw > 253 {
				return 0, false
			}
			e := scratch[s1&mask]
			weights[nw] = e.symbol
			nw++
			s1 = int(e.newState) + int(br.get(e.nbBits))
			br.refill()
			if br.overflowed() {
				weights[nw] = scratch[s2&mask].symbol
				nw++
				break
			}
			e = scratch[s2&mask]
			weights[nw] = e.symbol
			nw++
			s2 = int(e.newState) + int(br.get(e.nbBits))
			br.refill()
			if br.overflowed() {
				weights[nw] = scratch[s1&mask].symbol
				nw++
				break
			}
		}
	}
	if nw > 255 {
		return 0, false
	}
	// The last symbol's weight is implied: it completes the sum of
	// 2^(w-1) to a power of two.
	sum := 0
	for _, w := range weights[:nw] {
		if w > maxHuffLog {
			return 0, false
		}
		if w > 0 {
			sum += 1 << (w - 1)
		}
	}
	if sum == 0 {
		return 0, false
	}
	log := bits.Len(uint(sum))
	if log > maxHuffLog {
		return 0, false
	}
	rest := 1<<log - sum
	if rest&(rest-1) != 0 {
		return 0, false
	}
	weights[nw] = uint8(bits.Len(uint(rest)))
	nsym := nw + 1
	// Codes are handed out by rising weight, then by symbol: a symbol of
	// weight w covers 2^(w-1) consecutive entries.
	var start [maxHuffLog + 2]int
	var count [maxHuffLog + 2]int
	for _, w := range weights[:nsym] {
		count[w]++
	}
	pos := 0
	for w := 1; w <= maxHuffLog; w++ {
		start[w] = pos
		pos += count[w] << (w - 1)
	}
	if pos != 1<<log {
		return 0, false
	}
	for s, w := range weights[:nsym] {
		if w == 0 {
			continue
		}
		n := 1 << (w - 1)
		e := uint16(s) | uint16(log+1-int(w))<<8
		p := start[w]
		for i := p; i < p+n; i++ {
			t.entries[i] = e
		}
		start[w] = p + n
	}
	t.log = uint8(log)
	return size, true
}

// decode1 decodes one stream filling out.
func (t *huffTable) decode1(out, stream []byte) bool {
	var br backReader
	if !br.init(stream) {
		return false
	}
	shift := (64 - uint(t.log)) & 63
	tab := &t.entries
	i := 0
	for ; i+4 <= len(out); i += 4 {
		br.refill()
		for k := 0; k < 4; k++ {
			e := tab[((br.value<<(br.consumed&63))>>shift)&(1<<maxHuffLog-1)]
			out[i+k] = uint8(e)
			br.consumed += uint(e >> 8)
		}
	}
	for ; i < len(out); i++ {
		br.refill()
		e := tab[((br.value<<(br.consumed&63))>>shift)&(1<<maxHuffLog-1)]
		out[i] = uint8(e)
		br.consumed += uint(e >> 8)
	}
	br.refill()
	return br.finished()
}

// decode4 decodes the four streams of src (a 6-byte jump table, then the
// streams) into out, interleaving them so that their lookups overlap.
func (t *huffTable) decode4(out, src []byte) bool {
	if len(src) < 10 {
		return false
	}
	n1 := int(src[0]) | int(src[1])<<8
	n2 := int(src[2]) | int(src[3])<<8
	n3 := int(src[4]) | int(src[5])<<8
	src = src[6:]
	if n1+n2+n3 > len(src) {
		return false
	}
	seg := (len(out) + 3) / 4
	last := len(out) - 3*seg
	if last < 0 {
		return false
	}
	var b0, b1, b2, b3 backReader
	if !b0.init(src[:n1]) || !b1.init(src[n1:n1+n2]) || !b2.init(src[n1+n2:n1+n2+n3]) || !b3.init(src[n1+n2+n3:]) {
		return false
	}
	o0 := out[:seg]
	o1 := out[seg : 2*seg]
	o2 := out[2*seg : 3*seg]
	o3 := out[3*seg:]
	shift := (64 - uint(t.log)) & 63
	tab := &t.entries
	const m = 1<<maxHuffLog - 1
	i := 0
	for ; i+4 <= len(o3); i += 4 {
		b0.refill()
		b1.refill()
		b2.refill()
		b3.refill()
		d0 := o0[i : i+4 : i+4]
		d1 := o1[i : i+4 : i+4]
		d2 := o2[i : i+4 : i+4]
		d3 := o3[i : i+4 : i+4]
		for k := 0; k < 4; k++ {
			e0 := tab[((b0.value<<(b0.consumed&63))>>shift)&m]
			e1 := tab[((b1.value<<(b1.consumed&63))>>shift)&m]
			e2 := tab[((b2.value<<(b2.consumed&63))>>shift)&m]
			e3 := tab[((b3.value<<(b3.consumed&63))>>shift)&m]
			d0[k] = uint8(e0)
			d1[k] = uint8(e1)
			d2[k] = uint8(e2)
			d3[k] = uint8(e3)
			b0.consumed += uint(e0 >> 8)
			b1.consumed += uint(e1 >> 8)
			b2.consumed += uint(e2 >> 8)
			b3.consumed += uint(e3 >> 8)
		}
	}
	for _, s := range [4]struct {
		br  *backReader
		out []byte
	}{{&b0, o0}, {&b1, o1}, {&b2, o2}, {&b3, o3}} {
		br, o := s.br, s.out
		for j := i; j < len(o); j++ {
			br.refill()
			e := tab[((br.value<<(br.consumed&63))>>shift)&m]
			o[j] = uint8(e)
			br.consumed += uint(e >> 8)
		}
		br.refill()
		if !br.finished() {
			return false
		}
	}
	return true
}
