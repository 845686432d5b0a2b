package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// jsonYAML writes a JSON value (what encoding/json decodes into an any:
// map[string]any, []any, string, float64 or json.Number, bool, nil) as
// YAML, byte for byte as sigs.k8s.io/yaml.Marshal does. That library goes
// through JSON and go.yaml.in/yaml/v2, whose package inits cost every
// fastpath start (issue 17), for the few manifests `k8s manifest` prints;
// this is the part of yaml.v2's encoder and emitter (libyaml's) that such a
// value reaches:
//   - keys sorted as yaml.v2 sorts them (numbers inside keys by value);
//   - a string is plain unless it would read back as something else (yaml
//     1.1's bools, nulls, numbers, timestamps, base-60 floats) or plain
//     cannot hold it (indicators, leading or trailing space...), then
//     single-quoted, or double-quoted with escapes; a string with a newline
//     is a literal block (|, |-, |+) where a block can hold it;
//   - numbers as yaml.v2 prints what it read from encoding/json's text;
//   - lines folded at 80 columns as libyaml folds them.
//
// k8syaml_test.go holds sigs.k8s.io/yaml as the oracle: the k8s goldens,
// and a fuzz test comparing bytes and decoding the output back. Where that
// library refuses a value (a string with a control character YAML cannot
// carry raw, such as U+007F), this writes it double-quoted and escaped.
func jsonYAML(v any) ([]byte, error) {
	e := yamlEmitter{indent: -1, whitespace: true, indention: true}
	if err := e.node(v, nodeContext{}); err != nil {
		return nil, err
	}
	e.writeIndent() // document end; yaml.v2 clears open_ended before the stream end, so never "..."
	return e.out, nil
}

const (
	yamlWidth  = 80 // libyaml's best_width
	yamlIndent = 2  // best_indent
)

// yamlEmitter is libyaml's emitter state, as far as block collections,
// empty flow collections and scalars use it.
type yamlEmitter struct {
	out        []byte
	column     int // in characters
	indent     int
	indents    []int
	whitespace bool // the last character written was white space
	indention  bool // only indentation written on this line so far
}

// nodeContext is where a node sits (libyaml's *_context flags that
// decide anything here).
type nodeContext struct {
	sequence, mapping, simpleKey bool
}

func (e *yamlEmitter) node(v any, ctx nodeContext) error {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			e.emptyFlow("{", "}")
			return nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			switch {
			case yamlKeyLess(a, b):
				return -1
			case yamlKeyLess(b, a):
				return 1
			}
			return 0
		})
		e.increaseIndent(false, false)
		for _, k := range keys {
			if err := e.mappingPair(k, v[k]); err != nil {
				return err
			}
		}
		e.popIndent()
	case []any:
		if len(v) == 0 {
			e.emptyFlow("[", "]")
			return nil
		}
		e.increaseIndent(false, ctx.mapping && !e.indention)
		for _, item := range v {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			if err := e.node(item, nodeContext{sequence: true}); err != nil {
				return err
			}
		}
		e.popIndent()
	default:
		s, style, err := yamlScalar(v, false)
		if err != nil {
			return err
		}
		e.scalar(s, style, ctx)
	}
	return nil
}

// mappingPair writes one key and its value: "key: value" when the key is
// a simple key (one line, at most 128 bytes), else "? key" and ": value".
func (e *yamlEmitter) mappingPair(k string, v any) error {
	e.writeIndent()
	key, style, err := yamlScalar(k, true)
	if err != nil {
		return err
	}
	if a := analyzeScalar(key); !a.multiline && len(key) <= 128 {
		e.scalar(key, style, nodeContext{mapping: true, simpleKey: true})
		e.writeIndicator(":", false, false, false)
	} else {
		e.writeIndicator("?", true, false, true)
		e.scalar(key, style, nodeContext{mapping: true})
		e.writeIndent()
		e.writeIndicator(":", true, false, true)
	}
	return e.node(v, nodeContext{mapping: true})
}

func (e *yamlEmitter) emptyFlow(open, close string) {
	e.writeIndicator(open, true, true, false)
	e.increaseIndent(true, false)
	e.popIndent()
	e.writeIndicator(close, false, false, false)
}

