// Package explain reads a build or run log and says what went wrong: it
// matches each line against the signature table of the knowledge base
// (kb/data/signatures.json), then turns the matches into findings, the most
// likely root cause first, with fixes made concrete by the environment's
// facts.
//
// Logs are streamed, in blocks of lines searched in parallel (Scan) or line
// by line (ScanFunc with a callback, for --follow), with the same result:
// memory stays bounded whatever the size of the log, and overlong lines are
// cut, never buffered whole.
package explain

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

const (
	// MaxLine is the longest line matched; the rest of a longer line is
	// skipped (a minified JSON blob or a progress bar without newlines).
	MaxLine = 64 << 10
	// maxTextLen caps the line text kept as evidence.
	maxTextLen = 400
	// maxHitsPerSignature caps the hits kept per signature; the others are
	// only counted, so a message repeated a million times costs nothing.
	maxHitsPerSignature = 16
	// maxFrames is how many recent traceback frames are remembered.
	maxFrames = 12
	// frameWindow: frames older than this many lines before a hit are not
	// part of its traceback.
	frameWindow = 60
)

// Matcher holds the signature table compiled once.
type Matcher struct {
	sigs  []compiled
	ctxs  []compiled
	facts []compiled
	// markers are the literals of every signature's Context condition,
	// each remembered with the last line it was seen on (indexes into lits).
	markers []int
	// lits are every distinct literal of the table, tested once per line.
	lits []literal
	// absorbed maps a signature name to the signatures that absorb it.
	absorbed map[string][]string
	// candidates finds the lines a block scan feeds (built on first use).
	candidates func() *candidates
	// users are, by literal, the context, facts and signature patterns
	// that need it (indexes into ctxs, facts and sigs, in order).
	users []litUsers
}

type litUsers struct{ ctxs, facts, sigs []int }

// literal is one prefilter string.
type literal struct {
	text []byte
}

type compiled struct {
	sig      *kb.Signature
	lits     []int // indexes into Matcher.lits
	re       *regexp.Regexp
	next     *regexp.Regexp
	wrap     *regexp.Regexp
	markers  []int // indexes into Matcher.markers
	within   int
	negate   bool
	hasCtx   bool
	captures []string
	// Indexes of the context captures (0: absent).
	pkgIdx, frameIdx, torchIdx int
}

