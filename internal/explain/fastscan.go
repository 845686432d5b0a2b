package explain

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
)

// The block scan: what Scan does with a log, with the same result as
// feeding every line to state.feed (the line-by-line scan), and as the
// scanner before it (refScan, kept in reference_test.go), which
// TestBlockScanMatchesLineScan and FuzzBlockScan hold it to.
//
// The log is read in blocks of whole lines (blockSize, whatever the size
// of the log: memory stays bounded and stdin still streams). Workers find
// each block's candidate lines (candidates.find), analyze them (the
// stateless part of matching a line: analyzer.analyze) and count its
// lines, in parallel; one goroutine then applies the analyzed lines,
// block after block in log order, to the state the line-by-line scan
// uses, with the line numbers and byte counts they would have had. A line
// that follows a hit still waiting for its continuation is fed whatever it
// holds.

const (
	// blockSize is the bytes read per block: big enough that handing a
	// block to a worker costs little, small enough to stay in a core's
	// cache while it is searched.
	blockSize = 256 << 10
	// maxWorkers bounds the goroutines searching blocks: beyond a few, the
	// one goroutine that feeds candidates in order is the limit.
	maxWorkers = 8
	// maxAnalyzed caps the candidate lines a worker analyzes in one block
	// (a real block of 256 KiB has a few hundred): what it keeps of each
	// costs more than a short line, so a hostile log of short matching
	// lines would otherwise hold many times its blocks in memory. The rest
	// of such a block is fed line by line, in order.
	maxAnalyzed = 4096
)

// block is a run of whole lines of the log and what the workers found in
// it.
type block struct {
	buf  []byte // the block's storage (blockSize), reused
	data []byte // whole lines; the last may lack its newline at the end of the log
	// head marks a block that is only the first MaxLine bytes of one
	// overlong line; tail is how many more bytes that line had, its
	// newline included.
	head bool
	tail int64
	// found by a worker
	cands []lineSpan
	found []lineFacts // by candidate, in an.ints
	longs []lineSpan
	lines int // lines in data
	// rest: where the candidates stopped at the cap (len(data) when they
	// did not); the lines from there are fed one by one. restIndex is
	// the index of the line at rest.
	rest, restIndex int
	an              analyzer
	done            chan struct{}
}

// scanBlocks reads r to its end in blocks and scans it.
func (m *Matcher) scanBlocks(r io.Reader) (*Scan, error) {
	return m.scanBlocksSized(r, blockSize, MaxLine, maxAnalyzed)
}

// scanBlocksSized is scanBlocks with its sizes as arguments (tests make
// them small, to cross block boundaries, overlong lines and the cap on
// analyzed lines often); size must be more than maxLine.
func (m *Matcher) scanBlocksSized(r io.Reader, size, maxLine, maxCands int) (*Scan, error) {
	st := m.newState(nil)
	workers := min(runtime.GOMAXPROCS(0), maxWorkers)
	// Blocks in flight: each worker one, one being read, one being fed.
	nbuf := workers + 2
	free := make(chan *block, nbuf)
	for range nbuf {
		free <- &block{buf: make([]byte, size), an: m.newAnalyzer(), done: make(chan struct{}, 1)}
	}
	work := make(chan *block, nbuf)
	ordered := make(chan *block, nbuf)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				b.search(maxLine, maxCands)
				b.done <- struct{}{}
			}
		}()
	}
	var readErr error
	go func() {
		readErr = readBlocks(r, size, maxLine, free, work, ordered)
		close(work)
		close(ordered)
	}()
	feedBlocks(st, maxLine, ordered, free)
	wg.Wait()
	st.finish()
	return st.s, readErr
}

// search finds the block's candidate lines, analyzes them and counts the
// block's lines.
func (b *block) search(maxLine, maxCands int) {
	b.cands, b.longs, b.found = b.cands[:0], b.longs[:0], b.found[:0]
	b.an.reset()
	b.rest = len(b.data)
	if b.head {
		b.lines = 1
		b.cands = append(b.cands, lineSpan{start: 0, end: len(b.data)})
		b.longs = append(b.longs, lineSpan{start: 0, end: len(b.data)})
		b.found = append(b.found, b.an.analyze(b.data, false))
		return
	}
	b.cands, b.rest = b.an.cand.find(b.data, b.cands, maxCands)
	for _, c := range b.cands {
		b.found = append(b.found, b.an.analyze(fedLine(b.data, c.start, c.end, maxLine), true))
	}
	b.longs = longSpans(b.data, maxLine, b.longs)
	// Line indexes: the newlines before each candidate, counted once.
	n, at := 0, 0
	for i := range b.cands {
		n += bytes.Count(b.data[at:b.cands[i].start], []byte{'\n'})
		at = b.cands[i].start
		b.cands[i].index = n
	}
	b.restIndex = n + bytes.Count(b.data[at:b.rest], []byte{'\n'})
	n += bytes.Count(b.data[at:], []byte{'\n'})
	if len(b.data) > 0 && b.data[len(b.data)-1] != '\n' {
		n++ // the log's last line, without its newline
	}
	b.lines = n
	// Frames count only within frameWindow lines above a hit: match the
	// deferred ones above a line a signature matched, and near the
	// block's end or the cap (a hit in the lines fed one by one or in the
	// next blocks may be close below).
	below := b.restIndex // the nearest signature match below, as a line index
	for i := len(b.found) - 1; i >= 0; i-- {
		lf := &b.found[i]
		if lf.sigsAt < lf.end {
			below = b.cands[i].index
		}
		if lf.deferred && below-b.cands[i].index <= frameWindow {
			b.an.matchFrames(lf)
		}
	}
}