func (e *yamlEmitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = yamlIndent
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += yamlIndent
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

// put writes one ASCII byte.
func (e *yamlEmitter) put(c byte) {
	e.out = append(e.out, c)
	e.column++
}

func (e *yamlEmitter) putBreak() {
	e.out = append(e.out, '\n')
	e.column = 0
}

// write copies the character at s[i] and returns the index after it.
func (e *yamlEmitter) write(s string, i int) int {
	w := utf8Width(s[i])
	e.out = append(e.out, s[i:i+w]...)
	e.column++
	return i + w
}

// writeBreak copies the line break at s[i]: '\n' as a newline, the others
// (CR, NEL, LS, PS) as they are.
func (e *yamlEmitter) writeBreak(s string, i int) int {
	if s[i] == '\n' {
		e.putBreak()
		return i + 1
	}
	i = e.write(s, i)
	e.column = 0
	return i
}

func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || e.column == indent && !e.whitespace {
		e.putBreak()
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace, e.indention = true, true
}

func (e *yamlEmitter) writeIndicator(ind string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	for i := 0; i < len(ind); {
		i = e.write(ind, i)
	}
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

type scalarStyle int

const (
	plainStyle scalarStyle = iota
	singleQuotedStyle
	doubleQuotedStyle
	literalStyle
)

// yamlScalar is the text and requested style yaml.v2's encoder gives a
// scalar that came through JSON.
func yamlScalar(v any, key bool) (string, scalarStyle, error) {
	switch v := v.(type) {
	case nil:
		return "null", plainStyle, nil
	case bool:
		return strconv.FormatBool(v), plainStyle, nil
	case float64:
		j, err := json.Marshal(v)
		if err != nil {
			return "", 0, err
		}
		return yamlNumber(string(j)), plainStyle, nil
	case json.Number:
		j, err := json.Marshal(v)
		if err != nil {
			return "", 0, err
		}
		return yamlNumber(string(j)), plainStyle, nil
	case string:
		s, err := jsonString(v, key)
		if err != nil {
			return "", 0, err
		}
		switch {
		case strings.Contains(s, "\n"):
			return s, literalStyle, nil
		case resolvesToString(s) && !isBase60Float(s):
			return s, plainStyle, nil
		}
		return s, doubleQuotedStyle, nil
	}
	return "", 0, fmt.Errorf("yaml: cannot write a %T", v)
}

// jsonString is s as sigs.k8s.io/yaml reads it back from the JSON that
// encoding/json writes: each byte of invalid UTF-8 is U+FFFD; the
// characters JSON leaves raw and YAML's reader refuses are an error (as
// they are there); and U+0085 (NEL), which JSON leaves raw too, is a line
// break to YAML's reader, folded as a double-quoted scalar folds breaks
// (a key cannot hold one at all).
func jsonString(s string, key bool) (string, error) {
	if !utf8.ValidString(s) {
		var b strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += n
		}
		s = b.String()
	}
	nel := false
	for _, r := range s {
		switch {
		case r == 0x7F, r >= 0x80 && r <= 0x9F && r != 0x85, r == 0xFFFE, r == 0xFFFF:
			return "", fmt.Errorf("yaml: control characters are not allowed")
		case r == 0x85:
			nel = true
		}
	}
	switch {
	case !nel:
		return s, nil
	case key:
		return "", fmt.Errorf("yaml: a key with U+0085 (a line break to YAML) cannot be read back from JSON")
	}
	return foldNEL(s)
}

// foldNEL is libyaml's double-quoted scalar scan of s, where NEL is the
// only raw line break and ' ' the only raw blank: the blanks before a break
// go, the blanks after it are skipped, one break becomes a space and n > 1
// become n-1 newlines. "---" or "..." and a blank right after a break is a
// document marker there: an error.
func foldNEL(s string) (string, error) {
	const nel = "\u0085"
	var out strings.Builder
	i, afterBreak := 0, false
	for i < len(s) {
		if afterBreak && (strings.HasPrefix(s[i:], "---") || strings.HasPrefix(s[i:], "...")) &&
			i+3 < len(s) && (s[i+3] == ' ' || strings.HasPrefix(s[i+3:], nel)) {
			return "", fmt.Errorf("yaml: found unexpected document indicator")
		}
		for i < len(s) && s[i] != ' ' && !strings.HasPrefix(s[i:], nel) {
			out.WriteByte(s[i])
			i++
		}
		afterBreak = false
		var spaces, breaks int
		leading := false
		for i < len(s) && (s[i] == ' ' || strings.HasPrefix(s[i:], nel)) {
			if s[i] == ' ' {
				if !leading {
					spaces++
				}
				i++
				afterBreak = false
				continue
			}
			if !leading {
				spaces, leading = 0, true
			} else {
				breaks++
			}
			i += len(nel)
			afterBreak = true
		}
		switch {
		case leading && breaks == 0:
			out.WriteByte(' ')
		case leading:
			out.WriteString(strings.Repeat("\n", breaks))
		default:
			out.WriteString(strings.Repeat(" ", spaces))
		}
	}
	return out.String(), nil
}

// yamlNumber is how yaml.v2 prints the number it reads from JSON text j:
// an int64 or uint64 as written, anything else as a float64 ('g').
func yamlNumber(j string) string {
	if i, err := strconv.ParseInt(j, 0, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if u, err := strconv.ParseUint(j, 0, 64); err == nil {
		return strconv.FormatUint(u, 10)
	}
	f, err := strconv.ParseFloat(j, 64)
	if err != nil {
		return j
	}
	switch s := strconv.FormatFloat(f, 'g', -1, 64); s {
	case "+Inf":
		return ".inf"
	case "-Inf":
		return "-.inf"
	case "NaN":
		return ".nan"
	default:
		return s
	}
}

// resolvesToString reports whether plain s reads back as a string under
// yaml.v2's resolver (YAML 1.1: y, no, on, ~, 0x1F, 1_000, 2024-01-02...).
func resolvesToString(s string) bool {
	if s == "" {
		return false // null
	}
	var hint byte // yaml.v2's resolveTable: what the first byte may start
	switch c := s[0]; {
	case c == '+' || c == '-':
		hint = 'S'
	case '0' <= c && c <= '9':
		hint = 'D'
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		hint = 'M'
	case c == '.':
		hint = '.'
	default:
		return true
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
		"~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return false
	}
	switch hint {
	case '.':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case 'D', 'S':
		if isYAMLTimestamp(s) {
			return false
		}
		plain := strings.ReplaceAll(s, "_", "")
		if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return false
		}
		if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return false
		}
		if isYAMLFloat(plain) {
			if _, err := strconv.ParseFloat(plain, 64); err == nil {
				return false
			}
		}
		if rest, ok := strings.CutPrefix(plain, "0b"); ok {
			if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
				return false
			}
			if _, err := strconv.ParseUint(rest, 2, 64); err == nil {
				return false
			}
		} else if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
			if _, err := strconv.ParseInt("-"+rest, 2, 64); err == nil {
				return false
			}
		}
	}
	return true
}