// Compile compiles a signature table. Every pattern is RE2 (Go's regexp).
func Compile(d *kb.SignaturesData) (*Matcher, error) {
	m := &Matcher{absorbed: map[string][]string{}}
	litAt := map[string]int{}
	lit := func(l string) int {
		i, ok := litAt[l]
		if !ok {
			i = len(m.lits)
			litAt[l] = i
			m.lits = append(m.lits, literal{text: []byte(l)})
		}
		return i
	}
	build := func(s *kb.Signature) (compiled, error) {
		c := compiled{sig: s}
		if len(s.Literals) == 0 {
			return c, fmt.Errorf("signature %s: no literals to prefilter with", s.Name)
		}
		for _, l := range s.Literals {
			if l == "" {
				return c, fmt.Errorf("signature %s: empty literal", s.Name)
			}
			c.lits = append(c.lits, lit(l))
		}
		var err error
		if c.re, err = regexp.Compile(s.Pattern); err != nil {
			return c, fmt.Errorf("signature %s: %w", s.Name, err)
		}
		c.captures = c.re.SubexpNames()
		c.pkgIdx, c.frameIdx, c.torchIdx = max(c.re.SubexpIndex("package"), 0), max(c.re.SubexpIndex("frame"), 0), max(c.re.SubexpIndex("torch_version"), 0)
		if s.Next != "" {
			if c.next, err = regexp.Compile(s.Next); err != nil {
				return c, fmt.Errorf("signature %s: next: %w", s.Name, err)
			}
		}
		if s.Wrap != nil {
			if c.wrap, err = regexp.Compile(s.Wrap.Pattern); err != nil {
				return c, fmt.Errorf("signature %s: wrap: %w", s.Name, err)
			}
			if c.wrap.SubexpIndex("more") < 0 || s.Wrap.Capture == "" || s.Wrap.Lines < 1 {
				return c, fmt.Errorf("signature %s: wrap needs a capture, a (?P<more>) group and lines", s.Name)
			}
		}
		for _, a := range s.Absorbs {
			m.absorbed[a] = append(m.absorbed[a], s.Name)
		}
		if s.Context != nil {
			c.hasCtx, c.within, c.negate = true, s.Context.Within, s.Context.Negate
			for _, l := range s.Context.Any {
				if l == "" {
					return c, fmt.Errorf("signature %s: empty context literal", s.Name)
				}
				i := lit(l)
				if !slices.Contains(m.markers, i) {
					m.markers = append(m.markers, i)
				}
				c.markers = append(c.markers, i)
			}
		}
		return c, nil
	}
	for i := range d.Signatures {
		c, err := build(&d.Signatures[i])
		if err != nil {
			return nil, err
		}
		m.sigs = append(m.sigs, c)
	}
	for i := range d.Context {
		c, err := build(&d.Context[i])
		if err != nil {
			return nil, err
		}
		m.ctxs = append(m.ctxs, c)
	}
	for i := range d.Facts {
		c, err := build(&d.Facts[i])
		if err != nil {
			return nil, err
		}
		m.facts = append(m.facts, c)
	}
	m.users = make([]litUsers, len(m.lits))
	for i := range m.ctxs {
		for _, k := range m.ctxs[i].lits {
			m.users[k].ctxs = append(m.users[k].ctxs, i)
		}
	}
	for i := range m.facts {
		for _, k := range m.facts[i].lits {
			m.users[k].facts = append(m.users[k].facts, i)
		}
	}
	for i := range m.sigs {
		for _, k := range m.sigs[i].lits {
			m.users[k].sigs = append(m.users[k].sigs, i)
		}
	}
	m.candidates = sync.OnceValue(func() *candidates { return newCandidates(m.lits) })
	return m, nil
}

var defaultMatcher = sync.OnceValue(func() *Matcher {
	m, err := Compile(kb.Signatures())
	if err != nil {
		// The table is embedded data: a bad pattern is a build defect,
		// caught by the package's tests.
		panic("explain: " + err.Error())
	}
	return m
})

// Default is the matcher of the knowledge base's signature table.
func Default() *Matcher { return defaultMatcher() }

// Hit is one line that matched a signature.
type Hit struct {
	Signature *kb.Signature
	Line      int    // 1-based
	Text      string // the line, cleaned and capped
	Captures  map[string]string
	// Package is the distribution being installed when the line was
	// printed ("" when the log did not say).
	Package string
	// Frames are the traceback frames (file paths) printed shortly before
	// the line, oldest first.
	Frames []string
}

// Scan is what a log holds.
type Scan struct {
	Hits []Hit // in line order, at most maxHitsPerSignature per signature
	// Counts are all matches per signature name, kept or not.
	Counts map[string]int
	Lines  int
	Bytes  int64
	// LongLines counts lines longer than MaxLine, matched on their start.
	LongLines int
	// TorchVersion is the torch a build printed it saw (setup.py's
	// "torch.__version__  = ...").
	TorchVersion string
	// Facts are what the log states about its own environment.
	Facts LogFacts
	// Absorbed maps a signature name to the signatures that matched in
	// this log and explain its hits (kb Signature.Absorbs).
	Absorbed map[string]string
}

// frames is a ring of the last traceback frames, their bytes reused so
// that a log full of tracebacks allocates nothing per frame.
type frames struct {
	path [maxFrames][]byte
	line [maxFrames]int
	next int
}

func (f *frames) add(p []byte, line int) {
	f.path[f.next] = append(f.path[f.next][:0], p...)
	f.line[f.next] = line
	f.next = (f.next + 1) % maxFrames
}

