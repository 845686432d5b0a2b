package zstd

// Compressed blocks, RFC 8878 section 3.1.1.3: a literals section, then a
// sequences section whose sequences are all decoded, then executed.

const (
	maxBlockSize = 128 << 10
	// slack is the room kept after every buffer that the fast copies
	// may overrun (they copy 16 bytes where fewer are needed).
	slack = 32
)

// decodeCompressed decodes the compressed block src into r.hist at
// r.histEnd, producing at most r.blockMax bytes. It returns a reason on
// failure.
func (r *Reader) decodeCompressed(src []byte, srcSlack []byte) string {
	lits, n, why := r.decodeLiterals(src, srcSlack)
	if why != "" {
		return why
	}
	src = src[n:]
	if len(src) == 0 {
		return "missing sequences section"
	}
	nseq := int(src[0])
	p := 1
	switch {
	case nseq == 0:
	case nseq < 128:
	case nseq < 255:
		if len(src) < 2 {
			return "truncated sequence count"
		}
		nseq = (nseq-128)<<8 | int(src[1])
		p = 2
	default:
		if len(src) < 3 {
			return "truncated sequence count"
		}
		nseq = int(src[1]) | int(src[2])<<8 + 0x7F00
		p = 3
	}
	litLen := len(lits) - slack
	if nseq == 0 {
		if p != len(src) {
			return "bytes after an empty sequences section"
		}
		if litLen > r.blockMax {
			return "block larger than its maximum size"
		}
		copy(r.hist[r.histEnd:], lits[:litLen])
		r.histEnd += litLen
		return ""
	}
	if nseq > r.blockMax/3 {
		// Every match is at least 3 bytes long.
		return "more sequences than the block size allows"
	}
	if p >= len(src) {
		return "missing symbol compression modes"
	}
	modes := src[p]
	p++
	if modes&3 != 0 {
		return "reserved bits set in symbol compression modes"
	}
	var ok bool
	if p, ok = r.readSeqTable(&r.ll, kindLL, modes>>6, src, p); !ok {
		return "bad literal lengths table"
	}
	if p, ok = r.readSeqTable(&r.of, kindOF, (modes>>4)&3, src, p); !ok {
		return "bad offsets table"
	}
	if p, ok = r.readSeqTable(&r.ml, kindML, (modes>>2)&3, src, p); !ok {
		return "bad match lengths table"
	}
	if why := r.decodeSequences(src[p:], nseq, litLen); why != "" {
		return why
	}
	r.executeSequences(r.seqs[:nseq], lits)
	return ""
}

// readSeqTable sets *cur for one of the three sequence tables by its mode:
// predefined, RLE, FSE-compressed (described at src[p:]) or repeat.
func (r *Reader) readSeqTable(cur **seqTable, kind seqKind, mode uint8, src []byte, p int) (int, bool) {
	own := &r.tables[kind]
	maxSym, maxLog := maxLLCode, maxLLLog
	switch kind {
	case kindOF:
		maxSym, maxLog = maxOFCode, maxOFLog
	case kindML:
		maxSym, maxLog = maxMLCode, maxMLLog
	}
	switch mode {
	case 0:
		predefinedOnce.Do(buildPredefined)
		switch kind {
		case kindLL:
			*cur = &predefinedLL
		case kindOF:
			*cur = &predefinedOF
		default:
			*cur = &predefinedML
		}
	case 1:
		if p >= len(src) {
			return p, false
		}
		s := src[p]
		p++
		if int(s) > maxSym {
			return p, false
		}
		fse := [1]fseState{{symbol: s}}
		if !own.fill(kind, fse[:], 0) {
			return p, false
		}
		*cur = own
	case 2:
		var norm [256]int16
		al, nsym, n, ok := readNormalized(src[p:], maxSym, maxLog, &norm)
		if !ok || !buildFSE(norm[:nsym], al, r.fseScratch[:]) || !own.fill(kind, r.fseScratch[:], al) {
			return p, false
		}
		p += n
		*cur = own
	default:
		if *cur == nil {
			return p, false
		}
	}
	return p, true
}

