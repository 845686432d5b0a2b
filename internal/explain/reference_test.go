package explain

// The reference: the scanner as it was before the block scan, copied
// unchanged but for its names and its longest line, an argument. Every
// line is normalized, filtered through its byte-pair bloom filter and
// matched. TestBlockScanMatchesLineScan and FuzzBlockScan hold Scan to it.

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"strings"
)

// refScan is the line-by-line scan as it was before the block scan (a
// verbatim copy, kept as the plain reference the block scan is held to).
// It reads r to its end, line by line, and calls done (when not nil)
// with each hit as soon as its evidence is complete: at once for a
// one-line message, after the following lines for a message that
// continues (Next, Wrap); and with a nil hit when the log states a new
// fact about its environment after a hit. The scan is read-only to done.
func refScan(m *Matcher, r io.Reader, maxLine int, done func(s *Scan, h *Hit)) (*Scan, error) {
	br := bufio.NewReaderSize(r, maxLine)
	st := refNewState(m, done)
	var long []byte // the start of an overlong line, kept while its rest is skipped
	for {
		line, err := br.ReadSlice('\n')
		isLong := false
		if err == bufio.ErrBufferFull {
			isLong = true
			// Keep the start (the reader's buffer is about to be reused)
			// and skip the rest: it is never held in memory.
			long = append(long[:0], line...)
			line = long
			for err == bufio.ErrBufferFull {
				var rest []byte
				rest, err = br.ReadSlice('\n')
				st.s.Bytes += int64(len(rest))
			}
		}
		if len(line) == 0 && err != nil {
			st.finish()
			if err == io.EOF {
				return st.s, nil
			}
			return st.s, err
		}
		if isLong {
			st.s.LongLines++
		}
		st.feed(line)
		if err != nil {
			st.finish()
			if err == io.EOF {
				return st.s, nil
			}
			return st.s, err
		}
	}
}

// state is a scan in progress: what one line needs from the lines before.
type refState struct {
	m          *Matcher
	s          *Scan
	done       func(*Scan, *Hit)
	norm       normalizer
	markerSeen []int
	present    []bool
	bf         bloom
	pkg        string
	fr         frames
	pending    []pendingNext
	next       []pendingNext // reused for the pending list of the next line
	open       map[int]int   // hit index -> continuations still open
	factDone   []bool        // facts signatures already matched
	grams      [][]uint16    // by literal: the bigrams its filter tests
}

func refNewState(m *Matcher, done func(*Scan, *Hit)) *refState {
	var grams [][]uint16
	for _, l := range m.lits {
		grams = append(grams, refGrams(string(l.text)))
	}
	return &refState{
		grams:      grams,
		m:          m,
		s:          &Scan{Counts: map[string]int{}, Absorbed: map[string]string{}},
		done:       done,
		markerSeen: make([]int, len(m.lits)),
		present:    make([]bool, len(m.lits)),
		open:       map[int]int{},
		factDone:   make([]bool, len(m.facts)),
	}
}

