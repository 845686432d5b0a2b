// Package render is the one rendering layer of fastpath's commands: the
// palette (colour only on a terminal, NO_COLOR honoured), the width text
// wraps to, the verbosity level (-q, default, -v), wrapping with hanging
// indents that never break a command a user will copy, and the count and
// plural helpers ("1 error, 2 warnings", "1 machine agrees").
//
// It sits just above the leaves (finding, safetext) so that every package
// that renders (report, explain, plan, live, fleet, cli) may import it.
// Untrusted text is still escaped below it: cli.Main writes every byte
// through safetext's Writer, and render only adds SGR colour codes, which
// that Writer lets through on a terminal alone.
package render

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
)

// Level is how much a text report shows.
type Level int

const (
	// Quiet (-q) shows only each finding's id and title (the exit status
	// still counts every finding).
	Quiet Level = -1
	// Normal, the default, shows each finding's first sentence, its
	// decisive evidence, a count of the places searched, and the fixes.
	Normal Level = 0
	// Verbose (-v) shows everything: every place searched, all evidence,
	// the whole detail and the full facts table.
	Verbose Level = 1
)

// DefaultWidth is the width text wraps to when stdout is not a terminal
// (a pipe, a file, a CI log) and no --width was given.
const DefaultWidth = 100

// MinWidth keeps a tiny terminal (or --width 1) from wrapping every word
// onto its own line.
const MinWidth = 40

// Options is how a command renders text: one value per run, built from
// the output flags and the terminal.
type Options struct {
	Color bool  // ANSI colour: stdout is a terminal and NO_COLOR is unset
	Width int   // columns to wrap to; <= 0 means DefaultWidth
	Level Level // -q, default, -v
}

// Cols is the width to wrap to, never less than MinWidth.
func (o Options) Cols() int {
	w := o.Width
	if w <= 0 {
		w = DefaultWidth
	}
	return max(w, MinWidth)
}

// Palette returns o's palette.
func (o Options) Palette() Palette { return NewPalette(o.Color) }

// Verbose reports whether -v was given; Quiet whether -q was.
func (o Options) Verbose() bool { return o.Level >= Verbose }
func (o Options) Quiet() bool   { return o.Level <= Quiet }

// Terminal reports whether w (a writer or a reader) is a terminal: golang.org/x/term's IsTerminal
// (a tcgetattr ioctl, no cgo). A character-device test is not enough:
// /dev/null and /dev/zero are character devices (F11). A writer that wraps
// another (cli.Main's sanitising writer) is unwrapped first.
func Terminal(w any) bool {
	_, ok := terminalFd(w)
	return ok
}

// terminalFd unwraps w (a writer that wraps another, such as cli.Main's
// sanitising writer, first) and returns its descriptor when it is a
// terminal.
func terminalFd(w any) (int, bool) {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	return int(f.Fd()), true
}

// NoColor honours https://no-color.org: a NO_COLOR that is set and not
// empty turns colour off.
func NoColor(getenv func(string) string) bool { return getenv("NO_COLOR") != "" }

// TerminalWidth is w's width in columns when w is a terminal, else 0.
func TerminalWidth(w any) int {
	fd, ok := terminalFd(w)
	if !ok {
		return 0
	}
	cols, _, err := term.GetSize(fd)
	if err != nil || cols <= 0 {
		return 0
	}
	return cols
}

// Detect builds the Options for writing to out: colour when out is a
// terminal and NO_COLOR is unset; the width of the terminal, else COLUMNS
// when it is a number, else DefaultWidth. A width given on the command
// line (flagWidth > 0) wins.
func Detect(out any, getenv func(string) string, flagWidth int, level Level) Options {
	o := Options{Level: level, Color: Terminal(out) && !NoColor(getenv)}
	switch {
	case flagWidth > 0:
		o.Width = flagWidth
	case TerminalWidth(out) > 0:
		o.Width = TerminalWidth(out)
	default:
		if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
			o.Width = n
		} else {
			o.Width = DefaultWidth
		}
	}
	return o
}
