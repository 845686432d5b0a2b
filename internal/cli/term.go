package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal: golang.org/x/term's
// IsTerminal (a tcgetattr ioctl, no cgo). A character-device test is not
// enough: /dev/null and /dev/zero are character devices (F11).
func isTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		w = u.Unwrap() // the sanitising writer of Main
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// noColor honours https://no-color.org: any non-empty NO_COLOR disables colour.
func noColor() bool { return os.Getenv("NO_COLOR") != "" }
