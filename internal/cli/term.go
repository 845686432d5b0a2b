package cli

import (
	"io"
	"os"
)

// isTerminal reports whether w is a character device (a terminal), without
// cgo or x/term: a Stat of the file is enough for colour decisions.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// noColor honours https://no-color.org: any non-empty NO_COLOR disables colour.
func noColor() bool { return os.Getenv("NO_COLOR") != "" }
