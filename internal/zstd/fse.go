package zstd

import (
	"math/bits"
	"sync"
)

// FSE (finite state entropy) tables, RFC 8878 section 4.1.

const (
	maxLLLog  = 9
	maxMLLog  = 9
	maxOFLog  = 8
	maxLLCode = 35
	maxMLCode = 52
	maxOFCode = 31
)

// fseState is one state of a decoding table: the symbol it emits and how to
// reach the next state (newState + the next nbBits of the stream).
type fseState struct {
	symbol   uint8
	nbBits   uint8
	newState uint16
}

// readNormalized reads an FSE table description (RFC 8878 section
// 4.1.1) from src: the accuracy log and each symbol's normalized
// probability (-1 meaning "less than 1"). It returns the accuracy log, the
// number of symbols described and the bytes the description took.
func readNormalized(src []byte, maxSymbol, maxLog int, norm *[256]int16) (accuracyLog, nsym, size int, ok bool) {
	if len(src) == 0 {
		return 0, 0, 0, false
	}
	f := forwardBits{src: src}
	accuracyLog = int(f.peek(4)) + 5
	f.pos = 4
	if accuracyLog > maxLog {
		return 0, 0, 0, false
	}
	remaining := 1<<accuracyLog + 1
	threshold := 1 << accuracyLog
	nbBits := accuracyLog + 1
	sym := 0
	for remaining > 1 {
		if sym > maxSymbol || f.pos > len(src)*8 {
			return 0, 0, 0, false
		}
		// Values below lowCount take nbBits-1 bits, the others nbBits.
		lowCount := 2*threshold - 1 - remaining
		v := int(f.peek(nbBits))
		var count int
		if v&(threshold-1) < lowCount {
			count = v & (threshold - 1)
			f.pos += nbBits - 1
		} else {
			count = v & (2*threshold - 1)
			if count >= threshold {
				count -= lowCount
			}
			f.pos += nbBits
		}
		count-- // the field holds the probability plus one
		if count < 0 {
			remaining--
		} else {
			remaining -= count
		}
		norm[sym] = int16(count)
		sym++
		if count == 0 {
			// 2-bit repeat fields tell how many more symbols have
			// probability 0; 3 means "3, and another field follows".
			for {
				if f.pos > len(src)*8 {
					return 0, 0, 0, false
				}
				r := int(f.peek(2))
				f.pos += 2
				if sym+r > maxSymbol+1 {
					return 0, 0, 0, false
				}
				for j := 0; j < r; j++ {
					norm[sym] = 0
					sym++
				}
				if r != 3 {
					break
				}
			}
		}
		for remaining < threshold {
			nbBits--
			threshold >>= 1
		}
	}
	if remaining != 1 || f.pos > len(src)*8 {
		return 0, 0, 0, false
	}
	return accuracyLog, sym, (f.pos + 7) >> 3, true
}

// buildFSE spreads the normalized probabilities over a decoding table of
// 1<<accuracyLog states (RFC 8878 section 4.1.1, "FSE Table Construction").
// table must hold at least 1<<accuracyLog entries.
func buildFSE(norm []int16, accuracyLog int, table []fseState) bool {
	size := 1 << accuracyLog
	if len(table) < size || len(norm) > 256 {
		return false
	}
	var next [256]uint16
	high := size - 1
	total := 0
	for s, p := range norm {
		switch {
		case p == -1:
			if high < 0 {
				return false
			}
			table[high] = fseState{symbol: uint8(s)}
			high--
			next[s] = 1
			total++
		case p > 0:
			next[s] = uint16(p)
			total += int(p)
		case p < -1:
			return false
		}
	}
	if total != size {
		return false
	}
	mask := size - 1
	step := size>>1 + size>>3 + 3
	pos := 0
	for s, p := range norm {
		for i := 0; i < int(p); i++ {
			table[pos].symbol = uint8(s)
			pos = (pos + step) & mask
			for pos > high {
				pos = (pos + step) & mask
			}
		}
	}
	if pos != 0 {
		return false
	}
	for u := 0; u < size; u++ {
		s := table[u].symbol
		n := next[s]
		next[s]++
		nb := accuracyLog - (bits.Len16(n) - 1)
		if nb < 0 {
			return false
		}
		table[u].nbBits = uint8(nb)
		table[u].newState = uint16(int(n)<<nb - size)
	}
	return true
}

// seqState is one state of a sequence table (literal lengths, match lengths
// or offsets) with its code already turned into a baseline and the count of
// extra bits to add to it.
type seqState struct {
	base     uint32
	addBits  uint8
	nbBits   uint8
	newState uint16
}

// seqTable is a decoding table with room for the largest accuracy log
// (9); states are masked with 511 so that indexing never needs a check.
type seqTable struct {
	states      [512]seqState
	accuracyLog uint8
}

// Literal-length and match-length codes: baseline and extra bits (RFC 8878
// section 3.1.1.3.2.1.1).
var llBase = [maxLLCode + 1]uint32{
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
	8192, 16384, 32768, 65536,
}
var llBits = [maxLLCode + 1]uint8{
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
	13, 14, 15, 16,
}
var mlBase = [maxMLCode + 1]uint32{
	3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
	19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
	35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
	4099, 8195, 16387, 32771, 65539,
}
var mlBits = [maxMLCode + 1]uint8{
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
	12, 13, 14, 15, 16,
}

// The predefined distributions (RFC 8878 section 3.1.1.3.2.2).
var llDefaultNorm = [maxLLCode + 1]int16{
	4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
	-1, -1, -1, -1,
}
var mlDefaultNorm = [maxMLCode + 1]int16{
	1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
	-1, -1, -1, -1, -1,
}
var ofDefaultNorm = [29]int16{
	1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1,
}

type seqKind uint8

const (
	kindLL seqKind = iota
	kindOF
	kindML
)

// fill turns a symbol-level FSE table into t's states for kind.
func (t *seqTable) fill(kind seqKind, fse []fseState, accuracyLog int) bool {
	for i, st := range fse[:1<<accuracyLog] {
		s := st.symbol
		var base uint32
		var add uint8
		switch kind {
		case kindLL:
			if s > maxLLCode {
				return false
			}
			base, add = llBase[s], llBits[s]
		case kindML:
			if s > maxMLCode {
				return false
			}
			base, add = mlBase[s], mlBits[s]
		default:
			if s > maxOFCode {
				return false
			}
			base, add = 1<<s, s
		}
		t.states[i&511] = seqState{base: base, addBits: add, nbBits: st.nbBits, newState: st.newState}
	}
	t.accuracyLog = uint8(accuracyLog)
	return true
}

// predefined tables, built on first use (not in a package init: every
// fastpath command would pay for it at start-up).
var (
	predefinedOnce sync.Once
	predefinedLL   seqTable
	predefinedML   seqTable
	predefinedOF   seqTable
)

func buildPredefined() {
	var fse [512]fseState
	buildFSE(llDefaultNorm[:], 6, fse[:])
	predefinedLL.fill(kindLL, fse[:], 6)
	buildFSE(mlDefaultNorm[:], 6, fse[:])
	predefinedML.fill(kindML, fse[:], 6)
	buildFSE(ofDefaultNorm[:], 5, fse[:])
	predefinedOF.fill(kindOF, fse[:], 5)
}