// isYAMLTimestamp is yaml.v2's parseTimestamp succeeding: four digits, a
// '-', and one of its layouts.
func isYAMLTimestamp(s string) bool {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, layout := range []string{
		"2006-1-2T15:4:5.999999999Z07:00",
		"2006-1-2t15:4:5.999999999Z07:00",
		"2006-1-2 15:4:5.999999999",
		"2006-1-2",
	} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// isYAMLFloat matches ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func isYAMLFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		n := asciiDigits(s, i+1)
		if n == i+1 {
			return false
		}
		i = n
	} else {
		n := asciiDigits(s, i)
		if n == i {
			return false
		}
		i = n
		if i < len(s) && s[i] == '.' {
			i = asciiDigits(s, i+1)
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		n := asciiDigits(s, i)
		if n == i {
			return false
		}
		i = n
	}
	return i == len(s)
}

// isBase60Float matches ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
// (yaml.v2 quotes such strings: YAML 1.1 reads "1:20" as 80).
func isBase60Float(s string) bool {
	if s == "" {
		return false
	}
	if c := s[0]; !(c == '+' || c == '-' || '0' <= c && c <= '9') || strings.IndexByte(s, ':') < 0 {
		return false
	}
	i := 0
	if s[i] == '-' || s[i] == '+' {
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return false
	}
	for i++; i < len(s) && (s[i] == '_' || '0' <= s[i] && s[i] <= '9'); i++ {
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		n := asciiDigits(s, i+1)
		switch {
		case n-(i+1) == 1:
		case n-(i+1) == 2 && s[i+1] <= '5':
		default:
			return false
		}
		i = n
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && (s[i] == '_' || '0' <= s[i] && s[i] <= '9'); i++ {
		}
	}
	return i == len(s)
}

func asciiDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// scalarAnalysis is what libyaml's analyze_scalar finds in a value.
type scalarAnalysis struct {
	multiline, flowPlain, blockPlain, singleQuoted, block bool
}

