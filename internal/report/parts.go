package report

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

// A doctor report of a big environment is mostly two lists: the selected
// environment's distributions (2 MB of compact JSON at 5,000) and the
// extensions (1 MB at 4,096). encoding/json encodes one value on one core;
// doctorParts encodes those lists in pieces on every core while the rest of
// the report is encoded around a placeholder for each, then puts them in
// the placeholders' places. A JSON value encodes the same wherever it sits,
// so the result is what encoding the report whole gives, byte for byte.

// partsMin is how many distributions and extensions together make JSON
// encode a doctor report in parts (a var so that tests can lower it);
// below it one encoder is quicker than starting others.
var partsMin = 2000

// partSize is how many list elements one piece holds.
const partSize = 1000

// doctorParts is the compact JSON of d (with the trailing newline a
// json.Encoder writes), encoded in parts, as segments to write in order; ok
// is false when d is too small to be worth it or a placeholder cannot be
// found once (then encode d whole).
func doctorParts(d Doctor) (segs [][]byte, ok bool) {
	f := d.Facts
	if f == nil {
		return nil, false
	}
	var dists []facts.Distribution
	if f.Python.Selected != nil {
		dists = f.Python.Selected.Distributions
	}
	if len(dists)+len(f.Extensions) < partsMin || len(dists) == 0 || len(f.Extensions) == 0 {
		return nil, false
	}
	// The placeholders are lists of one element named by a random token:
	// nothing read from the machine can spell it.
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		return nil, false
	}
	mark := "\x00fastpath-part-" + hex.EncodeToString(token[:])
	distMark := []facts.Distribution{{Name: mark}}
	extMark := []facts.Extension{{Path: mark}}

	// The report with the placeholders in place of the lists: shallow
	// copies, so the facts themselves are not touched.
	fc := *f
	sel := *f.Python.Selected
	sel.Distributions = distMark
	fc.Python.Selected = &sel
	fc.Extensions = extMark
	d.Facts = &fc

	type piece struct {
		b   []byte
		err error
	}
	var pieces []piece
	var jobs []func() ([]byte, error)
	for lo := 0; lo < len(dists); lo += partSize {
		part := dists[lo:min(lo+partSize, len(dists))]
		jobs = append(jobs, func() ([]byte, error) { return compact(part) })
	}
	nDist := len(jobs)
	for lo := 0; lo < len(f.Extensions); lo += partSize {
		part := f.Extensions[lo:min(lo+partSize, len(f.Extensions))]
		jobs = append(jobs, func() ([]byte, error) { return compact(part) })
	}
	jobs = append(jobs,
		func() ([]byte, error) { return compact(d) },
		func() ([]byte, error) { return compact(distMark) },
		func() ([]byte, error) { return compact(extMark) })
	pieces = make([]piece, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Go(func() { pieces[i].b, pieces[i].err = job() })
	}
	wg.Wait()
	for _, p := range pieces {
		if p.err != nil {
			return nil, false
		}
	}
	n := len(pieces)
	skeleton, distHole, extHole := pieces[n-3].b, pieces[n-2].b, pieces[n-1].b
	di, ei := bytes.Index(skeleton, distHole), bytes.Index(skeleton, extHole)
	if di < 0 || ei < 0 || di > ei || bytes.Count(skeleton, []byte(hex.EncodeToString(token[:]))) != 2 {
		return nil, false
	}
	// The report, as the segments to write one after the other: the
	// skeleton up to a placeholder, the pieces' elements as one list, and
	// so on. None cuts a token in two, so they can be indented one by one.
	join := func(ps []piece) {
		for i, p := range ps {
			open, elems := []byte(","), p.b[1:len(p.b)-1] // without [ ]
			if i == 0 {
				open = []byte("[")
			}
			segs = append(segs, open, elems)
		}
		segs = append(segs, []byte("]"))
	}
	segs = append(segs, skeleton[:di])
	join(pieces[:nDist])
	segs = append(segs, skeleton[di+len(distHole):ei])
	join(pieces[nDist : n-3])
	segs = append(segs, skeleton[ei+len(extHole):], []byte("\n"))
	return segs, true
}

// compact is v as a json.Encoder writes it (HTML characters not escaped),
// without the trailing newline.
func compact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
