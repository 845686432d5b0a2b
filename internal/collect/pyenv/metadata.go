package pyenv

import (
	"strings"
)

// Core metadata (METADATA, PKG-INFO, WHEEL) is an RFC 822 header block.
// Python reads it with email.message_from_string (compat32 policy) behind
// importlib.metadata, and pip prints what that yields; this parser follows
// the same rules so names and versions come out byte for byte the same:
//   - the text is read with universal newlines (\r\n and \r become \n);
//   - a header line is "From " (first line only), NAME: with NAME made of
//     printable ASCII but ':' and space, or a continuation starting with
//     space or tab; any other line (a blank one included) ends the headers;
//   - a value is the text after ':' with leading blanks removed, plus its
//     continuation lines verbatim, with the final newline removed;
//   - a multi-line value is dedented as importlib.metadata's adapter does.

// maxHeaders bounds how many headers one file may give (a METADATA has tens).
const maxHeaders = 10000

type header struct{ name, value string }

// metadata is a parsed header block. Lookups are case-insensitive and the
// first occurrence wins, as email.message.Message.get does.
type metadata []header

// Get returns the first value of name.
func (m metadata) Get(name string) (string, bool) {
	for _, h := range m {
		if strings.EqualFold(h.name, name) {
			return h.value, true
		}
	}
	return "", false
}

// All returns every value of name, in order.
func (m metadata) All(name string) []string {
	var out []string
	for _, h := range m {
		if strings.EqualFold(h.name, name) {
			out = append(out, h.value)
		}
	}
	return out
}

// universalNewlines turns \r\n and lone \r into \n, as Python's text mode does.
func universalNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// isHeaderName reports whether c may appear in a header name ([\041-\071\073-\176]).
func isHeaderName(c byte) bool { return c >= 0x21 && c <= 0x7e && c != ':' }

// headerLineKind classifies line by the feed parser's header regex:
// 'f' a "From " line, 'c' a continuation, 'h' a NAME: header, 0 otherwise.
func headerLineKind(line string) byte {
	if strings.HasPrefix(line, "From ") {
		return 'f'
	}
	if line != "" && (line[0] == ' ' || line[0] == '\t') {
		return 'c'
	}
	for i := 0; i < len(line); i++ {
		if line[i] == ':' {
			return 'h'
		}
		if !isHeaderName(line[i]) {
			return 0
		}
	}
	return 0
}

// parseMetadata parses the header block at the start of text. Values are
// slices of text where they are one run of it (a header and its
// continuation lines, as nearly all are): callers keeping one clone it, so
// that it does not keep the whole block alive.
func parseMetadata(text string) metadata {
	text = universalNewlines(text)
	// At most a header a line, up to the blank line: one allocation.
	lines := text
	if i := strings.Index(text, "\n\n"); i >= 0 {
		lines = text[:i]
	}
	var (
		out     = make(metadata, 0, min(strings.Count(lines, "\n")+1, maxHeaders))
		curName string
		have    bool
		// The current value is text[valStart:valEnd] until a skipped
		// line splits it; from then on it is built in spill.
		valStart, valEnd int
		spill            strings.Builder
		spilled          bool
	)
	flush := func() {
		if have && len(out) < maxHeaders {
			v := text[valStart:valEnd]
			if spilled {
				v = spill.String()
			}
			out = append(out, header{curName, redent(strings.TrimRight(v, "\r\n"))})
		}
		have, spilled = false, false
		spill.Reset()
	}
	pos := 0 // where the next line starts
	for lineno := 0; pos < len(text); lineno++ {
		line, _, found := strings.Cut(text[pos:], "\n")
		start, end := pos, pos+len(line) // the line, with its newline: text[start:end]
		if found {
			end++
		}
		kind := headerLineKind(line)
		if kind == 0 {
			break // blank line or body text: headers are over
		}
		pos = end
		switch kind {
		case 'f':
			if !found && lineno > 0 {
				// The feed parser puts back a "From " last line as body.
				flush()
				return out
			}
			continue // the Unix "From " line (or a defect): no header
		case 'c':
			switch {
			case !have:
			case spilled:
				spill.WriteString(text[start:end])
			case valEnd == start:
				valEnd = end
			default: // a skipped line came between: the value is in pieces
				spilled = true
				spill.WriteString(text[valStart:valEnd])
				spill.WriteString(text[start:end])
			}
			continue
		}
		i := strings.IndexByte(line, ':')
		if i == 0 {
			continue // ":value" is a defect the parser skips
		}
		flush()
		curName, have = line[:i], true
		valStart, valEnd = end-len(strings.TrimLeft(text[start+i+1:end], " \t")), end
	}
	flush()
	return out
}

// redent mirrors importlib.metadata's _adapters.Message: a value spanning
// lines is given an 8-space first-line indent and then textwrap.dedent-ed.
func redent(v string) string {
	if !strings.Contains(v, "\n") {
		return v
	}
	lines := strings.Split("        "+v, "\n")
	margin, first := "", true
	for i, l := range lines {
		ws := len(l) - len(strings.TrimLeft(l, " \t"))
		if ws == len(l) {
			lines[i] = "" // whitespace-only lines are emptied
			continue
		}
		indent := l[:ws]
		switch {
		case first:
			margin, first = indent, false
		case strings.HasPrefix(indent, margin):
		case strings.HasPrefix(margin, indent):
			margin = indent
		default:
			n := 0
			for n < len(margin) && n < len(indent) && margin[n] == indent[n] {
				n++
			}
			margin = margin[:n]
		}
	}
	if margin != "" {
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, margin)
		}
	}
	return strings.Join(lines, "\n")
}

// pyvenvCfg parses pyvenv.cfg as site.py does: every line holding '=' is
// key = value, keys lower-cased, both sides stripped; later lines win.
func parsePyvenvCfg(text string) map[string]string {
	cfg := map[string]string{}
	for _, line := range strings.Split(universalNewlines(text), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if len(cfg) >= maxHeaders {
			break
		}
		cfg[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return cfg
}
