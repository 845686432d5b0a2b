package render

import (
	"os"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/safetext"
)

func TestCountAndPlural(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(0, "error", "errors"), "0 errors"},
		{Count(1, "error", "errors"), "1 error"},
		{Count(2, "error", "errors"), "2 errors"},
		{CountVerb(1, "machine", "machines", "agrees", "agree"), "1 machine agrees"},
		{CountVerb(3, "machine", "machines", "agrees", "agree"), "3 machines agree"},
		{SeverityCounts(1, 1, 0), "1 error, 1 warning"},
		{SeverityCounts(0, 2, 1), "0 errors, 2 warnings, 1 note"},
		{Severities(nil), "no problems found"},
		{Severities([]finding.Finding{{Severity: finding.Error}, {Severity: finding.Warning}, {Severity: finding.Warning}}), "1 error, 2 warnings"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestWrapHangingIndent(t *testing.T) {
	got := Hang("one two three four five six seven eight nine ten", 20, "  - ")
	want := []string{
		"  - one two three",
		"    four five six",
		"    seven eight nine",
		"    ten",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range got {
		if Width(l) > 20 {
			t.Errorf("line %q is %d columns, more than 20", l, Width(l))
		}
	}
}

// A word wider than the line (a path, a URL) is never cut: it stands on a
// line of its own, whole.
func TestWrapKeepsLongWordsWhole(t *testing.T) {
	path := "/root/.cache/huggingface/hub/models--Qwen--Qwen3.5-27B/snapshots/8f1c2a7d/config.json"
	got := Hang("config: "+path+" (layer_types)", 40, "    - ")
	if len(got) != 3 || strings.TrimSpace(got[1]) != path {
		t.Fatalf("got %q", got)
	}
}

// Wide characters take two columns: a line of CJK text wraps at half as
// many characters, and combining marks take none.
func TestWrapWideUnicode(t *testing.T) {
	if w := Width("漢字"); w != 4 {
		t.Errorf("Width(漢字) = %d, want 4", w)
	}
	if w := Width("é"); w != 1 { // e + combining acute
		t.Errorf("Width(e+U+0301) = %d, want 1", w)
	}
	if w := Width("\x1b[1mbold\x1b[0m"); w != 4 {
		t.Errorf("Width of SGR-wrapped text = %d, want 4", w)
	}
	got := Wrap("漢字漢字 漢字漢字 漢字漢字", 18, "", "")
	want := []string{"漢字漢字 漢字漢字", "漢字漢字"} // 8+1+8 = 17 columns, then 8
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, l := range got {
		if Width(l) > 18 {
			t.Errorf("%q is %d columns wide", l, Width(l))
		}
	}
}

// A command is one line whatever the width: a break inside it would paste
// as two commands.
func TestFindingNeverBreaksCommands(t *testing.T) {
	cmd := "apt-get install -y --no-install-recommends cuda-nvcc-12-8 cuda-cudart-dev-12-8 libcublas-dev-12-8 libcusparse-dev-12-8"
	fd := finding.Finding{ID: "x", Severity: finding.Error, Title: "t", Detail: "d.",
		Fixes: []finding.Fix{{Title: "install the compiler", Commands: []string{cmd}}}}
	var b strings.Builder
	p := NewPrinter(&b, Options{Width: 40})
	p.Finding(fd, nil)
	if !strings.Contains(b.String(), "\n      $ "+cmd+"\n") {
		t.Errorf("command broken or missing:\n%s", b.String())
	}
}

func TestFirstSentence(t *testing.T) {
	for _, c := range []struct{ in, first, rest string }{
		{"One. Two.", "One.", "Two."},
		{"Only one.", "Only one.", ""},
		{"torch 2.11.0 is here. config.json too.", "torch 2.11.0 is here.", "config.json too."},
		{"Use a tool (e.g. ninja. Or make) first. Then build.", "Use a tool (e.g. ninja. Or make) first.", "Then build."},
		{"Prefer e.g. ninja here. Next.", "Prefer e.g. ninja here.", "Next."},
		{"It fails to install. causal-conv1d's setup.py stops.", "It fails to install.", "causal-conv1d's setup.py stops."},
	} {
		f, r := FirstSentence(c.in)
		if f != c.first || r != c.rest {
			t.Errorf("FirstSentence(%q) = %q, %q; want %q, %q", c.in, f, r, c.first, c.rest)
		}
	}
}

func TestSplitEvidence(t *testing.T) {
	fd := finding.Finding{Evidence: []string{"a", "searched: x", "searched: y", "b", "c"}}
	v := SplitEvidence(fd)
	if strings.Join(v.Shown, ",") != "a,b" || v.Searched != 2 || v.Hidden != 1 {
		t.Errorf("default: %+v", v)
	}
	fd.Decisive = []int{4}
	v = SplitEvidence(fd)
	if strings.Join(v.Shown, ",") != "c" || v.Searched != 2 || v.Hidden != 2 {
		t.Errorf("decisive: %+v", v)
	}
}

func TestLevels(t *testing.T) {
	fd := finding.Finding{ID: "no-cuda-compiler", Severity: finding.Error, Title: "No CUDA compiler",
		Detail:   "None found. More words here.",
		Evidence: []string{"decisive line", "searched: PATH: /usr/bin/nvcc (absent)", "searched: CUDA_HOME: not set", "context line"},
		Decisive: []int{0},
		Fixes:    []finding.Fix{{Title: "install it", Commands: []string{"apt-get install -y cuda-nvcc-12-8"}}}}
	render := func(l Level) string {
		var b strings.Builder
		NewPrinter(&b, Options{Level: l, Width: 100}).Finding(fd, nil)
		return b.String()
	}
	if got, want := render(Quiet), "ERROR  no-cuda-compiler  No CUDA compiler\n"; got != want {
		t.Errorf("quiet: %q, want %q", got, want)
	}
	normal := `ERROR  No CUDA compiler  [no-cuda-compiler]
  None found.
  - decisive line
  searched 2 places, 1 more evidence line (-v lists them, and the full detail)
  Fix 1: install it
      $ apt-get install -y cuda-nvcc-12-8
`
	if got := render(Normal); got != normal {
		t.Errorf("normal:\n%s\nwant\n%s", got, normal)
	}
	verbose := `ERROR  No CUDA compiler  [no-cuda-compiler]
  None found. More words here.
  Evidence:
    - decisive line
    - searched: PATH: /usr/bin/nvcc (absent)
    - searched: CUDA_HOME: not set
    - context line
  Fix 1: install it
      $ apt-get install -y cuda-nvcc-12-8
`
	if got := render(Verbose); got != verbose {
		t.Errorf("verbose:\n%s\nwant\n%s", got, verbose)
	}
}

func TestPaletteAndNoColor(t *testing.T) {
	if p := NewPalette(false); p.SeverityLabel(finding.Error) != "ERROR  " || p.B("x") != "x" {
		t.Errorf("colour off still colours: %q", p.SeverityLabel(finding.Error))
	}
	if p := NewPalette(true); !strings.Contains(p.SeverityLabel(finding.Error), "\x1b[31m") {
		t.Errorf("colour on: %q", p.SeverityLabel(finding.Error))
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if !NoColor(env(map[string]string{"NO_COLOR": "1"})) || NoColor(env(map[string]string{"NO_COLOR": ""})) {
		t.Error("NO_COLOR: set and non-empty turns colour off, empty does not")
	}
	// Not a terminal (a file): no colour, the default width or $COLUMNS,
	// and --width wins.
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if o := Detect(f, env(nil), 0, Normal); o.Color || o.Width != DefaultWidth {
		t.Errorf("file: %+v", o)
	}
	if o := Detect(f, env(map[string]string{"COLUMNS": "132"}), 0, Normal); o.Width != 132 {
		t.Errorf("COLUMNS=132: %+v", o)
	}
	if o := Detect(f, env(map[string]string{"COLUMNS": "132"}), 60, Verbose); o.Width != 60 || !o.Verbose() {
		t.Errorf("--width 60: %+v", o)
	}
	if Terminal(f) || TerminalWidth(f) != 0 {
		t.Error("a regular file is not a terminal")
	}
	if dn, err := os.Open(os.DevNull); err == nil {
		defer dn.Close()
		if Terminal(dn) {
			t.Error("/dev/null is a character device, not a terminal (F11)")
		}
	}
}

// Spaces inside a line stay ("title  [id]", a nested "  line"); the space
// where a line breaks goes.
func TestWrapKeepsInnerSpaces(t *testing.T) {
	got := Wrap("  nested  [file.py:4] and more words here", 24, "- ", "  ")
	want := []string{"-   nested  [file.py:4]", "  and more words here"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The palette's codes are exactly those safetext's Writer lets through on
// a terminal: a code it did not know would reach the user as a visible
// \u001b escape, and a rule loosened for colour would let untrusted escapes
// through.
func TestPaletteCodesPassSafetext(t *testing.T) {
	p := NewPalette(true)
	for _, code := range []string{p.Red, p.Yellow, p.Blue, p.Bold, p.Dim, p.Reset} {
		if safetext.ColourCodes.FindString(code) != code {
			t.Errorf("palette code %q is not one of safetext.ColourCodes", code)
		}
	}
	// Untrusted text in a finding is still escaped by the Writer under the
	// renderer, colour or not.
	var b strings.Builder
	w := safetext.NewWriter(&b, true)
	pr := NewPrinter(w, Options{Color: true, Width: 100})
	pr.Finding(finding.Finding{ID: "x", Severity: finding.Error, Title: "evil \x1b]52;c;aGk=\x07 title"}, nil)
	w.Flush()
	if strings.Contains(b.String(), "\x1b]52") || !strings.Contains(b.String(), `\u001b]52`) {
		t.Errorf("OSC 52 from a title reached the terminal raw: %q", b.String())
	}
	if !strings.Contains(b.String(), "\x1b[31m") {
		t.Errorf("the palette's own colour was escaped: %q", b.String())
	}
}
