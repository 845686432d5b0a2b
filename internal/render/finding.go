package render

import (
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// DefaultEvidence is how many evidence lines the default level shows when
// a finding does not name its decisive lines (finding.Finding.Decisive):
// its first ones that are not searched places (producers put the lines that
// decide the verdict first).
const DefaultEvidence = 2

// EvidenceView is a finding's evidence split for the default level.
type EvidenceView struct {
	Shown    []string // the decisive lines
	Searched int      // places searched ("searched: ..." lines)
	Hidden   int      // other evidence lines not shown
}

// SplitEvidence picks the evidence the default level shows: the lines
// fd.Decisive names, else the first DefaultEvidence lines that are not
// searched places; it counts the searched places and the lines left out.
func SplitEvidence(fd finding.Finding) EvidenceView {
	var v EvidenceView
	decisive := map[int]bool{}
	for _, i := range fd.Decisive {
		if i >= 0 && i < len(fd.Evidence) {
			decisive[i] = true
		}
	}
	for i, e := range fd.Evidence {
		if _, ok := finding.SearchedPlace(e); ok {
			v.Searched++
			if !decisive[i] {
				continue
			}
		}
		switch {
		case decisive[i]:
			v.Shown = append(v.Shown, e)
		case len(decisive) == 0 && len(v.Shown) < DefaultEvidence:
			if _, ok := finding.SearchedPlace(e); !ok {
				v.Shown = append(v.Shown, e)
			}
		default:
			v.Hidden++
		}
	}
	return v
}

// FindingQuiet writes fd as -q does: one line, severity, id, title.
func (p *Printer) FindingQuiet(fd finding.Finding) {
	p.Line(p.P.SeverityLabel(fd.Severity) + string(fd.ID) + "  " + fd.Title)
}

// Finding writes one finding at p's level (Quiet writes FindingQuiet's
// line):
//
//	ERROR  Title, wrapped under itself  [id]
//	  Detail (the first sentence by default; all of it with -v)
//	  Evidence:
//	    - decisive lines (every line with -v, searched places included)
//	    - searched 22 places, 3 more lines (-v shows them)
//	  Fix 1: title
//	      $ command, on one line whatever the width
//
// extra, when not nil, writes lines after the evidence (explain's log
// lines); it is called at every level but Quiet.
func (p *Printer) Finding(fd finding.Finding, extra func(*Printer)) {
	if p.O.Quiet() {
		p.FindingQuiet(fd)
		return
	}
	pl := p.P
	// The title wraps under itself and the id follows it two spaces on,
	// on a line of its own when it does not fit. Colour is added line by
	// line, so that no escape code spans a line break.
	id := "[" + string(fd.ID) + "]"
	const hang = "       "
	lines := Hang(fd.Title, p.O.Cols(), hang)
	last := lines[len(lines)-1]
	idOwnLine := Width(last)+2+Width(id) > p.O.Cols() && Width(last) > len(hang)
	for i, l := range lines {
		lead := hang
		if i == 0 {
			lead = pl.SeverityLabel(fd.Severity)
		}
		l = pl.B(strings.TrimPrefix(l, hang))
		if i == len(lines)-1 && !idOwnLine {
			l += "  " + pl.D(id)
		}
		p.Line(lead + l)
	}
	if idOwnLine {
		p.Line(hang + pl.D(id))
	}
	detail, more := fd.Detail, ""
	if !p.O.Verbose() {
		detail, more = FirstSentence(fd.Detail)
	}
	if detail != "" {
		p.Para("  ", detail)
	}
	ev := SplitEvidence(fd)
	shown := ev.Shown
	if p.O.Verbose() {
		shown = fd.Evidence
	}
	if p.O.Verbose() {
		// Every line, under a heading.
		if len(shown) > 0 {
			p.Line("  " + pl.B("Evidence:"))
		}
		for _, e := range shown {
			p.Para("    - ", e)
		}
	} else {
		// The decisive lines as a list under the detail, and one line for
		// what -v adds.
		for _, e := range shown {
			p.Para("  - ", e)
		}
		if h := hiddenNote(ev, more != ""); h != "" {
			p.Para("  ", pl.D(h))
		}
	}
	if extra != nil {
		extra(p)
	}
	for i, fx := range fd.Fixes {
		p.Para("  "+pl.B("Fix "+strconv.Itoa(i+1)+":")+" ", fx.Title)
		for _, c := range fx.Commands {
			p.Cmd("      ", c)
		}
	}
}

// hiddenNote is the default level's line about what -v adds: "searched
// 22 places, 3 more evidence lines (-v lists them, and the full detail)".
func hiddenNote(ev EvidenceView, moreDetail bool) string {
	var parts []string
	if ev.Searched > 0 {
		parts = append(parts, "searched "+Count(ev.Searched, "place", "places"))
	}
	if ev.Hidden > 0 {
		parts = append(parts, Count(ev.Hidden, "more evidence line", "more evidence lines"))
	}
	switch {
	case len(parts) == 0 && !moreDetail:
		return ""
	case len(parts) == 0:
		return "(-v shows the full detail)"
	}
	them := "them"
	if ev.Searched+ev.Hidden == 1 {
		them = "it"
	}
	tail := ")"
	if moreDetail {
		tail = ", and the full detail)"
	}
	return strings.Join(parts, ", ") + " (-v lists " + them + tail
}
