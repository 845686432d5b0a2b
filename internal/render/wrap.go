package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// RuneWidth is the number of terminal columns r takes: 0 for combining
// marks and zero-width characters, 2 for East Asian wide and fullwidth
// characters (CJK, Hangul, fullwidth forms, most emoji), else 1.
func RuneWidth(r rune) int {
	switch {
	case r == 0x200b || r == 0x200c || r == 0x200d || r == 0xfeff:
		return 0
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
		return 0
	case isWide(r):
		return 2
	}
	return 1
}

// wide lists the East Asian Wide (W) and Fullwidth (F) blocks of Unicode's
// EastAsianWidth.txt, coarsely: whole blocks, which is what terminals do.
var wide = [][2]rune{
	{0x1100, 0x115f},   // Hangul Jamo initial consonants
	{0x231a, 0x231b},   // watch, hourglass
	{0x2329, 0x232a},   // angle brackets
	{0x23e9, 0x23ec},   // media controls
	{0x25fd, 0x25fe},   // small squares
	{0x2614, 0x2615},   // umbrella, hot beverage
	{0x26a1, 0x26a1},   // high voltage
	{0x2705, 0x2705},   // check mark button
	{0x274c, 0x274c},   // cross mark
	{0x2e80, 0x303e},   // CJK radicals, Kangxi, CJK symbols and punctuation
	{0x3041, 0x33ff},   // Hiragana, Katakana, Bopomofo, Hangul compatibility, CJK compatibility
	{0x3400, 0x4dbf},   // CJK extension A
	{0x4e00, 0x9fff},   // CJK unified ideographs
	{0xa000, 0xa4cf},   // Yi
	{0xa960, 0xa97f},   // Hangul Jamo extended A
	{0xac00, 0xd7a3},   // Hangul syllables
	{0xf900, 0xfaff},   // CJK compatibility ideographs
	{0xfe10, 0xfe19},   // vertical forms
	{0xfe30, 0xfe6f},   // CJK compatibility forms, small forms
	{0xff00, 0xff60},   // fullwidth forms
	{0xffe0, 0xffe6},   // fullwidth signs
	{0x1f300, 0x1f64f}, // pictographs, emoticons
	{0x1f680, 0x1f6ff}, // transport and map symbols
	{0x1f900, 0x1f9ff}, // supplemental symbols and pictographs
	{0x20000, 0x3fffd}, // CJK extensions B and on
}

func isWide(r rune) bool {
	if r < 0x1100 {
		return false
	}
	for _, rg := range wide {
		if r < rg[0] {
			return false
		}
		if r <= rg[1] {
			return true
		}
	}
	return false
}

// Width is the number of columns s takes on a terminal. ANSI SGR
// sequences (ESC [ ... m) take none.
func Width(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j + 1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += RuneWidth(r)
		i += size
	}
	return n
}

// Wrap breaks text into lines of at most width columns, the first line
// starting with first and every later line with rest (a hanging indent:
// rest is usually spaces as wide as first). It breaks only at spaces: a
// word wider than the line (a long path, a URL) is kept whole on a line
// of its own rather than cut, so it can still be copied. Spaces inside a
// line are kept as they are ("title  [id]"); the spaces where a line
// breaks are dropped. Newlines in text start a new line.
func Wrap(text string, width int, first, rest string) []string {
	var lines []string
	prefix := first
	for _, para := range strings.Split(text, "\n") {
		cur, curW := prefix, Width(prefix)
		gap, seen := 0, false // spaces before the next word; a word seen
		for _, w := range strings.Split(para, " ") {
			if w == "" {
				gap++ // a space more than the one that separates words
				continue
			}
			if seen {
				gap++
			}
			ww := Width(w)
			if seen && curW+gap+ww > width {
				lines = append(lines, cur)
				cur, curW, gap = rest, Width(rest), 0
			}
			cur += strings.Repeat(" ", gap) + w
			curW += gap + ww
			gap, seen = 0, true
		}
		lines = append(lines, strings.TrimRight(cur, " "))
		prefix = rest
	}
	return lines
}

// Hang is Wrap with a hanging indent: every line after the first starts
// with as many spaces as first is wide.
func Hang(text string, width int, first string) []string {
	return Wrap(text, width, first, strings.Repeat(" ", Width(first)))
}

// Command is one shell command line as it is printed: prefix ("$ ") and
// the command, on one line whatever the width. A command is never wrapped:
// a line break inside it would paste as two commands.
func Command(indent, cmd string) string { return indent + "$ " + cmd }

// FirstSentence splits text after its first sentence: a '.', '!' or '?'
// followed by a space and a letter or a quote, outside parentheses and not
// after an abbreviation ("e.g.", "i.e.", "vs."). rest is "" when text is
// one sentence. Versions ("2.11.0") and file names ("config.json") do not
// end a sentence: no space follows their dots.
func FirstSentence(text string) (first, rest string) {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case '.', '!', '?':
			if depth > 0 || i+2 >= len(text) || text[i+1] != ' ' {
				continue
			}
			r, _ := utf8.DecodeRuneInString(text[i+2:])
			if !unicode.IsLetter(r) && r != '"' && r != '\'' && r != '`' {
				continue
			}
			word := text[strings.LastIndexAny(text[:i], " (")+1 : i]
			switch strings.ToLower(word) {
			case "e.g", "i.e", "vs", "etc", "cf", "approx", "no":
				continue
			}
			return text[:i+1], strings.TrimSpace(text[i+2:])
		}
	}
	return text, ""
}