// recent returns the frames printed within frameWindow lines before n,
// oldest first.
func (f *frames) recent(n int) []string {
	var out []string
	for i := range maxFrames {
		j := (f.next + i) % maxFrames
		if f.line[j] > 0 && n-f.line[j] <= frameWindow {
			out = append(out, cleanCapture(f.path[j]))
		}
	}
	return out
}

// Scan reads r to its end. It reads in blocks and searches them in
// parallel for the lines that can match (see scanBlocks); the result is
// the line-by-line scan's.
func (m *Matcher) Scan(r io.Reader) (*Scan, error) {
	return m.scanBlocks(r)
}

// ScanFunc reads r to its end, line by line, and calls done (when not nil)
// with each hit as soon as its evidence is complete: at once for a
// one-line message, after the following lines for a message that
// continues (Next, Wrap); and with a nil hit when the log states a new
// fact about its environment after a hit. The scan is read-only to done.
func (m *Matcher) ScanFunc(r io.Reader, done func(s *Scan, h *Hit)) (*Scan, error) {
	if done == nil {
		return m.scanBlocks(r)
	}
	return m.scanLines(r, done)
}

// scanLines is the line-by-line scan: every line is fed to the state as
// soon as it is read, so a callback hears of a hit at once. The block scan
// is held to its results.
func (m *Matcher) scanLines(r io.Reader, done func(s *Scan, h *Hit)) (*Scan, error) {
	return m.scanLinesSized(r, MaxLine, done)
}