// decodeLiterals decodes the literals section at the start of src. It
// returns the literals followed by slack readable bytes, and the section's
// size. srcSlack is src extended by slack bytes (raw literals are used in
// place).
func (r *Reader) decodeLiterals(src, srcSlack []byte) ([]byte, int, string) {
	if len(src) == 0 {
		return nil, 0, "empty block"
	}
	b0 := src[0]
	typ := b0 & 3
	format := (b0 >> 2) & 3
	if typ < 2 {
		var size, hs int
		switch format {
		case 0, 2:
			size, hs = int(b0>>3), 1
		case 1:
			if len(src) < 2 {
				return nil, 0, "truncated literals header"
			}
			size, hs = int(b0>>4)|int(src[1])<<4, 2
		default:
			if len(src) < 3 {
				return nil, 0, "truncated literals header"
			}
			size, hs = int(b0>>4)|int(src[1])<<4|int(src[2])<<12, 3
		}
		if size > r.blockMax {
			return nil, 0, "literals larger than the block maximum"
		}
		if typ == 0 {
			if hs+size > len(src) {
				return nil, 0, "truncated raw literals"
			}
			return srcSlack[hs : hs+size+slack], hs + size, ""
		}
		if hs >= len(src) {
			return nil, 0, "truncated RLE literals"
		}
		lits := r.litBuffer(size)
		c := src[hs]
		for i := range lits[:size] {
			lits[i] = c
		}
		return lits, hs + 1, ""
	}
	var regen, csize, hs int
	streams := 4
	switch format {
	case 0, 1:
		if len(src) < 3 {
			return nil, 0, "truncated literals header"
		}
		v := int(b0) | int(src[1])<<8 | int(src[2])<<16
		regen, csize, hs = (v>>4)&0x3FF, (v>>14)&0x3FF, 3
		if format == 0 {
			streams = 1
		}
	case 2:
		if len(src) < 4 {
			return nil, 0, "truncated literals header"
		}
		v := int(b0) | int(src[1])<<8 | int(src[2])<<16 | int(src[3])<<24
		regen, csize, hs = (v>>4)&0x3FFF, (v>>18)&0x3FFF, 4
	default:
		if len(src) < 5 {
			return nil, 0, "truncated literals header"
		}
		v := int(b0) | int(src[1])<<8 | int(src[2])<<16 | int(src[3])<<24 | int(src[4])<<32
		regen, csize, hs = (v>>4)&0x3FFFF, (v>>22)&0x3FFFF, 5
	}
	if regen > r.blockMax {
		return nil, 0, "literals larger than the block maximum"
	}
	if hs+csize > len(src) {
		return nil, 0, "truncated compressed literals"
	}
	data := src[hs : hs+csize]
	if typ == 2 {
		n, ok := r.huff.read(data, &r.weightScratch)
		if !ok {
			return nil, 0, "bad Huffman tree description"
		}
		data = data[n:]
		r.huffValid = true
	} else if !r.huffValid {
		return nil, 0, "treeless literals without a previous Huffman table"
	}
	lits := r.litBuffer(regen)
	var ok bool
	if streams == 1 {
		ok = r.huff.decode1(lits[:regen], data)
	} else {
		ok = r.huff.decode4(lits[:regen], data)
	}
	if !ok {
		return nil, 0, "corrupt Huffman-coded literals"
	}
	return lits, hs + csize, ""
}

// litBuffer returns a buffer for n literals and slack bytes after them,
// growing the reused one as needed (n <= maxBlockSize).
func (r *Reader) litBuffer(n int) []byte {
	if n+slack > len(r.lits) {
		r.lits = make([]byte, max(n, min(2*len(r.lits), maxBlockSize))+slack)
	}
	return r.lits[:n+slack]
}

// sequence is one decoded sequence: ll literals, then ml bytes copied from
// hist[src:] (an index into hist, checked against the window).
type sequence struct {
	ll, ml, src uint32
}