// fedLine is the bytes of the line at start (its newline at end, or none
// at the end of the log) that the scan matches: the line with its newline,
// or the first maxLine bytes of an overlong line.
func fedLine(d []byte, start, end, maxLine int) []byte {
	if end-start >= maxLine {
		return d[start : start+maxLine]
	}
	return d[start:min(end+1, len(d))]
}

// readBlocks fills blocks from r and hands each to a worker and, in log
// order, to the feeder. A partial last line is carried to the next block;
// a line that does not fit a block is overlong: its first MaxLine bytes go
// as a block of their own (head) and the rest is read past.
func readBlocks(r io.Reader, size, maxLine int, free, work, ordered chan *block) error {
	var (
		carry []byte // the partial line after a block's last newline
		err   error  // the reader's error, once it has one
		empty int    // reads in a row that returned nothing
	)
	// What follows an overlong line in the same read is carried to the
	// next block: reads past it are never more than a block.
	skip := make([]byte, min(32<<10, size))
	read := func(p []byte) int {
		if err != nil {
			return 0
		}
		k, e := r.Read(p)
		if k > 0 {
			empty = 0
		} else if empty++; e == nil && empty >= 100 {
			e = io.ErrNoProgress // as bufio.Reader says of such a reader
		}
		err = e
		return k
	}
	for {
		b := <-free
		n := copy(b.buf, carry)
		carry = carry[:0]
		for n < len(b.buf) && err == nil {
			n += read(b.buf[n:])
		}
		data := b.buf[:n]
		b.head, b.tail = false, 0
		if err == nil {
			last := bytes.LastIndexByte(data, '\n')
			if last < 0 {
				// One line fills the block: overlong. Keep its start,
				// read past its rest.
				b.head = true
				b.tail = int64(len(data) - maxLine)
				data = data[:maxLine]
				for {
					k := read(skip)
					if i := bytes.IndexByte(skip[:k], '\n'); i >= 0 {
						b.tail += int64(i + 1)
						carry = append(carry, skip[i+1:k]...)
						break
					}
					b.tail += int64(k)
					if err != nil {
						break
					}
				}
			} else {
				carry = append(carry, data[last+1:]...)
				data = data[:last+1]
			}
		}
		b.data = data
		if len(data) > 0 || b.head {
			work <- b
			ordered <- b
		} else {
			free <- b
		}
		if err != nil && len(carry) == 0 {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// feedBlocks feeds each block's candidates to st in log order, with the
// line numbers and byte counts the line-by-line scan would have had, and
// the line after any fed line while a hit waits for its continuation.
func feedBlocks(st *state, maxLine int, ordered, free chan *block) {
	s := st.s
	var (
		lines  int   // lines before the block
		nbytes int64 // bytes before the block
		long   int   // overlong lines before the block
		// contNext: the first line of the next block continues a hit.
		contNext bool
	)
	for b := range ordered {
		<-b.done
		if b.head {
			s.Lines, s.Bytes = lines, nbytes+b.tail
			s.LongLines = long + 1
			st.apply(&b.found[0], b.an.ints, b.data)
			lines, nbytes, long = lines+1, nbytes+int64(len(b.data))+b.tail, long+1
			contNext = len(st.pending) > 0
			free <- b
			continue
		}
		d := b.data
		li := 0 // the next long line of the block
		// pos, idx: the first byte and index of the first line not yet fed.
		pos, idx := 0, 0
		// feedLine feeds the line at start (or applies its lineFacts,
		// when the worker found them) and returns where the next begins.
		feedLine := func(start, index int, found *lineFacts) (next int) {
			end := len(d)
			if k := bytes.IndexByte(d[start:], '\n'); k >= 0 {
				end = start + k
			}
			raw := fedLine(d, start, end, maxLine)
			for li < len(b.longs) && b.longs[li].start < start {
				li++
			}
			s.LongLines = long + li
			if end-start >= maxLine {
				s.LongLines++
			}
			s.Lines = lines + index
			s.Bytes = nbytes + int64(min(end+1, len(d))-len(raw))
			if found != nil {
				st.apply(found, b.an.ints, raw)
			} else {
				st.feed(raw)
			}
			return min(end+1, len(d))
		}
		if contNext && len(d) > 0 {
			pos, idx = feedLine(0, 0, nil), 1
		}
		ci := 0
		for {
			// Follow a hit's continuations line by line.
			for len(st.pending) > 0 && pos < len(d) {
				pos = feedLine(pos, idx, nil)
				idx++
			}
			for ci < len(b.cands) && b.cands[ci].start < pos {
				ci++
			}
			if ci == len(b.cands) {
				break
			}
			c := b.cands[ci]
			pos, idx = feedLine(c.start, c.index, &b.found[ci]), c.index+1
			ci++
		}
		// Past the cap: every line, as the line-by-line scan does.
		if pos < b.rest {
			pos, idx = b.rest, b.restIndex
		}
		for b.rest < len(d) && pos < len(d) {
			pos = feedLine(pos, idx, nil)
			idx++
		}
		contNext = len(st.pending) > 0
		lines += b.lines
		nbytes += int64(len(d))
		long += len(b.longs)
		s.Lines, s.Bytes, s.LongLines = lines, nbytes, long
		free <- b
	}
}