func analyzeScalar(s string) scalarAnalysis {
	if s == "" {
		return scalarAnalysis{blockPlain: true, singleQuoted: true}
	}
	var blockInd, flowInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	var prevSpace, prevBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	precededByWS := true
	for i := 0; i < len(s); {
		w := utf8Width(s[i])
		followedByWS := i+w >= len(s) || s[i+w] == ' ' || s[i+w] == '\t'
		c := s[i]
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				flowInd, blockInd = true, true
			case '?', ':':
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			case '-':
				if followedByWS {
					flowInd, blockInd = true, true
				}
			}
		} else {
			switch c {
			case ',', '?', '[', ']', '{', '}':
				flowInd = true
			case ':':
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			case '#':
				if precededByWS {
					flowInd, blockInd = true, true
				}
			}
		}
		if !yamlPrintable(s, i) {
			special = true
		}
		switch {
		case c == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i+w == len(s) {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case yamlBreak(s, i):
			lineBreaks = true
			if i == 0 {
				leadingBreak = true
			}
			if i+w == len(s) {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = c == ' ' || c == '\t' || c == 0 || yamlBreak(s, i)
		i += w
	}
	a := scalarAnalysis{multiline: lineBreaks, flowPlain: true, blockPlain: true, singleQuoted: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.flowPlain, a.blockPlain = false, false
	}
	if trailingSpace {
		a.block = false
	}
	if breakSpace {
		a.flowPlain, a.blockPlain, a.singleQuoted = false, false, false
	}
	if spaceBreak || special {
		a.flowPlain, a.blockPlain, a.singleQuoted, a.block = false, false, false, false
	}
	if lineBreaks {
		a.flowPlain, a.blockPlain = false, false
	}
	if flowInd {
		a.flowPlain = false
	}
	if blockInd {
		a.blockPlain = false
	}
	return a
}

// scalar is libyaml's emit_scalar: the style that can hold s, then s.
func (e *yamlEmitter) scalar(s string, style scalarStyle, ctx nodeContext) {
	a := analyzeScalar(s)
	if ctx.simpleKey && a.multiline {
		style = doubleQuotedStyle
	}
	if style == plainStyle {
		if !a.blockPlain || s == "" && ctx.simpleKey {
			style = singleQuotedStyle
		}
	}
	if style == singleQuotedStyle && !a.singleQuoted {
		style = doubleQuotedStyle
	}
	if style == literalStyle && (!a.block || ctx.simpleKey) {
		style = doubleQuotedStyle
	}
	e.increaseIndent(true, false)
	breaks := !ctx.simpleKey
	switch style {
	case plainStyle:
		e.plain(s, breaks)
	case singleQuotedStyle:
		e.singleQuoted(s, breaks)
	case doubleQuotedStyle:
		e.doubleQuoted(s, breaks)
	case literalStyle:
		e.literal(s)
	}
	e.popIndent()
}

func (e *yamlEmitter) plain(s string, allowBreaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	spaces, breaks := false, false
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ':
			if allowBreaks && !spaces && e.column > yamlWidth && i+1 < len(s) && s[i+1] != ' ' {
				e.writeIndent()
				i++
			} else {
				i = e.write(s, i)
			}
			spaces = true
		case yamlBreak(s, i):
			if !breaks && s[i] == '\n' {
				e.putBreak()
			}
			i = e.writeBreak(s, i)
			e.indention, breaks = true, true
		default:
			if breaks {
				e.writeIndent()
			}
			i = e.write(s, i)
			e.indention, spaces, breaks = false, false, false
		}
	}
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) singleQuoted(s string, allowBreaks bool) {
	e.writeIndicator("'", true, false, false)
	spaces, breaks := false, false
	for i := 0; i < len(s); {
		switch {
		case s[i] == ' ':
			if allowBreaks && !spaces && e.column > yamlWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				e.writeIndent()
				i++
			} else {
				i = e.write(s, i)
			}
			spaces = true
		case yamlBreak(s, i):
			if !breaks && s[i] == '\n' {
				e.putBreak()
			}
			i = e.writeBreak(s, i)
			e.indention, breaks = true, true
		default:
			if breaks {
				e.writeIndent()
			}
			if s[i] == '\'' {
				e.put('\'')
			}
			i = e.write(s, i)
			e.indention, spaces, breaks = false, false, false
		}
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) doubleQuoted(s string, allowBreaks bool) {
	e.writeIndicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		// libyaml's is_bom looks at the value's start, not at i: a value
		// that starts with U+FEFF is escaped throughout
		case !yamlPrintable(s, i) || strings.HasPrefix(s, "\uFEFF") || yamlBreak(s, i) || c == '"' || c == '\\':
			r, w := utf8.DecodeRuneInString(s[i:])
			i += w
			e.put('\\')
			switch r {
			case 0:
				e.put('0')
			case 0x07:
				e.put('a')
			case 0x08:
				e.put('b')
			case 0x09:
				e.put('t')
			case 0x0A:
				e.put('n')
			case 0x0B:
				e.put('v')
			case 0x0C:
				e.put('f')
			case 0x0D:
				e.put('r')
			case 0x1B:
				e.put('e')
			case '"':
				e.put('"')
			case '\\':
				e.put('\\')
			case 0x85:
				e.put('N')
			case 0xA0:
				e.put('_')
			case 0x2028:
				e.put('L')
			case 0x2029:
				e.put('P')
			default:
				digits := 8
				switch {
				case r <= 0xFF:
					e.put('x')
					digits = 2
				case r <= 0xFFFF:
					e.put('u')
					digits = 4
				default:
					e.put('U')
				}
				for k := (digits - 1) * 4; k >= 0; k -= 4 {
					e.put("0123456789ABCDEF"[(r>>uint(k))&0x0F])
				}
			}
			spaces = false
		case c == ' ':
			if allowBreaks && !spaces && e.column > yamlWidth && i > 0 && i < len(s)-1 {
				e.writeIndent()
				if s[i+1] == ' ' {
					e.put('\\')
				}
				i++
			} else {
				i = e.write(s, i)
			}
			spaces = true
		default:
			i = e.write(s, i)
			spaces = false
		}
	}
	e.writeIndicator(`"`, false, false, false)
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) literal(s string) {
	e.writeIndicator("|", true, false, false)
	if s[0] == ' ' || yamlBreak(s, 0) {
		e.writeIndicator(string(rune('0'+yamlIndent)), false, false, false)
	}
	// chomping: '-' when s does not end in a break, '+' when it ends in
	// two (or is one), none (clip) for exactly one
	last := len(s) - 1
	for s[last]&0xC0 == 0x80 {
		last--
	}
	switch {
	case !yamlBreak(s, last):
		e.writeIndicator("-", false, false, false)
	case last == 0:
		e.writeIndicator("+", false, false, false)
	default:
		prev := last - 1
		for s[prev]&0xC0 == 0x80 {
			prev--
		}
		if yamlBreak(s, prev) {
			e.writeIndicator("+", false, false, false)
		}
	}
	e.putBreak()
	e.indention, e.whitespace = true, true
	breaks := true
	for i := 0; i < len(s); {
		if yamlBreak(s, i) {
			i = e.writeBreak(s, i)
			e.indention, breaks = true, true
			continue
		}
		if breaks {
			e.writeIndent()
		}
		i = e.write(s, i)
		e.indention, breaks = false, false
	}
}