// decodeSequences decodes nseq sequences from the backward bitstream src
// into r.seqs, resolving repeat offsets and checking every limit: the
// literals they use, the block size, the window. Decoding all of a block's
// sequences before executing them frees the copies from the bitstream's
// chain of dependent reads, so the processor can start a copy's (often
// cache-missing) loads early: 10-20% faster at zstd -19 on this VM.
func (r *Reader) decodeSequences(src []byte, nseq int, litLen int) string {
	var br backReader
	if !br.init(src) {
		return "bad sequences bitstream"
	}
	if nseq > len(r.seqs) {
		r.seqs = make([]sequence, max(nseq, min(2*len(r.seqs), maxBlockSize/3+1)))
	}
	seqs := r.seqs[:nseq]
	llT, ofT, mlT := &r.ll.states, &r.of.states, &r.ml.states
	llState := int(br.get(r.ll.accuracyLog))
	ofState := int(br.get(r.of.accuracyLog))
	mlState := int(br.get(r.ml.accuracyLog))
	op := r.histEnd
	limit := op + r.blockMax // the block may not produce more
	// A match may reach back to the frame's start (what of it is still in
	// hist) and no further than the window.
	lowest := r.frameStart
	window := r.window
	litLeft := litLen
	rep0, rep1, rep2 := r.rep[0], r.rep[1], r.rep[2]
	for i := range seqs {
		br.refill()
		ofE := ofT[ofState&511]
		mlE := mlT[mlState&511]
		llE := llT[llState&511]
		ofv := int(ofE.base) + int(br.get(ofE.addBits))
		// Refill only when the next fields might not fit: the length
		// extras take at most 32 bits, the state updates 26.
		if br.consumed > 64-32 {
			br.refill()
		}
		ml := int(mlE.base) + int(br.get(mlE.addBits))
		ll := int(llE.base) + int(br.get(llE.addBits))
		var off int
		if ofv > 3 {
			off = ofv - 3
			rep0, rep1, rep2 = off, rep0, rep1
		} else {
			if ll == 0 {
				ofv++
			}
			switch ofv {
			case 1:
				off = rep0
			case 2:
				off = rep1
				rep0, rep1 = rep1, rep0
			case 3:
				off = rep2
				rep0, rep1, rep2 = rep2, rep0, rep1
			default: // literal length 0, offset value 3
				off = rep0 - 1
				if off == 0 {
					return "repeat offset of zero"
				}
				rep0, rep1, rep2 = off, rep0, rep1
			}
		}
		if i != len(seqs)-1 {
			if br.consumed > 64-26 {
				br.refill()
			}
			llState = int(llE.newState) + int(br.get(llE.nbBits))
			mlState = int(mlE.newState) + int(br.get(mlE.nbBits))
			ofState = int(ofE.newState) + int(br.get(ofE.nbBits))
		}
		if ll > litLeft {
			return "sequence uses more literals than the block has"
		}
		litLeft -= ll
		if ll+ml > limit-op {
			return "block larger than its maximum size"
		}
		op += ll
		if off > op-lowest || off > window {
			return "match offset beyond the window"
		}
		seqs[i] = sequence{ll: uint32(ll), ml: uint32(ml), src: uint32(op - off)}
		op += ml
	}
	br.refill()
	if !br.finished() {
		return "sequences bitstream not consumed exactly"
	}
	if litLeft > limit-op {
		return "block larger than its maximum size"
	}
	r.rep = [3]int{rep0, rep1, rep2}
	return ""
}

// executeSequences copies each sequence's literals, then its match, into
// hist at histEnd, then the literals left. decodeSequences checked every
// bound; lits holds the literals and slack bytes after them, hist has slack
// bytes after the block: short copies move 16 bytes at a time.
func (r *Reader) executeSequences(seqs []sequence, lits []byte) {
	hist := r.hist
	op := r.histEnd
	lp := 0
	for _, s := range seqs {
		ll := int(s.ll)
		if ll <= 16 {
			*(*[16]byte)(hist[op:]) = *(*[16]byte)(lits[lp:])
		} else {
			copy(hist[op:op+ll], lits[lp:lp+ll])
		}
		op += ll
		lp += ll
		ml := int(s.ml)
		src := int(s.src)
		off := op - src
		switch {
		case off >= 16 && ml <= 64:
			for j := 0; j < ml; j += 16 {
				*(*[16]byte)(hist[op+j:]) = *(*[16]byte)(hist[src+j:])
			}
		case off >= ml:
			copy(hist[op:op+ml], hist[src:src+ml])
		case off >= 8:
			for j := 0; j < ml; j += 8 {
				*(*[8]byte)(hist[op+j:]) = *(*[8]byte)(hist[src+j:])
			}
		default:
			// Overlapping with a short period: copy the period, then
			// double what is copied.
			copy(hist[op:op+off], hist[src:op])
			for n := off; n < ml; {
				n += copy(hist[op+n:op+ml], hist[op:op+n])
			}
		}
		op += ml
	}
	litLen := len(lits) - slack
	copy(hist[op:], lits[lp:litLen])
	r.histEnd = op + litLen - lp
}
