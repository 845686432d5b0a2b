package explain

import (
	"bytes"

	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

// Logs reach explain the way people paste them: copied from a terminal
// (colour codes, carriage returns), from a journal or a CI runner (a time
// stamp and a unit name before every line), from torchrun or vLLM (a rank
// or a worker tag), from a chat or an issue (">" quotes, markdown bold,
// backticks). normalize strips what was put in front of and around the
// program's own words, so that one signature matches them all.

// maxPrefixes bounds how many prefixes are stripped from one line (a
// journald line that carries a vLLM line that carries a rank tag).
const maxPrefixes = 4

var (
	// ansiEscape: CSI sequences (colours, cursor moves) and OSC titles.
	ansiEscape = lazyregexp.New(`\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])`)
	// ansiRemnant: a colour code whose ESC was lost on the way (Jupyter's
	// tracebacks pasted from the browser: "[0;31mImportError[0m").
	ansiRemnant = lazyregexp.New(`\[[0-9]{1,3}(?:;[0-9]{1,3})*m`)

	// journald: "Oct 04 13:19:39 host unit[394]: ".
	journalPrefix = lazyregexp.New(`^(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-3][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)? \S+ [^\s:\[]+(?:\[[0-9]+\])?: ?`)
	// Clock times alone ("13:19:39.123 ").
	clockPrefix = lazyregexp.New(`^[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)? `)
	// Docker BuildKit: "#12 34.56 " (or the bare elapsed time of --progress=plain).
	buildkitPrefix = lazyregexp.New(`^(?:#[0-9]+ [0-9]+\.[0-9]+ |[0-9]+\.[0-9]+ {3,})`)
	// Bracketed: "[rank0]: ", "[default3]:", "[2024-09-27 23:42:23,326] ",
	// Jupyter server "[I 2024-01-01 12:00:00.000 ServerApp] ".
	bracketPrefix = lazyregexp.New(`^\[(?:(?:rank|default)[0-9]+\]:|[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][^\]]{0,40}\]|[IWECD] (?:[0-9]{4}-[0-9]{2}-[0-9]{2} )?[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)? [A-Za-z]+\]) ?`)
	// Ray and vLLM worker tags: "(VllmWorker rank=3 pid=1090) ".
	workerPrefix = lazyregexp.New(`^\([A-Za-z_][A-Za-z0-9_]*(?: [a-z_]+=[A-Za-z0-9_.-]+)+\) ?`)
)

// normalizer rewrites lines into a buffer it reuses: normalizing a line
// allocates nothing once the buffer has grown to the longest line.
type normalizer struct {
	buf []byte
	// rewrote: the last line returned is in buf, not the caller's bytes.
	rewrote bool
}

// line returns the line without its end of line, terminal escapes and the
// prefixes that loggers, terminals and chats put before the program's
// words. The result aliases the normalizer's buffer (or line itself) and
// is valid until the next call.
func (n *normalizer) line(line []byte) []byte {
	line = bytes.TrimRight(line, "\r\n")
	n.rewrote = false
	if bytes.IndexByte(line, 0x1b) >= 0 || bytes.IndexByte(line, '\r') >= 0 || hasRemnant(line) {
		n.buf = append(n.buf[:0], line...)
		if bytes.IndexByte(n.buf, 0x1b) >= 0 {
			n.buf = ansiEscape.ReplaceAll(n.buf, nil)
		}
		if hasRemnant(n.buf) {
			n.buf = ansiRemnant.ReplaceAll(n.buf, nil)
		}
		// A carriage return inside a line is a progress bar redrawn in
		// place: what the terminal last showed is after the last one.
		if i := bytes.LastIndexByte(n.buf, '\r'); i >= 0 {
			if rest := bytes.TrimSpace(n.buf[i+1:]); len(rest) > 0 {
				n.buf = n.buf[i+1:]
			} else {
				n.buf = bytes.ReplaceAll(n.buf, []byte("\r"), []byte(" "))
			}
		}
		line = n.buf
		n.rewrote = true
	}
	return stripPrefixes(line)
}

// stripPrefixes removes quote marks, time stamps and log tags from the
// start of a line, and markdown emphasis around it.
func stripPrefixes(line []byte) []byte {
	for range maxPrefixes {
		t := bytes.TrimLeft(line, " \t")
		if len(t) == 0 {
			return t
		}
		var loc []int
		switch c := t[0]; {
		case c == '>':
			// Quoted in a chat or an issue: "> text", ">> text", ">text".
			t = bytes.TrimLeft(t, ">")
			if len(t) > 0 && t[0] == ' ' {
				t = t[1:]
			}
			line = t
			continue
		case c == '*' && bytes.HasPrefix(t, []byte("**")):
			t = bytes.TrimPrefix(t, []byte("**"))
			t = bytes.TrimSuffix(bytes.TrimRight(t, " "), []byte("**"))
			line = t
			continue
		case c >= '0' && c <= '9':
			if k := isoLen(t); k > 0 {
				line = t[k:]
				continue
			}
			if loc = clockPrefix.FindIndex(t); loc == nil {
				loc = buildkitPrefix.FindIndex(t)
			}
		case c == '#':
			loc = buildkitPrefix.FindIndex(t)
		case c == '[':
			if k := rankLen(t); k > 0 {
				line = t[k:]
				continue
			}
			loc = bracketPrefix.FindIndex(t)
		case c == '(':
			loc = workerPrefix.FindIndex(t)
		case c >= 'A' && c <= 'Z' && len(t) > 4:
			if k := levelLen(t); k > 0 {
				line = t[k:]
				continue
			}
			if t[3] == ' ' && t[1] >= 'a' && t[1] <= 'z' {
				loc = journalPrefix.FindIndex(t)
			}
		}
		if loc == nil || loc[1] == 0 {
			return line
		}
		line = t[loc[1]:]
	}
	return line
}

// hasRemnant reports an ESC-less colour code ("[0;31m") without a
// regular expression: "[", one to three digits, more ";digits", "m".
func hasRemnant(line []byte) bool {
	for i := bytes.IndexByte(line, '['); i >= 0; {
		j := i + 1
		for {
			d := digits(line[j:])
			if d == 0 || d > 3 {
				break
			}
			j += d
			if j < len(line) && line[j] == 'm' {
				return true
			}
			if j >= len(line) || line[j] != ';' {
				break
			}
			j++
		}
		k := bytes.IndexByte(line[i+1:], '[')
		if k < 0 {
			return false
		}
		i += 1 + k
	}
	return false
}

// The commonest prefixes of long logs are read by hand: a regular
// expression's FindIndex allocates, and a 1 GB training log has millions
// of "[rank0]:" and "INFO 11-28 09:14:05 [engine.py:123]" lines.

// digits returns how many ASCII digits t starts with.
func digits(t []byte) int {
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	return n
}

// shape checks t against a pattern where '9' is a digit and any other
// byte itself.
func shape(t []byte, pat string) bool {
	if len(t) < len(pat) {
		return false
	}
	for i := 0; i < len(pat); i++ {
		if pat[i] == '9' {
			if t[i] < '0' || t[i] > '9' {
				return false
			}
		} else if t[i] != pat[i] {
			return false
		}
	}
	return true
}

// rankLen: "[rank12]:" or "[default3]:" and one space.
func rankLen(t []byte) int {
	var k int
	switch {
	case bytes.HasPrefix(t, []byte("[rank")):
		k = len("[rank")
	case bytes.HasPrefix(t, []byte("[default")):
		k = len("[default")
	default:
		return 0
	}
	d := digits(t[k:])
	if d == 0 || !bytes.HasPrefix(t[k+d:], []byte("]:")) {
		return 0
	}
	k += d + 2
	if k < len(t) && t[k] == ' ' {
		k++
	}
	return k
}

// isoLen: "2024-04-26T02:20:01.5211732Z ", "2024-09-27 23:42:23,326 | ".
func isoLen(t []byte) int {
	if !shape(t, "9999-99-99") || len(t) < 19 || (t[10] != 'T' && t[10] != ' ') || !shape(t[11:], "99:99:99") {
		return 0
	}
	k := 19
	if k < len(t) && (t[k] == '.' || t[k] == ',') {
		if d := digits(t[k+1:]); d > 0 {
			k += 1 + d
		}
	}
	switch {
	case k < len(t) && t[k] == 'Z':
		k++
	case k < len(t) && (t[k] == '+' || t[k] == '-') && (shape(t[k+1:], "99:99") || shape(t[k+1:], "9999")):
		if t[k+3] == ':' {
			k += 6
		} else {
			k += 5
		}
	}
	if bytes.HasPrefix(t[k:], []byte(" |")) {
		k += 2
	} else if bytes.HasPrefix(t[k:], []byte("|")) {
		k++
	}
	if k < len(t) && t[k] == ' ' {
		k++
	}
	return k
}

// isLocByte: a byte of a source file name in a log prefix.
func isLocByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '/' || c == '-'
}

