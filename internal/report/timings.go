package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

// Timings prints where collection's time went (`doctor --timings`): one
// row per collector in the order they started, its wall time, the files it
// opened and the bytes it read from the source, and how many of its
// lookups the per-run cache answered. Collectors overlap, so the column
// sums to more than the total.
func Timings(w io.Writer, t *facts.Timings) error {
	if t == nil {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "collector\tstart ms\tms\tfiles\tbytes\tlookups\tcached\texecs\t\n")
	for _, c := range t.Collectors {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%d\t%s\t%d\t%d\t%d\t\n", c.Name, c.StartMS, c.MS, c.Opens, byteCount(c.Bytes), c.Lookups, c.Cached, c.Execs)
	}
	fmt.Fprintf(tw, "total\t\t%.1f\t%d\t%s\t\t\t\t\n", t.TotalMS, t.Files, byteCount(t.Bytes))
	return tw.Flush()
}

func byteCount(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
