package plan

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the plan for people: per finding, its options best
// first, each with its checks, why it ranks there, and its commands.
func WriteText(w io.Writer, pl *Plan) error {
	var b strings.Builder
	if len(pl.Steps) == 0 {
		b.WriteString("Nothing to fix: no finding has a fix.\n")
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
			fmt.Fprintf(&b, "\n%s\n", head)
		}
		mark := "viable"
		switch {
		case !s.Viable:
			mark = "not viable"
		case s.Manual:
			mark = "manual"
		}
		fmt.Fprintf(&b, "  %d. %s  [%s; %s]\n", s.Option, s.Title, mark, s.ID)
		fmt.Fprintf(&b, "     why here: %s\n", s.RankReason)
		if s.Verification != "" {
			fmt.Fprintf(&b, "     %s\n", s.Verification)
		} else if !s.Verified {
			b.WriteString("     unverified\n")
		}
		for _, pc := range s.Preconditions {
			tag := "ok  "
			switch {
			case pc.Unknown:
				tag = "?   "
			case !pc.OK:
				tag = "FAIL"
			}
			fmt.Fprintf(&b, "     %s %s: %s\n", tag, pc.Check, pc.Detail)
		}
		if s.FillIn != "" {
			fmt.Fprintf(&b, "     by hand: %s\n", s.FillIn)
		}
		if c := costWords(s); c != "" {
			fmt.Fprintf(&b, "     cost: %s\n", c)
		}
		for _, c := range s.Changes {
			fmt.Fprintf(&b, "     changes: %s\n", c)
		}
		for _, c := range s.Commands {
			fmt.Fprintf(&b, "     $ %s\n", c)
		}
		for _, u := range s.Undo {
			fmt.Fprintf(&b, "     undo: %s\n", u)
		}
	}
	for _, n := range pl.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
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
