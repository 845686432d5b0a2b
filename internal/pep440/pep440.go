// Package pep440 parses, normalises and orders Python version numbers
// (PEP 440) exactly as Python's `packaging` does: Version is
// packaging.version.Version (its parse, str() and ordering). Version
// constraints are not matched here: fastpath's knowledge base states its
// bounds as versions (Less), and nothing matches a version against a
// specifier (Requires-Dist lines are quoted, not evaluated).
//
// It is written by hand, with no regular expression and no table built at
// package init: the library it replaces (aquasecurity/go-pep440-version)
// compiled its regular expressions at init, 0.4 ms of every fastpath start
// (issue 17), and fastpath reads only a few versions per run.
//
// The oracle is packaging itself: testdata/corpus.json holds over a thousand
// real and odd versions with packaging's answers (the
// packaging version is named in the file; testdata/gen.py wrote it), and
// TestCorpusNetwork regenerates them with the real packaging and compares.
//
// packaging's quirks are kept, not fixed: its regular expressions match
// case-insensitively with Python's Unicode rules, so U+0130 and U+0131 (the
// Turkish i's) stand for "i" in "preview", U+017F (long s) for "s" in
// "post", and those two and U+212A (Kelvin sign) for letters in a local
// label; packaging lower-cases them with str.lower and keeps them in the
// version's sort key. Only for such spellings is Normalize not a fixed point
// of the order (Parse(Normalize(s)) can differ from Parse(s)), in packaging
// as here.
package pep440

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fastpath-dev/fastpath/internal/version"
)

// Version is a parsed PEP 440 version. Numbers are kept as decimal strings
// without leading zeros (Python's int has no size limit, and neither do
// these).
type Version struct {
	epoch   string   // "0" when absent
	release []string // at least one number
	preL    string   // "a", "b", "rc" (or a Unicode spelling); "" when no pre-release
	preN    string
	postL   string // "post" (or a Unicode spelling); "" when no post-release
	postN   string
	hasDev  bool
	devN    string
	local   []string // nil when no local label; numbers without leading zeros, words lower-cased
}

// Parse parses s ("2.11.0+cu128", "1.0-post1", " v1!2.0RC1 ").
func Parse(s string) (Version, error) {
	v, ok := parse(s)
	if !ok {
		return Version{}, fmt.Errorf("invalid version: %q", s)
	}
	return v, nil
}

// String is the normalised form, as str(packaging.version.Version) prints it.
func (v Version) String() string {
	var b strings.Builder
	if v.epoch != "0" && v.epoch != "" {
		b.WriteString(v.epoch)
		b.WriteByte('!')
	}
	for i, r := range v.release {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(r)
	}
	b.WriteString(v.suffix())
	if v.local != nil {
		b.WriteByte('+')
		b.WriteString(strings.Join(v.local, "."))
	}
	return b.String()
}

// suffix is the pre, post and dev part of String.
func (v Version) suffix() string {
	var b strings.Builder
	if v.preL != "" {
		b.WriteString(v.preL)
		b.WriteString(v.preN)
	}
	if v.postL != "" {
		b.WriteString(".post")
		b.WriteString(v.postN)
	}
	if v.hasDev {
		b.WriteString(".dev")
		b.WriteString(v.devN)
	}
	return b.String()
}

// Compare returns -1, 0 or +1, in packaging's order: epoch, release
// (trailing zeros ignored), then 1.0.dev0 < 1.0a0 < 1.0 < 1.0.post0, and a
// local label sorts after the same version without one.
func (v Version) Compare(o Version) int {
	if c := cmpNum(v.epoch, o.epoch); c != 0 {
		return c
	}
	a, b := trimZeros(v.release), trimZeros(o.release)
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := cmpNum(a[i], b[i]); c != 0 {
			return c
		}
	}
	if c := cmpInt(len(a), len(b)); c != 0 {
		return c
	}
	if c := cmpKeyPart(v.preKey(), o.preKey()); c != 0 {
		return c
	}
	if c := cmpKeyPart(v.postKey(), o.postKey()); c != 0 {
		return c
	}
	if c := cmpKeyPart(v.devKey(), o.devKey()); c != 0 {
		return c
	}
	return cmpLocal(v.local, o.local)
}

// keyPart is one of packaging's _cmpkey members: -inf, +inf, or a
// (letter, number) pair.
type keyPart struct {
	inf    int // -1, +1, or 0 for the pair
	letter string
	num    string
}

func (v Version) preKey() keyPart {
	switch {
	case v.preL == "" && v.postL == "" && v.hasDev:
		return keyPart{inf: -1} // 1.0.dev0 sorts before 1.0a0
	case v.preL == "":
		return keyPart{inf: 1}
	}
	return keyPart{letter: v.preL, num: v.preN}
}