// yamlPrintable is libyaml's is_printable at s[i] (on the bytes: tab, CR,
// DEL, C1 controls, U+FEFF, U+FFFE/F and everything beyond U+FFFF are not).
func yamlPrintable(s string, i int) bool {
	c := s[i]
	at := func(k int) byte {
		if i+k < len(s) {
			return s[i+k]
		}
		return 0
	}
	switch {
	case c == 0x0A, c >= 0x20 && c <= 0x7E:
		return true
	case c == 0xC2:
		return at(1) >= 0xA0
	case c > 0xC2 && c < 0xED:
		return true
	case c == 0xED:
		return at(1) < 0xA0
	case c == 0xEE:
		return true
	case c == 0xEF:
		return !(at(1) == 0xBB && at(2) == 0xBF) && !(at(1) == 0xBF && (at(2) == 0xBE || at(2) == 0xBF))
	}
	return false
}

// yamlBreak is libyaml's is_break: CR, LF, NEL, LS, PS.
func yamlBreak(s string, i int) bool {
	switch c := s[i]; {
	case c == '\r', c == '\n':
		return true
	case c == 0xC2:
		return strings.HasPrefix(s[i:], "\u0085")
	case c == 0xE2:
		return strings.HasPrefix(s[i:], "\u2028") || strings.HasPrefix(s[i:], "\u2029")
	}
	return false
}

// utf8Width is the length of the UTF-8 sequence that starts with c.
func utf8Width(c byte) int {
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xE0 == 0xC0:
		return 2
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF8 == 0xF0:
		return 4
	}
	return 1
}

// yamlKeyLess is yaml.v2's order of string keys: character by character,
// a letter before anything else, letters by code point, and runs of
// digits by their value.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