// feed matches one raw line (with its end of line).
func (st *refState) feed(raw []byte) {
	s, m := st.s, st.m
	s.Bytes += int64(len(raw))
	s.Lines++
	n := s.Lines
	line := st.norm.line(raw)

	// Continuations first: a message's following lines.
	if len(st.pending) > 0 {
		st.next = st.next[:0]
		for _, p := range st.pending {
			h := &s.Hits[p.hit]
			if p.wrap {
				if sub := p.re.FindSubmatch(bytes.TrimSpace(line)); sub != nil {
					more := sub[p.re.SubexpIndex("more")]
					if c := h.Captures[p.capture]; len(c)+len(more) <= 400 {
						h.Captures[p.capture] = c + string(more)
					}
					if p.left > 1 {
						p.left--
						st.next = append(st.next, p)
						continue
					}
				}
			} else if sub := p.re.FindSubmatch(line); sub != nil {
				for i, name := range p.re.SubexpNames() {
					if name != "" && len(sub[i]) > 0 {
						h.Captures[name] = cleanCapture(sub[i])
					}
				}
			}
			st.complete(p.hit)
		}
		st.pending, st.next = st.next, st.pending
	}

	// Each distinct literal is looked for once: first in the line's
	// bigram filter (a few bit tests), then, rarely, for real.
	st.bf.fill(line)
	for k := range m.lits {
		st.present[k] = st.bf.has(st.grams[k]) && bytes.Contains(line, m.lits[k].text)
	}
	for _, k := range m.markers {
		if st.present[k] {
			st.markerSeen[k] = n
		}
	}
	for i := range m.ctxs {
		c := &m.ctxs[i]
		if !c.refPrefilter(st.present) {
			continue
		}
		loc := c.re.FindSubmatchIndex(line)
		if loc == nil {
			continue
		}
		group := func(j int) []byte {
			if j <= 0 || loc[2*j] < 0 {
				return nil
			}
			return line[loc[2*j]:loc[2*j+1]]
		}
		if v := group(c.pkgIdx); len(v) > 0 {
			st.pkg = cleanCapture(v)
		}
		if v := group(c.frameIdx); len(v) > 0 {
			st.fr.add(v, n)
		}
		if v := group(c.torchIdx); len(v) > 0 {
			s.TorchVersion = cleanCapture(v)
		}
	}
	for i := range m.facts {
		c := &m.facts[i]
		// A fact is stated once: the first statement wins, and a long
		// log repeats it on every frame (".../python3.12/site-packages/").
		if st.factDone[i] || !c.refPrefilter(st.present) {
			continue
		}
		sub := c.re.FindSubmatch(line)
		if sub == nil {
			continue
		}
		changed := false
		for j, name := range c.captures {
			if name != "" && len(sub[j]) > 0 && s.Facts.record(name, cleanCapture(sub[j]), n) {
				changed = true
			}
		}
		for k, v := range c.sig.Set {
			if s.Facts.record(k, v, n) {
				changed = true
			}
		}
		// A new fact may change the findings already reported (the
		// environment their fixes are for): the callback hears of it.
		if changed && st.done != nil && len(s.Hits) > 0 {
			st.done(s, nil)
		}
		st.factDone[i] = true
	}
	for i := range m.sigs {
		c := &m.sigs[i]
		if !c.refPrefilter(st.present) {
			continue
		}
		sub := c.re.FindSubmatchIndex(line)
		if sub == nil {
			continue
		}
		if c.hasCtx {
			seen := false
			for _, mi := range c.markers {
				if st.markerSeen[mi] > 0 && n-st.markerSeen[mi] <= c.within {
					seen = true
					break
				}
			}
			if seen == c.negate {
				continue
			}
		}
		name := c.sig.Name
		s.Counts[name]++
		for _, a := range c.sig.Absorbs {
			s.Absorbed[a] = name
		}
		if s.Counts[name] > maxHitsPerSignature {
			continue
		}
		h := Hit{Signature: c.sig, Line: n, Text: cleanText(line), Captures: captures(c, line, sub), Package: st.pkg, Frames: st.fr.recent(n)}
		extraCaptures(name, line, h.Captures)
		s.Hits = append(s.Hits, h)
		hit := len(s.Hits) - 1
		st.open[hit] = 1 // settled below when nothing follows
		if c.next != nil {
			st.pending = append(st.pending, pendingNext{hit: hit, re: c.next})
			st.open[hit]++
		}
		// A wrapped capture continues only when the line ends with it.
		if c.wrap != nil {
			if j := c.re.SubexpIndex(c.sig.Wrap.Capture); j > 0 && sub[2*j+1] == len(bytes.TrimRight(line, " ")) {
				st.pending = append(st.pending, pendingNext{hit: hit, re: c.wrap, wrap: true, capture: c.sig.Wrap.Capture, left: c.sig.Wrap.Lines})
				st.open[hit]++
			}
		}
		st.complete(hit)
	}
}

// complete notes that one continuation of a hit is settled; the hit goes
// to the callback when none is left open.
func (st *refState) complete(hit int) {
	if st.open[hit] > 0 {
		st.open[hit]--
	}
	if st.open[hit] == 0 {
		delete(st.open, hit)
		if st.done != nil {
			st.done(st.s, &st.s.Hits[hit])
		}
	}
}

// finish settles what still waits for a following line at the end.
func (st *refState) finish() {
	for _, p := range st.pending {
		st.complete(p.hit)
	}
	st.pending = st.pending[:0]
}

func (c *compiled) refPrefilter(present []bool) bool {
	for _, k := range c.lits {
		if present[k] {
			return true
		}
	}
	return false
}

// bloom is a 1024-bit set of the byte pairs (bigrams) of one line: a
// literal can be in the line only if all of its chosen bigrams are.
type bloom [16]uint64

func gram(a, b byte) uint16 { return (uint16(a)*31 + uint16(b)) & 1023 }

func (f *bloom) fill(line []byte) {
	*f = bloom{}
	for i := 0; i+1 < len(line); i++ {
		g := gram(line[i], line[i+1])
		f[g>>6] |= 1 << (g & 63)
	}
}

func (f *bloom) has(grams []uint16) bool {
	for _, g := range grams {
		if f[g>>6]&(1<<(g&63)) == 0 {
			return false
		}
	}
	return true
}

// maxGrams is how many bigrams of a literal the filter tests.
const maxGrams = 8

// newLiteral picks the literal's rarest bigrams (capitals, digits and
// punctuation are rarer in logs than lower-case letters and spaces), so
// that an ordinary line fails the filter on its first test or so.
func refGrams(l string) []uint16 {
	type cand struct {
		g     uint16
		score int
	}
	var cs []cand
	seen := map[uint16]bool{}
	for i := 0; i+1 < len(l); i++ {
		g := gram(l[i], l[i+1])
		if seen[g] {
			continue
		}
		seen[g] = true
		cs = append(cs, cand{g, rarity(l[i]) + rarity(l[i+1])})
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return b.score - a.score })
	var grams []uint16
	for i := 0; i < len(cs) && i < maxGrams; i++ {
		grams = append(grams, cs[i].g)
	}
	return grams
}

func rarity(b byte) int {
	switch {
	case b == ' ' || strings.IndexByte("etaoinsrhl", b) >= 0:
		return 0
	case b >= 'a' && b <= 'z', b == '.', b == '/', b == '_', b == '-':
		return 1
	}
	return 2
}