// scanLinesSized is scanLines with its longest line as an argument (at
// least 16, bufio's smallest buffer).
func (m *Matcher) scanLinesSized(r io.Reader, maxLine int, done func(s *Scan, h *Hit)) (*Scan, error) {
	br := bufio.NewReaderSize(r, maxLine)
	st := m.newState(done)
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
type state struct {
	m          *Matcher
	s          *Scan
	done       func(*Scan, *Hit)
	an         analyzer // for the lines fed whole (feed)
	markerSeen []int
	isMarker   []bool // by literal
	pkg        string
	fr         frames
	pending    []pendingNext
	next       []pendingNext // reused for the pending list of the next line
	open       map[int]int   // hit index -> continuations still open
	factDone   []bool        // facts signatures already matched
	one        lineFacts     // reused by feed
}

func (m *Matcher) newState(done func(*Scan, *Hit)) *state {
	st := &state{
		m:          m,
		s:          &Scan{Counts: map[string]int{}, Absorbed: map[string]string{}},
		done:       done,
		an:         m.newAnalyzer(),
		markerSeen: make([]int, len(m.lits)),
		isMarker:   make([]bool, len(m.lits)),
		open:       map[int]int{},
		factDone:   make([]bool, len(m.facts)),
	}
	for _, k := range m.markers {
		st.isMarker[k] = true
	}
	return st
}

// lineFacts is what one line holds, whatever the lines before it: the line
// normalized, the literals in it, and what the context and signature
// patterns matched. Workers find it for many lines at once (analyzer);
// state.apply then adds the lines in order to what the scan knows.
// Indexes are into an arena of ints that the lines of a block share.
type lineFacts struct {
	norm []byte
	// present: the literals in norm (arena[presentAt:ctxAt]); ctx: the
	// context patterns that matched, each as its index and its three
	// captures' spans (package, frame, torch version: 7 ints, -1 when
	// absent); facts: the facts signatures whose literal is present; sigs:
	// each matching signature's index, then its submatch indexes.
	presentAt, ctxAt, factsAt, sigsAt, end int
	// Frames-only context patterns (a traceback's "File" lines) may be
	// left for later (deferred): a frame counts only for a hit at most
	// frameWindow lines below it, so a worker matches them only where a
	// signature matched close enough below (block.search). Their matches
	// are at arena[frameAt:frameEnd], as the ctx ones.
	deferred          bool
	frameAt, frameEnd int
}

// analyzer finds lineFacts; each goroutine has its own.
type analyzer struct {
	m                 *Matcher
	cand              *candidates
	norm              normalizer
	seen              []uint64 // literals seen in the line, as bits
	ints              []int    // the arena
	bytes             []byte   // normalized lines that are not the raw line's bytes
	lits              []int    // scratch
	ctxs, facts, sigs []int    // scratch
}

func (m *Matcher) newAnalyzer() analyzer {
	return analyzer{m: m, cand: m.candidates(), seen: make([]uint64, (len(m.lits)+63)/64)}
}

// reset forgets the lines analyzed so far (their arena is reused).
func (a *analyzer) reset() {
	a.ints, a.bytes = a.ints[:0], a.bytes[:0]
}

// framesOnly reports a context pattern whose only capture is a frame.
func (c *compiled) framesOnly() bool {
	return c.frameIdx > 0 && c.pkgIdx == 0 && c.torchIdx == 0
}

// analyze finds what the raw line (with its end of line) holds; with
// deferFrames, frames-only context patterns are left for matchFrames. The
// normalized line aliases raw or the analyzer's bytes: both must outlive
// the lineFacts, until reset.
func (a *analyzer) analyze(raw []byte, deferFrames bool) lineFacts {
	m := a.m
	line := a.norm.line(raw)
	if a.norm.rewrote {
		// Rewritten into the normalizer's buffer, which the next line
		// reuses: keep a copy.
		at := len(a.bytes)
		a.bytes = append(a.bytes, line...)
		line = a.bytes[at:len(a.bytes):len(a.bytes)]
	}
	lf := lineFacts{norm: line, presentAt: len(a.ints)}
	// Each distinct literal is looked for once, by its anchor pair.
	a.lits = a.cand.present(line, a.seen, a.lits[:0])
	a.ints = append(a.ints, a.lits...)
	lf.ctxAt = len(a.ints)
	if len(a.lits) == 0 {
		lf.factsAt, lf.sigsAt, lf.end = lf.ctxAt, lf.ctxAt, lf.ctxAt
		return lf
	}
	// The patterns to try: those with a literal present, in table order.
	a.ctxs, a.facts, a.sigs = a.ctxs[:0], a.facts[:0], a.sigs[:0]
	for _, k := range a.lits {
		u := &m.users[k]
		a.ctxs = append(a.ctxs, u.ctxs...)
		a.facts = append(a.facts, u.facts...)
		a.sigs = append(a.sigs, u.sigs...)
		a.seen[k>>6] = 0
	}
	if len(a.lits) > 1 {
		a.ctxs, a.facts, a.sigs = sortedSet(a.ctxs), sortedSet(a.facts), sortedSet(a.sigs)
	}
	for _, i := range a.ctxs {
		if c := &m.ctxs[i]; deferFrames && c.framesOnly() {
			lf.deferred = true
			continue
		}
		a.matchContext(i, line)
	}
	lf.factsAt = len(a.ints)
	a.ints = append(a.ints, a.facts...)
	lf.sigsAt = len(a.ints)
	for _, i := range a.sigs {
		if loc := m.sigs[i].re.FindSubmatchIndex(line); loc != nil {
			a.ints = append(a.ints, i)
			a.ints = append(a.ints, loc...)
		}
	}
	lf.end = len(a.ints)
	return lf
}

// matchContext adds context pattern i's match in line, if any, to the
// arena.
func (a *analyzer) matchContext(i int, line []byte) {
	c := &a.m.ctxs[i]
	loc := c.re.FindSubmatchIndex(line)
	if loc == nil {
		return
	}
	a.ints = append(a.ints, i)
	for _, j := range []int{c.pkgIdx, c.frameIdx, c.torchIdx} {
		if j <= 0 || loc[2*j] < 0 {
			a.ints = append(a.ints, -1, -1)
		} else {
			a.ints = append(a.ints, loc[2*j], loc[2*j+1])
		}
	}
}

// matchFrames matches the frames-only context patterns analyze left.
func (a *analyzer) matchFrames(lf *lineFacts) {
	lf.frameAt = len(a.ints)
	for _, k := range a.ints[lf.presentAt:lf.ctxAt] {
		for _, i := range a.m.users[k].ctxs {
			if a.m.ctxs[i].framesOnly() {
				a.matchContext(i, lf.norm)
			}
		}
	}
	lf.frameEnd = len(a.ints)
	lf.deferred = false
}

// sortedSet sorts a few indexes and drops repeats.
func sortedSet(x []int) []int {
	slices.Sort(x)
	return slices.Compact(x)
}

// feed matches one raw line (with its end of line).
func (st *state) feed(raw []byte) {
	st.an.reset()
	st.one = st.an.analyze(raw, false)
	st.apply(&st.one, st.an.ints, raw)
}

// apply adds one line, analyzed, to the scan: the line after those
// applied before it. ints is the arena of its lineFacts.
func (st *state) apply(lf *lineFacts, ints []int, raw []byte) {
	s, m := st.s, st.m
	s.Bytes += int64(len(raw))
	s.Lines++
	n := s.Lines
	line := lf.norm

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
	if lf.presentAt == lf.ctxAt {
		return // no literal: nothing more to match
	}

	for _, k := range ints[lf.presentAt:lf.ctxAt] {
		if st.isMarker[k] {
			st.markerSeen[k] = n
		}
	}
	// The context matches in table order: those analyze found, merged
	// with the frames matched later (matchFrames).
	for at, fat := lf.ctxAt, lf.frameAt; at < lf.factsAt || fat < lf.frameEnd; {
		var c int
		if fat >= lf.frameEnd || (at < lf.factsAt && ints[at] < ints[fat]) {
			c, at = at, at+7
		} else {
			c, fat = fat, fat+7
		}
		span := func(j int) []byte {
			if ints[c+j] < 0 {
				return nil
			}
			return line[ints[c+j]:ints[c+j+1]]
		}
		if v := span(1); len(v) > 0 {
			st.pkg = cleanCapture(v)
		}
		if v := span(3); len(v) > 0 {
			st.fr.add(v, n)
		}
		if v := span(5); len(v) > 0 {
			s.TorchVersion = cleanCapture(v)
		}
	}
	for _, i := range ints[lf.factsAt:lf.sigsAt] {
		c := &m.facts[i]
		// A fact is stated once: the first statement wins, and a long
		// log repeats it on every frame (".../python3.12/site-packages/").
		if st.factDone[i] {
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
	for at := lf.sigsAt; at < lf.end; {
		c := &m.sigs[ints[at]]
		sub := ints[at+1 : at+1+2*len(c.captures)]
		at += 1 + 2*len(c.captures)
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
func (st *state) complete(hit int) {
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
func (st *state) finish() {
	for _, p := range st.pending {
		st.complete(p.hit)
	}
	st.pending = st.pending[:0]
}

// pendingNext is a continuation a hit waits for on the following line(s).
type pendingNext struct {
	hit     int
	re      *regexp.Regexp
	wrap    bool
	capture string
	left    int
}

func captures(c *compiled, line []byte, loc []int) map[string]string {
	out := map[string]string{}
	for i, name := range c.captures {
		if name != "" && 2*i+1 < len(loc) && loc[2*i] >= 0 && loc[2*i+1] > loc[2*i] {
			out[name] = cleanCapture(line[loc[2*i]:loc[2*i+1]])
		}
	}
	return out
}

// ansi matches the colour and cursor escapes logs carry from terminals.
var ansi = lazyregexp.New(`\x1b\[[0-9;?]*[A-Za-z]`)

// cleanText makes a matched line fit for evidence: valid UTF-8, no
// terminal escapes or carriage returns, trimmed, capped.
func cleanText(line []byte) string {
	s := string(line)
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansi.ReplaceAllString(s, "")
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	return capRunes(s, maxTextLen)
}

func cleanCapture(b []byte) string {
	return capRunes(strings.ToValidUTF8(strings.TrimSpace(string(b)), "\uFFFD"), 200)
}

func capRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
