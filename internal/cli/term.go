package cli

import (
	"io"
	"os"

	"github.com/fastpath-dev/fastpath/internal/render"
)

// isTerminal reports whether w is a terminal (internal/render.Terminal:
// golang.org/x/term's IsTerminal, through cli.Main's sanitising writer).
func isTerminal(w io.Writer) bool { return render.Terminal(w) }

// noColor honours https://no-color.org: any non-empty NO_COLOR disables colour.
func noColor() bool { return render.NoColor(os.Getenv) }
