package render

import (
	"fmt"
	"io"
	"strings"
)

// Printer writes text at one Options: it wraps paragraphs to the width,
// keeps commands on one line, and remembers the first write error so a
// renderer checks once, at the end.
type Printer struct {
	w   io.Writer
	O   Options
	P   Palette
	err error
}

// NewPrinter returns a Printer writing to w with o.
func NewPrinter(w io.Writer, o Options) *Printer {
	return &Printer{w: w, O: o, P: o.Palette()}
}

// Write makes a Printer an io.Writer (for text/tabwriter and the like).
func (p *Printer) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}

// Err is the first write error.
func (p *Printer) Err() error { return p.err }

// Printf writes as fmt.Fprintf does, unwrapped.
func (p *Printer) Printf(format string, a ...any) { fmt.Fprintf(p, format, a...) }

// Line writes s and a newline, unwrapped.
func (p *Printer) Line(s string) { io.WriteString(p, s+"\n") }

// Blank writes an empty line.
func (p *Printer) Blank() { io.WriteString(p, "\n") }

// Para writes text wrapped to the width, the first line starting with
// first and later lines indented as wide as first (a hanging indent).
func (p *Printer) Para(first, text string) {
	p.Lines(Hang(text, p.O.Cols(), first))
}

// Wrap writes text wrapped to the width with first and rest as the
// prefixes of the first and later lines.
func (p *Printer) Wrap(first, rest, text string) {
	p.Lines(Wrap(text, p.O.Cols(), first, rest))
}

// Lines writes each line and a newline.
func (p *Printer) Lines(lines []string) {
	if len(lines) == 0 {
		return
	}
	io.WriteString(p, strings.Join(lines, "\n")+"\n")
}

// Cmd writes one shell command on one line, whatever the width: "$ cmd"
// after indent. A command is never wrapped.
func (p *Printer) Cmd(indent, cmd string) { p.Line(Command(indent, cmd)) }