// levelLen: "ERROR 01-11 13:09:40 engine.py:366] ",
// "INFO 06-05 06:18:13 [multiproc_executor.py:470] " (vLLM's logger).
func levelLen(t []byte) int {
	k := 0
	for _, lv := range []string{"INFO ", "WARNING ", "WARN ", "ERROR ", "DEBUG ", "CRITICAL "} {
		if bytes.HasPrefix(t, []byte(lv)) {
			k = len(lv)
			break
		}
	}
	if k == 0 || !shape(t[k:], "99-99 99:99:99") {
		return 0
	}
	k += len("99-99 99:99:99")
	if k+1 < len(t) && t[k] == '.' && digits(t[k+1:]) > 0 {
		k += 1 + digits(t[k+1:])
	}
	if k >= len(t) || t[k] != ' ' {
		return 0
	}
	k++
	if k < len(t) && t[k] == '[' {
		k++
	}
	// file.py:123]: a name of [A-Za-z0-9_./-], a colon, digits, "]".
	name := 0
	for k+name < len(t) && isLocByte(t[k+name]) {
		name++
	}
	if name == 0 || k+name >= len(t) || t[k+name] != ':' {
		return 0
	}
	k += name + 1
	d := digits(t[k:])
	if d == 0 || k+d >= len(t) || t[k+d] != ']' {
		return 0
	}
	k += d + 1
	if k < len(t) && t[k] == ' ' {
		k++
	}
	return k
}
