package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/render"
)

// WriteText prints the plan for people: per finding, its options best
// first, each with its checks, why it ranks there, and its commands. Prose
// wraps to o's width under a hanging indent; commands stay on one line. -q
// (o.Quiet) prints each option's title line only.
func WriteText(w io.Writer, pl *Plan, o render.Options) error {
	p := render.NewPrinter(w, o)
	if len(pl.Steps) == 0 {
		p.Line("Nothing to fix: no finding has a fix.")
	}
	last := ""
	for _, s := range pl.Steps {
		key := string(s.Finding) + "\x00" + s.Package
		if key != last {
			last = key
			head := string(s.Finding)
			if s.Package != "" {
				head += ": " + s.Package
			}
			if !o.Quiet() {
				p.Blank()
			}
			p.Line(p.P.B(head))
		}
		mark := "viable"
		switch {
		case !s.Viable:
			mark = "not viable"
		case s.Manual:
			mark = "manual"
		}
		p.Para(fmt.Sprintf("  %d. ", s.Option), s.Title+"  "+p.P.D("["+mark+"; "+s.ID+"]"))
		if o.Quiet() {
			continue
		}
		const in = "     "
		p.Para(in+"why here: ", s.RankReason)
		if s.Verification != "" {
			p.Para(in, s.Verification)
		} else if !s.Verified {
			p.Line(in + "unverified")
		}
		for _, pc := range s.Preconditions {
			tag := "ok  "
			switch {
			case pc.Unknown:
				tag = "?   "
			case !pc.OK:
				tag = "FAIL"
			}
			p.Para(in+tag+" ", pc.Check+": "+pc.Detail)
		}
		if s.FillIn != "" {
			p.Para(in+"by hand: ", s.FillIn)
		}
		if c := costWords(s); c != "" {
			p.Para(in+"cost: ", c)
		}
		for _, c := range s.Changes {
			p.Para(in+"changes: ", c)
		}
		for _, c := range s.Commands {
			p.Cmd(in, c)
		}
		for _, u := range s.Undo {
			p.Line(in + "undo: " + u) // a command: never wrapped
		}
	}
	if !o.Quiet() {
		for _, n := range pl.Notes {
			p.Blank()
			p.Para("note: ", n)
		}
	}
	return p.Err()
}

// costWords is a step's cost in one line ("" when nothing is known).
func costWords(s Step) string {
	var parts []string
	c := s.Cost
	if c.Seconds > 0 {
		parts = append(parts, fmt.Sprintf("about %d min", (c.Seconds+30)/60))
	}
	if c.Download > 0 {
		parts = append(parts, fmt.Sprintf("%d MiB download", c.Download))
	}
	if c.DiskMiB > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB disk", float64(c.DiskMiB)/1024))
	}
	if c.MemMiB > 0 {
		parts = append(parts, fmt.Sprintf("%.0f GiB memory", float64(c.MemMiB)/1024))
	}
	if c.Basis != "" {
		parts = append(parts, "("+c.Basis+")")
	}
	return strings.Join(parts, ", ")
}
