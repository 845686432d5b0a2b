package explain

import (
	"bytes"
	"slices"
	"strings"
)

// candidates finds, in one pass over a block of whole lines, the lines that
// can matter to a scan: those that hold one of the signature table's
// literals, or that normalize would rewrite (a terminal escape, a carriage
// return inside the line, a colour code that lost its escape), since a
// rewritten line may hold a literal its raw bytes do not. Every other line
// only adds to the counts: no signature, context or fact can match it (each
// needs one of its literals in the normalized line, and normalizing a line
// that is not rewritten only cuts it). So the set is a superset, never a
// subset, of the lines the line-by-line scan acts on.
//
// Each literal has one anchor: its rarest byte pair. The scan tests every
// byte pair of the block against a 64 Ki-bit set of anchors (one load and
// one bit test per byte) and verifies the few that are set.
type candidates struct {
	set [1 << 16 / 64]uint64
	// at holds, for an anchor pair, the index in lists of what to verify
	// when the pair is seen (a table, not a map: a map's hash costs more
	// than the rest of a look-up).
	at    [1 << 16]uint16
	lists [][]anchor
	// single are bytes that make a line a candidate on their own (ESC,
	// one-byte literals), tested at the block's last byte, which has no
	// pair.
	single [256]bool
	// oneByte are the one-byte literals.
	oneByte []oneByteLit
}

// anchor is one thing a byte pair may start: a literal whose pair is at
// offset off, or (lit nil) a rewrite trigger.
type anchor struct {
	lit  []byte
	off  int
	idx  int // the literal's index in Matcher.lits
	kind anchorKind
}

type oneByteLit struct {
	b   byte
	idx int
}

type anchorKind uint8

const (
	anchorLiteral anchorKind = iota
	anchorAlways             // ESC, a carriage return before more text, a one-byte literal
	anchorRemnant            // a digit then "m": the end of a colour code without its ESC
)

func newCandidates(lits []literal) *candidates {
	c := &candidates{lists: [][]anchor{nil}}
	add := func(g uint16, a anchor) {
		c.set[g>>6] |= 1 << (g & 63)
		if c.at[g] == 0 {
			c.at[g] = uint16(len(c.lists))
			c.lists = append(c.lists, nil)
		}
		l := &c.lists[c.at[g]]
		if a.kind != anchorLiteral && slices.ContainsFunc(*l, func(b anchor) bool { return b.kind == a.kind }) {
			return
		}
		*l = append(*l, a)
	}
	always := func(b byte) {
		c.single[b] = true
		for x := range 256 {
			add(uint16(b)<<8|uint16(x), anchor{kind: anchorAlways})
		}
	}
	for k, l := range lits {
		t := l.text
		switch {
		case bytes.IndexByte(t, '\n') >= 0:
			// A line never holds a newline: the literal never matches.
		case len(t) == 1:
			always(t[0])
			c.oneByte = append(c.oneByte, oneByteLit{b: t[0], idx: k})
		default:
			off := rarestPair(t)
			add(uint16(t[off])<<8|uint16(t[off+1]), anchor{lit: t, off: off, idx: k, kind: anchorLiteral})
		}
	}
	always(0x1b)
	// A carriage return before more text on the line: the text after the
	// last one is what the line becomes. Trailing ones are cut, so a CRLF
	// log is not all candidates.
	for x := range 256 {
		if x != '\r' && x != '\n' {
			add(uint16('\r')<<8|uint16(x), anchor{kind: anchorAlways})
		}
	}
	for d := byte('0'); d <= '9'; d++ {
		add(uint16(d)<<8|'m', anchor{kind: anchorRemnant})
	}
	return c
}

