package pyenv

import (
	"slices"
	"strings"
	"testing"
)

// parseMetadataBuilt is parseMetadata as it was before values became
// slices of the text (every line and value copied into a builder): the
// reference the slicing parser must agree with.
func parseMetadataBuilt(text string) metadata {
	text = universalNewlines(text)
	var (
		out     metadata
		curName string
		curVal  strings.Builder
		have    bool
	)
	flush := func() {
		if have && len(out) < maxHeaders {
			out = append(out, header{curName, redent(strings.TrimRight(curVal.String(), "\r\n"))})
		}
		have = false
		curVal.Reset()
	}
	for lineno := 0; text != ""; lineno++ {
		line, rest, found := strings.Cut(text, "\n")
		full := line
		if found {
			full += "\n"
		}
		kind := headerLineKind(line)
		if kind == 0 {
			break
		}
		text = rest
		switch kind {
		case 'f':
			if !found && rest == "" && lineno > 0 {
				flush()
				return out
			}
			continue
		case 'c':
			if have {
				curVal.WriteString(full)
			}
			continue
		}
		i := strings.IndexByte(line, ':')
		if i == 0 {
			continue
		}
		flush()
		curName, have = line[:i], true
		curVal.WriteString(strings.TrimLeft(full[i+1:], " \t"))
	}
	flush()
	return out
}

// FuzzMetadataSlicesAgree: values sliced from the text (parseMetadata)
// equal values built line by line, whatever the text: continuation lines,
// "From " and ":value" lines splitting a value, \r newlines, no newline at
// the end.
func FuzzMetadataSlicesAgree(f *testing.F) {
	for _, s := range []string{
		"Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n\nName: body\n",
		"Name: folded\n  continued\nVersion: 1\n",
		"Name: a\nFrom x\n  cont\n\tmore\nVersion: 2",
		"Name: a\n:skipped\n  cont\n",
		"Name: a\r\n  b\r\nVersion:  \t 3\r",
		"From someone\nName: x\nFrom last",
		"Requires-Dist: a\nRequires-Dist: b ; extra == 'x'\n  \nTag: py3-none-any\n",
		"K:\n\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := parseMetadata(s), parseMetadataBuilt(s)
		if !slices.Equal(got, want) {
			t.Fatalf("parseMetadata(%q)\n got %q\nwant %q", s, got, want)
		}
	})
}
