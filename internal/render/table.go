package render

import "strings"

// Table writes rows as aligned columns, two spaces apart, the way
// text/tabwriter does, but measuring cells in terminal columns (wide
// characters count two) and wrapping the LAST column under a hanging
// indent at its own start, so a long reason or path never runs past the
// width. A header, when given, is written first (bold). When the last
// column would start within 20 columns of the width, it is not wrapped.
func (p *Printer) Table(header []string, rows [][]string) {
	all := rows
	if header != nil {
		all = append([][]string{header}, rows...)
	}
	var widths []int
	for _, r := range all {
		for i, c := range r[:max(len(r)-1, 0)] {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], Width(c))
		}
	}
	for n, r := range all {
		var b strings.Builder
		for i, c := range r[:max(len(r)-1, 0)] {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-Width(c)+2))
		}
		lead := b.String()
		last := ""
		if len(r) > 0 {
			last = r[len(r)-1]
		}
		if n == 0 && header != nil {
			p.Line(p.P.B(strings.TrimRight(lead+last, " ")))
			continue
		}
		if Width(lead)+20 > p.O.Cols() || last == "" {
			p.Line(strings.TrimRight(lead+last, " "))
			continue
		}
		p.Lines(Wrap(last, p.O.Cols(), lead, strings.Repeat(" ", Width(lead))))
	}
}
