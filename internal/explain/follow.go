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
// the build still runs. Each finding id is emitted once, when first seen;
// later lines only add to its evidence in the final findings returned,
// which are ordered root cause first as Findings orders them.
func (m *Matcher) Follow(r io.Reader, f *facts.Facts, emit func(Finding) error) (*Scan, []Finding, error) {
	seen := map[finding.ID]bool{}
	var emitErr error
	s, err := m.ScanFunc(r, func(s *Scan, _ *Hit) {
		if emitErr != nil {
			return
		}
		for _, fd := range Findings(s, f) {
			if seen[fd.ID] {
				continue
			}
			seen[fd.ID] = true
			if emitErr = emit(fd); emitErr != nil {
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
