package explain

import (
	"io"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// Follow reads r to its end like Scan and calls emit with each finding as
// soon as its evidence is complete: the line that shows it has been read
// (and, for a message that continues, the lines that complete it), so that
// `tail -f build.log | fastpath explain --follow -` reports a failure while
// the build still runs. Each finding id is emitted once, when first seen,
// and again (revised true) only if a later line states a fact of the
// log's environment that changes its fixes (the torch version printed
// after the first error). The final findings returned are ordered root
// cause first as Findings orders them.
func (m *Matcher) Follow(r io.Reader, f *facts.Facts, emit func(fd Finding, revised bool) error) (*Scan, []Finding, error) {
	sent := map[finding.ID]string{}
	var emitErr error
	s, err := m.ScanFunc(r, func(s *Scan, _ *Hit) {
		if emitErr != nil {
			return
		}
		for _, fd := range Findings(s, f) {
			key := fixesKey(fd)
			prev, seen := sent[fd.ID]
			if seen && prev == key {
				continue
			}
			sent[fd.ID] = key
			if emitErr = emit(fd, seen); emitErr != nil {
				return
			}
		}
	})
	if err == nil {
		err = emitErr
	}
	if s == nil {
		return nil, nil, err
	}
	return s, Findings(s, f), err
}

// fixesKey identifies what a user would act on: the fixes' words.
func fixesKey(fd Finding) string {
	var b []byte
	for _, fx := range fd.Fixes {
		b = append(b, fx.Title...)
		for _, c := range fx.Commands {
			b = append(b, '\n')
			b = append(b, c...)
		}
		b = append(b, 0)
	}
	return string(b)
}