// rarestPair returns the offset of the literal's byte pair least likely in
// a log: the least product of the two bytes' frequencies (byteFreq); the
// first of equals.
func rarestPair(t []byte) int {
	best, bestScore := 0, -1
	for i := 0; i+1 < len(t); i++ {
		if s := byteFreq(t[i]) * byteFreq(t[i+1]); bestScore < 0 || s < bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// byteFreq is a rough frequency (per mille) of a byte in build and
// training logs: English words, paths, numbers, few capitals. It only
// steers the choice of anchors; any choice gives the same result.
func byteFreq(b byte) int {
	switch {
	case b == ' ':
		return 150
	case b >= 'a' && b <= 'z':
		return letterFreq[b-'a']
	case b >= '0' && b <= '2':
		return 20
	case b >= '3' && b <= '9':
		return 10
	case b == '/' || b == '.':
		return 25
	case b == '_' || b == '-':
		return 15
	case b == ':':
		return 12
	case strings.IndexByte("ETAIOSCRN", b) >= 0:
		return 5
	case strings.IndexByte(",=()\"'[]", b) >= 0:
		return 6
	case b >= 'A' && b <= 'Z':
		return 3
	}
	return 1
}

// letterFreq: a to z.
var letterFreq = [26]int{55, 15, 30, 30, 80, 18, 15, 30, 50, 2, 8, 35, 25, 50, 50, 25, 1, 45, 50, 60, 25, 10, 10, 6, 15, 2}

// lineSpan is one candidate line of a block: its start, the index of its
// newline (or the block's end), and its index among the block's lines.
type lineSpan struct {
	start, end, index int
}

// find appends the candidate lines of b to out, in order, at most limit
// of them; rest is the start of the line where it stopped at the limit
// (len(b) when it did not). b holds whole lines: each ends with a newline
// except, at the end of the log, the last.
func (c *candidates) find(b []byte, out []lineSpan, limit int) (_ []lineSpan, rest int) {
	n := 0
	set := &c.set
	i := 0
	for i+1 < len(b) {
		g := uint16(b[i])<<8 | uint16(b[i+1])
		if set[g>>6]&(1<<(g&63)) == 0 {
			i++
			continue
		}
		if !c.verify(b, i, g) {
			i++
			continue
		}
		start := bytes.LastIndexByte(b[:i], '\n') + 1
		if n == limit {
			return out, start
		}
		end := len(b)
		if k := bytes.IndexByte(b[i:], '\n'); k >= 0 {
			end = i + k
		}
		out = append(out, lineSpan{start: start, end: end})
		n++
		i = end + 1
	}
	if i == len(b)-1 && c.single[b[i]] {
		start := bytes.LastIndexByte(b[:i], '\n') + 1
		if n == limit {
			return out, start
		}
		out = append(out, lineSpan{start: start, end: len(b)})
	}
	return out, len(b)
}

func (c *candidates) verify(b []byte, i int, g uint16) bool {
	for _, a := range c.lists[c.at[g]] {
		switch a.kind {
		case anchorAlways:
			return true
		case anchorRemnant:
			if remnantEndsAt(b, i) {
				return true
			}
		case anchorLiteral:
			s := i - a.off
			if s >= 0 && s+len(a.lit) <= len(b) && b[s] == a.lit[0] && bytes.Equal(b[s:s+len(a.lit)], a.lit) {
				return true
			}
		}
	}
	return false
}

// present appends to out the index of every literal in line, once each;
// seen marks them (the caller clears the bits of those returned).
func (c *candidates) present(line []byte, seen []uint64, out []int) []int {
	mark := func(k int) {
		if seen[k>>6]&(1<<(k&63)) == 0 {
			seen[k>>6] |= 1 << (k & 63)
			out = append(out, k)
		}
	}
	set := &c.set
	for i := 0; i+1 < len(line); i++ {
		g := uint16(line[i])<<8 | uint16(line[i+1])
		if set[g>>6]&(1<<(g&63)) == 0 {
			continue
		}
		for _, a := range c.lists[c.at[g]] {
			if a.kind != anchorLiteral {
				continue
			}
			s := i - a.off
			if s >= 0 && s+len(a.lit) <= len(line) && line[s] == a.lit[0] && bytes.Equal(line[s:s+len(a.lit)], a.lit) {
				mark(a.idx)
			}
		}
	}
	for _, o := range c.oneByte {
		if bytes.IndexByte(line, o.b) >= 0 {
			mark(o.idx)
		}
	}
	return out
}

// remnantEndsAt reports whether b[i] is the last digit of an ESC-less
// colour code ("[0;31m"): groups of one to three digits, separated by ";",
// after a "[" (hasRemnant's language, read backwards from its "m").
func remnantEndsAt(b []byte, i int) bool {
	for {
		d := 0
		for i >= 0 && b[i] >= '0' && b[i] <= '9' {
			i--
			d++
		}
		if d == 0 || d > 3 || i < 0 {
			return false
		}
		switch b[i] {
		case '[':
			return true
		case ';':
			i--
		default:
			return false
		}
	}
}

// longSpans appends the lines of b of maxLine bytes or more (their newline
// not counted) to out, in order. Such a line holds a whole aligned window
// of maxLine/2 bytes without a newline, so only windows are tested: a few
// IndexByte calls per block, each stopping at its first newline.
func longSpans(b []byte, maxLine int, out []lineSpan) []lineSpan {
	w := maxLine / 2
	for p := 0; p < len(b); p += w {
		win := b[p:min(p+w, len(b))]
		if bytes.IndexByte(win, '\n') >= 0 {
			continue
		}
		start := bytes.LastIndexByte(b[:p], '\n') + 1
		end := len(b)
		if k := bytes.IndexByte(b[p:], '\n'); k >= 0 {
			end = p + k
		}
		if end-start >= maxLine && (len(out) == 0 || out[len(out)-1].start != start) {
			out = append(out, lineSpan{start: start, end: end})
		}
		// Go on from the window that holds the line's end.
		p = end / w * w
	}
	return out
}