func (v Version) postKey() keyPart {
	if v.postL == "" {
		return keyPart{inf: -1}
	}
	return keyPart{letter: v.postL, num: v.postN}
}

func (v Version) devKey() keyPart {
	if !v.hasDev {
		return keyPart{inf: 1}
	}
	return keyPart{letter: "dev", num: v.devN}
}

func cmpKeyPart(a, b keyPart) int {
	if a.inf != 0 || b.inf != 0 {
		return cmpInt(a.inf, b.inf)
	}
	if c := strings.Compare(a.letter, b.letter); c != 0 {
		return c
	}
	return cmpNum(a.num, b.num)
}

// cmpLocal orders local labels: none < any; part by part, a word < a
// number, words by code point, numbers by value; a prefix sorts first.
func cmpLocal(a, b []string) int {
	if a == nil || b == nil {
		return cmpInt(boolInt(a != nil), boolInt(b != nil))
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		an, bn := isDigits(a[i]), isDigits(b[i])
		var c int
		switch {
		case an && bn:
			c = cmpNum(a[i], b[i])
		case an != bn:
			c = cmpInt(boolInt(an), boolInt(bn))
		default:
			c = strings.Compare(a[i], b[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmpInt(len(a), len(b))
}

// Less reports whether a is older than b in PEP 440's order (2.11.0rc1 is
// older than 2.11.0). When either does not parse, the two compare as
// dotted numbers (version.Compare), as pip's legacy versions did.
func Less(a, b string) bool {
	va, ok1 := parse(a)
	vb, ok2 := parse(b)
	if !ok1 || !ok2 {
		return version.Compare(a, b) < 0
	}
	return va.Compare(vb) < 0
}

// Normalize returns the normalised spelling of s, or s itself when it is not
// a valid PEP 440 version (pip prints those verbatim).
func Normalize(s string) string {
	v, ok := parse(s)
	if !ok {
		return s
	}
	return v.String()
}

// parse is packaging's VERSION_PATTERN, anchored, with leading and trailing
// whitespace allowed:
//
//	v? (N!)? N(.N)* ([-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?N?)?
//	(-N | [-_.]?(post|rev|r)[-_.]?N?)? ([-_.]?dev[-_.]?N?)?
//	(+[a-z0-9]+([-_.][a-z0-9]+)*)?
//
// Read greedily left to right; no choice made here can make a later part
// fail where another choice would succeed (each optional part's separators
// are optional and its words start with letters no earlier part can take),
// so greedy reading accepts exactly what the backtracking expression does.
func parse(s string) (Version, bool) {
	s = trimSpace(s)
	var v Version
	i := 0
	if i < len(s) && (s[i] == 'v' || s[i] == 'V') {
		i++
	}
	n := digits(s, i)
	if n == i {
		return Version{}, false
	}
	v.epoch = "0"
	if n < len(s) && s[n] == '!' {
		v.epoch = trimNum(s[i:n])
		i = n + 1
		n = digits(s, i)
		if n == i {
			return Version{}, false
		}
	}
	v.release = append(v.release, trimNum(s[i:n]))
	i = n
	for i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
		n = digits(s, i+1)
		v.release = append(v.release, trimNum(s[i+1:n]))
		i = n
	}
	// pre-release
	if j, label, ok := sepWord(s, i, preWords); ok {
		v.preL = preLetter(label)
		v.preN, i = sepNumber(s, j)
	}
	// post-release: "-N", or a word
	if i+1 < len(s) && s[i] == '-' && isDigit(s[i+1]) {
		n = digits(s, i+1)
		v.postL, v.postN = "post", trimNum(s[i+1:n])
		i = n
	} else if j, label, ok := sepWord(s, i, postWords); ok {
		v.postL = postLetter(label)
		v.postN, i = sepNumber(s, j)
	}
	// dev release
	if j, _, ok := sepWord(s, i, devWords); ok {
		v.hasDev = true
		v.devN, i = sepNumber(s, j)
	}
	// local label
	if i < len(s) && s[i] == '+' {
		local, j, ok := localLabel(s, i+1)
		if !ok {
			return Version{}, false
		}
		v.local, i = local, j
	}
	if i != len(s) {
		return Version{}, false
	}
	return v, true
}

// The words of each part, longest first where one is a prefix of another
// (the expression tries alpha before a, preview before pre; a shorter word
// never lets the rest match where the longer one was there).
var (
	preWords  = []string{"alpha", "a", "beta", "b", "preview", "pre", "c", "rc"}
	postWords = []string{"post", "rev", "r"}
	devWords  = []string{"dev"}
)

// sepWord reads an optional separator and then one of words at s[i:],
// matched as Python's re.IGNORECASE does; it returns the end and the text
// matched.
func sepWord(s string, i int, words []string) (int, string, bool) {
	j := i
	if j < len(s) && isSep(s[j]) {
		j++
	}
	for _, w := range words {
		if n, ok := matchFold(s, j, w); ok {
			return n, s[j:n], true
		}
	}
	return i, "", false
}

// sepNumber reads an optional separator and optional number after a word;
// a missing number is 0.
func sepNumber(s string, i int) (string, int) {
	if i < len(s) && isSep(s[i]) {
		i++
	}
	n := digits(s, i)
	if n == i {
		return "0", i
	}
	return trimNum(s[i:n]), n
}

// matchFold matches the lower-case ASCII word w at s[i:] as Python's
// case-insensitive matching does: either case, and also U+0130 and U+0131
// for i, U+017F for s, U+212A for k.
func matchFold(s string, i int, w string) (int, bool) {
	for k := 0; k < len(w); k++ {
		n, ok := foldChar(s, i, w[k])
		if !ok {
			return 0, false
		}
		i = n
	}
	return i, true
}

// foldChar matches one character of s at i against lower-case ASCII c.
func foldChar(s string, i int, c byte) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	if b := s[i]; b == c || b|0x20 == c && 'a' <= c && c <= 'z' {
		return i + 1, true
	}
	if s[i] < utf8.RuneSelf {
		return 0, false
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case c == 'i' && (r == '\u0130' || r == '\u0131'),
		c == 's' && r == '\u017f',
		c == 'k' && r == '\u212a':
		return i + n, true
	}
	return 0, false
}

// preLetter is packaging's _parse_letter_version for a pre-release word.
func preLetter(word string) string {
	switch l := pyLower(word); l {
	case "alpha":
		return "a"
	case "beta":
		return "b"
	case "c", "pre", "preview":
		return "rc"
	default:
		return l
	}
}

// postLetter is packaging's _parse_letter_version for a post-release word.
func postLetter(word string) string {
	switch l := pyLower(word); l {
	case "rev", "r":
		return "post"
	default:
		return l
	}
}

// localLabel reads [a-z0-9]+([-_.][a-z0-9]+)* (case-insensitive, with
// Python's Unicode folds) at s[i:], returning its parts as packaging keeps
// them: numbers as numbers, words lower-cased.
func localLabel(s string, i int) ([]string, int, bool) {
	var parts []string
	for {
		j := i
		for {
			n, ok := localChar(s, j)
			if !ok {
				break
			}
			j = n
		}
		if j == i {
			return nil, 0, false
		}
		part := s[i:j]
		if isDigits(part) {
			part = trimNum(part)
		} else {
			part = pyLower(part)
		}
		parts = append(parts, part)
		i = j
		if i < len(s) && isSep(s[i]) {
			i++
			continue
		}
		return parts, i, true
	}
}

func localChar(s string, i int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	if b := s[i]; isDigit(b) || 'a' <= b|0x20 && b|0x20 <= 'z' {
		return i + 1, true
	}
	if s[i] < utf8.RuneSelf {
		return 0, false
	}
	switch r, n := utf8.DecodeRuneInString(s[i:]); r {
	case '\u0130', '\u0131', '\u017f', '\u212a':
		return i + n, true
	}
	return 0, false
}

// pyLower is Python's str.lower for the text a version can hold: Go's
// simple mapping, except that U+0130 becomes "i" and a combining dot above
// (U+0307), as Python's full mapping has it.
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range s {
		if r == '\u0130' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// trimSpace strips what Python's \s matches (str.isspace) from both ends.
func trimSpace(s string) string {
	return strings.TrimFunc(s, isPySpace)
}

// isPySpace is Python's str.isspace (what \s matches) for one code point:
// Unicode White_Space, which unicode.IsSpace is, plus the ASCII separators
// U+001C to U+001F.
func isPySpace(r rune) bool {
	return r >= 0x1c && r <= 0x1f || unicode.IsSpace(r)
}

func isSep(b byte) bool   { return b == '-' || b == '_' || b == '.' }
func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// digits returns the end of the run of ASCII digits at s[i:].
func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// trimNum is Python's str(int(s)) for a run of ASCII digits.
func trimNum(s string) string {
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	return s
}

// cmpNum compares two numbers written as trimNum writes them.
func cmpNum(a, b string) int {
	if c := cmpInt(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func trimZeros(r []string) []string {
	for len(r) > 0 && r[len(r)-1] == "0" {
		r = r[:len(r)-1]
	}
	return r
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
