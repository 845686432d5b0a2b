package render

import "github.com/fastpath-dev/fastpath/internal/finding"

// Palette is the one set of colours: every code is empty when colour is
// off, so renderers write p.Bold+s+p.Reset unconditionally.
//
// Every code must be one internal/safetext lets through to a terminal
// (safetext.ColourCodes); TestPaletteCodesPassSafetext keeps them in step.
type Palette struct{ Red, Yellow, Blue, Bold, Dim, Reset string }

// NewPalette returns the ANSI palette, or the empty one when on is false.
func NewPalette(on bool) Palette {
	if !on {
		return Palette{}
	}
	return Palette{Red: "\x1b[31m", Yellow: "\x1b[33m", Blue: "\x1b[34m", Bold: "\x1b[1m", Dim: "\x1b[2m", Reset: "\x1b[0m"}
}

// B is s in bold; D is s dimmed.
func (p Palette) B(s string) string { return wrapCode(p.Bold, s, p.Reset) }
func (p Palette) D(s string) string { return wrapCode(p.Dim, s, p.Reset) }

func wrapCode(code, s, reset string) string {
	if code == "" || s == "" {
		return s
	}
	return code + s + reset
}

// SeverityLabel is the fixed-width label a finding's line starts with:
// "ERROR  ", "WARN   ", "INFO   ", coloured.
func (p Palette) SeverityLabel(s finding.Severity) string {
	switch s {
	case finding.Error:
		return p.Red + p.Bold + "ERROR  " + p.Reset
	case finding.Warning:
		return p.Yellow + p.Bold + "WARN   " + p.Reset
	}
	return p.Blue + "INFO   " + p.Reset
}
