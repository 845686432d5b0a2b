package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The k8s manifest's YAML is written here, not by sigs.k8s.io/yaml: that
// package brings go.yaml.in/yaml, whose package init runs on every start of
// every fastpath command (issue 17; docs/speed.md, "The last third-party
// inits and the cache's lock"), for one command that prints three small
// objects.
//
// The writer takes what encoding/json decodes into (maps, slices, strings,
// float64, bool, nil) and prints block YAML in the layout kubectl's own
// examples use: keys sorted, two spaces per level, a list's dashes at its
// key's indentation. A string is written plain only when no YAML reader can
// take it for anything else; a string of several lines as a literal block
// when its lines allow; every other string double-quoted with escapes.
// Ordinary manifests print byte for byte as sigs.k8s.io/yaml printed them
// (TestK8sManifestGolden); for any flag value the YAML decodes to the same
// JSON with sigs.k8s.io/yaml (TestK8sManifestMatchesAPITypes,
// FuzzManifestYAML), PyYAML and ruamel.yaml
// (TestManifestYAMLPythonReadersNetwork).

// manifestYAMLOf writes v (a value encoding/json decoded) as a YAML document.
func manifestYAMLOf(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeYAMLBlock(&b, v, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeYAMLBlock writes v at indent: a map or list as block lines, each
// ending in a newline; a scalar as one value line.
func writeYAMLBlock(b *bytes.Buffer, v any, indent int) error {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}\n")
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", indent))
			}
			key, err := yamlKey(k)
			if err != nil {
				return err
			}
			if err := writeYAMLEntry(b, key, x[k], indent); err != nil {
				return err
			}
		}
	case []any:
		if len(x) == 0 {
			b.WriteString("[]\n")
			return nil
		}
		for i, item := range x {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", indent))
			}
			// A map's first key goes on the dash's line, a list's first
			// dash too, and the rest below them, two spaces in.
			b.WriteString("- ")
			if err := writeYAMLBlock(b, item, indent+2); err != nil {
				return err
			}
		}
	default:
		return writeYAMLScalar(b, v, indent)
	}
	return nil
}

// writeYAMLEntry writes "key: value", the value on the same line when it
// is a scalar or empty, below it otherwise.
func writeYAMLEntry(b *bytes.Buffer, key string, v any, indent int) error {
	b.WriteString(key)
	b.WriteByte(':')
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent+2))
			return writeYAMLBlock(b, x, indent+2)
		}
	case []any:
		if len(x) > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", indent))
			return writeYAMLBlock(b, x, indent)
		}
	}
	b.WriteByte(' ')
	return writeYAMLBlock(b, v, indent+2)
}

// writeYAMLScalar writes one scalar and its newline. indent is where a
// literal block's lines start.
func writeYAMLScalar(b *bytes.Buffer, v any, indent int) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case float64:
		j, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(j)
	case string:
		switch {
		case yamlPlainSafe(x):
			b.WriteString(x)
		case yamlLiteralSafe(x):
			writeYAMLLiteral(b, x, indent)
			return nil
		default:
			b.WriteString(yamlDoubleQuoted(x))
		}
	default:
		return fmt.Errorf("manifest YAML: a %T is not a JSON value", v)
	}
	b.WriteByte('\n')
	return nil
}

// maxYAMLKey is the longest key written: YAML readers take a key on the
// line of its value only up to 1,024 characters (YAML 1.2, 7.4.2). The
// manifest's keys are the API's field names and label keys, all short.
const maxYAMLKey = 1000

func yamlKey(k string) (string, error) {
	if !yamlPlainSafe(k) {
		k = yamlDoubleQuoted(k)
	}
	if len(k) > maxYAMLKey {
		return "", fmt.Errorf("manifest YAML: a key of %d bytes", len(k))
	}
	return k, nil
}

