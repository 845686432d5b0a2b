package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/render"
)

// Output is the output flags every command that prints shares
// (docs/output.md): --format, its aliases --json and --markdown, -v/--verbose,
// -q/--quiet and --width. A command embeds it in its options and registers
// it with one addOutputFlags call.
type Output struct {
	Format   string // --format; "" is the command's first format
	JSON     bool   // --json: --format json
	Markdown bool   // --markdown: --format markdown
	Verbose  bool   // -v: every searched place, all evidence, every fact
	Quiet    bool   // -q: ids and titles only; the exit status is unchanged
	Width    int    // --width: columns to wrap text to (0: the terminal's, else 100)

	formats []string
}

// formatHelp says what each --format value is, for the flag's help.
var formatHelp = map[string]string{
	"text":     "text",
	"json":     "json",
	"markdown": "markdown",
	"prom":     "prom (node_exporter textfile metrics)",
	"nfd":      "nfd (node-feature-discovery labels)",
	"yaml":     "yaml (kubectl apply -f -)",
}

// textFlags are the text-output flags a command honours; it registers only
// those (a flag that changes nothing is not offered: TestEveryFlagIsRead).
type textFlags uint8

const (
	verboseFlag textFlags = 1 << iota // -v/--verbose
	quietFlag                         // -q/--quiet
	widthFlag                         // --width
	// allText is every text flag: the commands whose text goes through
	// render's levels and wrapping.
	allText = verboseFlag | quietFlag | widthFlag
)

// addOutputFlags registers o's flags on cmd: the text flags in text, and
// --format with the values formats lists, the default first; --json and
// --markdown are registered as aliases when their format is among them.
// It also makes cmd resolve --format before it runs (Output.resolve, as
// its PreRunE).
func addOutputFlags(cmd *cobra.Command, o *Output, text textFlags, formats ...string) {
	o.formats = formats
	fs := cmd.Flags()
	var names []string
	for _, f := range formats {
		names = append(names, formatHelp[f])
	}
	fs.StringVar(&o.Format, "format", "", "output `FORMAT`: "+orList(names)+" (default "+formats[0]+")")
	group := []string{"format"}
	if slices.Contains(formats, "json") {
		fs.BoolVar(&o.JSON, "json", false, "print JSON (the same as --format json)")
		group = append(group, "json")
	}
	if slices.Contains(formats, "markdown") {
		fs.BoolVar(&o.Markdown, "markdown", false, "print Markdown (the same as --format markdown)")
		group = append(group, "markdown")
	}
	if text&verboseFlag != 0 {
		fs.BoolVarP(&o.Verbose, "verbose", "v", false, "text: show everything: every place searched, all evidence, the whole detail, every fact (docs/output.md)")
	}
	if text&quietFlag != 0 {
		fs.BoolVarP(&o.Quiet, "quiet", "q", false, "text: show only ids and titles, one a line (the exit status is unchanged; docs/output.md)")
	}
	if text&widthFlag != 0 {
		fs.IntVar(&o.Width, "width", 0, "wrap text to `N` columns (default: the terminal's width, else $COLUMNS, else 100)")
	}
	if len(group) > 1 {
		cmd.MarkFlagsMutuallyExclusive(group...)
	}
	if text&(verboseFlag|quietFlag) == verboseFlag|quietFlag {
		cmd.MarkFlagsMutuallyExclusive("verbose", "quiet")
	}
	// Resolve --format into JSON/Markdown before the command runs, so a
	// run function reads o.JSON whichever spelling was used.
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if err := o.resolve(); err != nil {
			return err
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// resolve validates --format and sets Format, JSON and Markdown to agree.
func (o *Output) resolve() error {
	f, err := o.format()
	if err != nil {
		return err
	}
	o.Format, o.JSON, o.Markdown = f, f == "json", f == "markdown"
	return nil
}

// format is the format asked for: --json, --markdown, --format, or the
// command's default. A format the command does not print is a usage error.
func (o *Output) format() (string, error) {
	switch {
	case o.JSON:
		return "json", nil
	case o.Markdown:
		return "markdown", nil
	case o.Format == "":
		if len(o.formats) == 0 {
			return "text", nil
		}
		return o.formats[0], nil
	}
	if len(o.formats) > 0 && !slices.Contains(o.formats, o.Format) {
		return "", usageErrorf("--format %q: want %s", o.Format, orList(o.formats))
	}
	return o.Format, nil
}

// level is -q, the default or -v.
func (o *Output) level() render.Level {
	switch {
	case o.Quiet:
		return render.Quiet
	case o.Verbose:
		return render.Verbose
	}
	return render.Normal
}

// text is how text is rendered to ios.Out: colour only on a terminal
// without NO_COLOR, the width from --width, the terminal, $COLUMNS or 100,
// and the level.
func (o *Output) text(ios *IO) render.Options {
	r := render.Options{Color: ios.IsTTY && !ios.NoColor, Level: o.level(), Width: o.Width}
	if r.Width <= 0 {
		r.Width = ios.Width
	}
	if r.Width <= 0 {
		r.Width = render.Detect(nil, os.Getenv, 0, r.Level).Width
	}
	return r
}

// String is o as flags, for messages.
func (o *Output) String() string {
	f, _ := o.format()
	return fmt.Sprintf("--format %s", f)
}

// orList is "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