// yamlSpecialWords are the plain scalars that YAML 1.1 or 1.2 readers
// resolve to a null or a boolean (compared in lower case).
var yamlSpecialWords = []string{"", "~", "null", "true", "false", "yes", "no", "y", "n", "on", "off"}

// yamlPlainSafe: s may be written unquoted, and every YAML reader, 1.1 or
// 1.2, reads it back as this string.
//   - It starts with a letter or '/', or with '-' and a letter (a flag such
//     as -c): never with an indicator, a quote, a space or a '.' (.inf).
//   - It holds only letters, digits, spaces and punctuation that means
//     nothing inside a plain scalar, does not end in a space or ':', and
//     holds no ": " (a key) and no " #" (a comment).
//   - It is not one of the words for null or a boolean.
//   - Or it starts with a digit, holds only ASCII letters and digits, and
//     one of its letters is none that a number or a date can hold (hex
//     digits, x, o, b, e, t): 256Mi and 10m are plain, 1e3 and 0x1F are not.
func yamlPlainSafe(s string) bool {
	if s == "" || slices.Contains(yamlSpecialWords, strings.ToLower(s)) {
		return false
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r >= '0' && r <= '9':
		return yamlUnitSafe(s)
	case r == '-':
		if next, _ := utf8.DecodeRuneInString(s[size:]); !unicode.IsLetter(next) {
			return false
		}
	case r != '/' && !unicode.IsLetter(r):
		return false
	}
	if strings.HasSuffix(s, " ") || strings.HasSuffix(s, ":") || strings.Contains(s, ": ") || strings.Contains(s, " #") {
		return false
	}
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
		case strings.ContainsRune(" -_./:=+@%", r):
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		default:
			return false
		}
	}
	return true
}

// yamlUnitSafe is yamlPlainSafe for a string that starts with a digit: a
// quantity with a unit (256Mi, 10m, 90s) is plain, anything a reader could
// take for a number or a date is not.
func yamlUnitSafe(s string) bool {
	unit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune("abcdefABCDEFxXoObBtT", rune(c)) {
				unit = true
			}
		default:
			return false
		}
	}
	return unit
}

// yamlLiteralSafe: s, a text of several lines, may be written as a literal
// block: every character printable or a tab, no carriage return or other
// line break than '\n', and a first line that starts with neither a space
// nor a tab nor a line break, since a block's first line sets its
// indentation.
func yamlLiteralSafe(s string) bool {
	if !strings.Contains(s, "\n") || strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t") || strings.HasPrefix(s, "\n") {
		return false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && !yamlPrintable(r) {
			return false
		}
	}
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			return false // trailing blanks would be invisible; quote them
		}
	}
	return true
}

// writeYAMLLiteral writes s as "|" with its chomping indicator, then its
// lines at indent.
func writeYAMLLiteral(b *bytes.Buffer, s string, indent int) {
	body := strings.TrimRight(s, "\n")
	switch trailing := len(s) - len(body); {
	case trailing == 0:
		b.WriteString("|-\n")
	case trailing == 1:
		b.WriteString("|\n")
	default:
		b.WriteString("|+\n")
	}
	pad := strings.Repeat(" ", indent)
	for _, line := range strings.Split(s[:len(s)-min(1, len(s)-len(body))], "\n") {
		if line != "" {
			b.WriteString(pad)
			b.WriteString(line)
		}
		b.WriteByte('\n')
	}
}

// yamlPrintable is YAML 1.2's c-printable without the line breaks, less
// the byte order mark and the C1 controls, which some readers refuse.
func yamlPrintable(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return false
	case r >= 0x20 && r <= 0x7e:
		return true
	case r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff:
		return false
	case r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd, r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}

// yamlDoubleQuoted is s as a YAML double-quoted scalar on one line: '"' and
// '\' escaped, and every character that is not printable as \xXX, \uXXXX
// or \UXXXXXXXX (YAML 1.2, 5.7).
func yamlDoubleQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case yamlPrintable(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02X`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
