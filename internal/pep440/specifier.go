package pep440

import "strings"

// Satisfies reports whether version s meets the specifier set spec
// (">=2.3.3", "==12.8.*", ">=1.0,!=1.3.*"): packaging's
// SpecifierSet(spec).contains(s), pre-releases excluded unless a specifier
// names one. Unparseable input never satisfies, nor does any case where
// packaging raises (an "===" specifier whose version does not parse).
func Satisfies(s, spec string) bool {
	v, ok := parse(s)
	if !ok {
		return false
	}
	set, ok := parseSpecifierSet(spec)
	if !ok {
		return false
	}
	ok, err := set.contains(v)
	return ok && err == nil
}

// specifier is one packaging.specifiers.Specifier: an operator and the
// version text after it, stripped.
type specifier struct {
	op, version string
}

// parseSpecifierSet splits spec on commas as SpecifierSet does, dropping
// empty items.
func parseSpecifierSet(spec string) (specifierSet, bool) {
	var set specifierSet
	for item := range strings.SplitSeq(spec, ",") {
		item = trimSpace(item)
		if item == "" {
			continue
		}
		sp, ok := parseSpecifier(item)
		if !ok {
			return nil, false
		}
		set = append(set, sp)
	}
	return set, true
}

// parseSpecifier is packaging's Specifier._regex: an operator, optional
// whitespace, and a version whose form depends on the operator:
//   - "===": any text without whitespace, ';' or ')' (possibly none);
//   - "==", "!=": a full version (local label allowed), or a release
//     (optionally v-prefixed, with an epoch) followed by ".*";
//   - "~=": a version with at least two release numbers, no local label;
//   - "<", "<=", ">", ">=": a version without a local label.
//
// Versions here are what the Version expression accepts, so parse checks
// them; the operator alternatives are tried in the expression's order.
func parseSpecifier(s string) (specifier, bool) {
	s = trimSpace(s)
	var op string
	for _, o := range operators {
		if strings.HasPrefix(s, o) {
			op = o
			break
		}
	}
	if op == "" {
		return specifier{}, false
	}
	ver := trimSpace(s[len(op):])
	switch op {
	case "===":
		if strings.ContainsAny(ver, ";)") || strings.IndexFunc(ver, isPySpace) >= 0 {
			return specifier{}, false
		}
		return specifier{op, ver}, true
	case "==", "!=":
		if rel, ok := strings.CutSuffix(ver, ".*"); ok {
			if !isReleaseOnly(rel) {
				return specifier{}, false
			}
			return specifier{op, ver}, true
		}
	}
	v, ok := parse(ver)
	if !ok {
		return specifier{}, false
	}
	if v.local != nil && op != "==" && op != "!=" {
		return specifier{}, false
	}
	if op == "~=" && len(v.release) < 2 {
		return specifier{}, false
	}
	return specifier{op, ver}, true
}

// operators in the order the expression tries them, "===" first because
// "==" followed by "=" never matches a version.
var operators = []string{"===", "~=", "==", "!=", "<=", ">=", "<", ">"}

// isReleaseOnly is v?(N!)?N(.N)*.
func isReleaseOnly(s string) bool {
	i := 0
	if i < len(s) && (s[i] == 'v' || s[i] == 'V') {
		i++
	}
	n := digits(s, i)
	if n == i {
		return false
	}
	if n < len(s) && s[n] == '!' {
		i = n + 1
		n = digits(s, i)
		if n == i {
			return false
		}
	}
	i = n
	for i < len(s) {
		if s[i] != '.' {
			return false
		}
		n = digits(s, i+1)
		if n == i+1 {
			return false
		}
		i = n
	}
	return true
}

// contains is SpecifierSet.contains with prereleases=None.
func (set specifierSet) contains(v Version) (bool, error) {
	// SpecifierSet.prereleases: None for an empty set (so pre-releases are
	// out), else whether any specifier names a pre-release.
	pre := false
	for _, sp := range set {
		p, err := sp.prereleases()
		if err != nil {
			return false, err
		}
		if p {
			pre = true
			break
		}
	}
	if !pre && v.IsPrerelease() {
		return false, nil
	}
	for _, sp := range set {
		ok, err := sp.match(v)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

type specifierSet []specifier

// errInvalid stands for packaging's InvalidVersion raised mid-comparison.
type errInvalid string

func (e errInvalid) Error() string { return "invalid version: " + string(e) }

// reparse is packaging's Version(str) on a string it built itself.
func reparse(s string) (Version, error) {
	v, ok := parse(s)
	if !ok {
		return Version{}, errInvalid(s)
	}
	return v, nil
}

// prereleases is Specifier.prereleases: whether an inclusive operator's
// version is a pre-release.
func (sp specifier) prereleases() (bool, error) {
	if sp.op == "!=" {
		return false, nil
	}
	ver := sp.version
	if sp.op == "==" {
		ver = strings.TrimSuffix(ver, ".*")
	}
	v, err := reparse(ver)
	if err != nil {
		return false, err
	}
	return v.IsPrerelease(), nil
}

// match is Specifier's operator on prospective p (pre-releases already
// allowed by the caller).
func (sp specifier) match(p Version) (bool, error) {
	switch sp.op {
	case "~=":
		return compatible(p, sp.version)
	case "==":
		return equal(p, sp.version)
	case "!=":
		eq, err := equal(p, sp.version)
		return !eq, err
	case "<=", ">=":
		pub, err := reparse(p.public())
		if err != nil {
			return false, err
		}
		s, err := reparse(sp.version)
		if err != nil {
			return false, err
		}
		if sp.op == "<=" {
			return pub.Compare(s) <= 0, nil
		}
		return pub.Compare(s) >= 0, nil
	case "<":
		return lessThan(p, sp.version)
	case ">":
		return greaterThan(p, sp.version)
	case "===":
		return pyLower(p.String()) == pyLower(sp.version), nil
	}
	return false, nil
}

// compatible is _compare_compatible: ~=2.2 is >=2.2 and ==2.*, the prefix
// cut from the specifier's own text as packaging cuts it.
func compatible(p Version, spec string) (bool, error) {
	parts := versionSplit(spec)
	n := 0
	for n < len(parts) && !isSuffix(parts[n]) {
		n++
	}
	if n < 2 {
		return false, errInvalid(spec) // packaging fails to unpack an empty list
	}
	prefix := parts[0] + "!" + strings.Join(parts[1:n-1], ".") + ".*"
	s, err := reparse(spec)
	if err != nil {
		return false, err
	}
	pub, err := reparse(p.public())
	if err != nil {
		return false, err
	}
	if pub.Compare(s) < 0 {
		return false, nil
	}
	return equal(p, prefix)
}

func isSuffix(seg string) bool {
	for _, p := range []string{"dev", "a", "b", "rc", "post"} {
		if strings.HasPrefix(seg, p) {
			return true
		}
	}
	return false
}

// equal is _compare_equal.
func equal(p Version, spec string) (bool, error) {
	if rel, ok := strings.CutSuffix(spec, ".*"); ok {
		want := versionSplit(Normalize(rel))
		got := versionSplit(Normalize(p.public()))
		got = padVersion(got, want)
		if len(got) > len(want) {
			got = got[:len(want)]
		}
		if len(got) != len(want) {
			return false, nil
		}
		for i := range got {
			if got[i] != want[i] {
				return false, nil
			}
		}
		return true, nil
	}
	s, err := reparse(spec)
	if err != nil {
		return false, err
	}
	if s.local == nil {
		if p, err = reparse(p.public()); err != nil {
			return false, err
		}
	}
	return p.Compare(s) == 0, nil
}

// lessThan is _compare_less_than: <3.1 does not take 3.1.dev0.
func lessThan(p Version, spec string) (bool, error) {
	s, err := reparse(spec)
	if err != nil {
		return false, err
	}
	if p.Compare(s) >= 0 {
		return false, nil
	}
	if !s.IsPrerelease() && p.IsPrerelease() {
		same, err := sameBase(p, s)
		if err != nil || same {
			return false, err
		}
	}
	return true, nil
}

// greaterThan is _compare_greater_than: >3.1 takes neither 3.1.post0 nor
// 3.1+local.
func greaterThan(p Version, spec string) (bool, error) {
	s, err := reparse(spec)
	if err != nil {
		return false, err
	}
	if p.Compare(s) <= 0 {
		return false, nil
	}
	if !s.isPostrelease() && p.isPostrelease() {
		same, err := sameBase(p, s)
		if err != nil || same {
			return false, err
		}
	}
	if p.local != nil {
		same, err := sameBase(p, s)
		if err != nil || same {
			return false, err
		}
	}
	return true, nil
}

func sameBase(a, b Version) (bool, error) {
	ab, err := reparse(a.baseVersion())
	if err != nil {
		return false, err
	}
	bb, err := reparse(b.baseVersion())
	if err != nil {
		return false, err
	}
	return ab.Compare(bb) == 0, nil
}

// versionSplit is packaging's _version_split: the epoch ("0" when none),
// then the dot-separated items, "0rc1" split into "0" and "rc1".
func versionSplit(s string) []string {
	epoch, rest := "0", s
	if i := strings.LastIndexByte(s, '!'); i >= 0 {
		if s[:i] != "" {
			epoch = s[:i]
		}
		rest = s[i+1:]
	}
	out := []string{epoch}
	for item := range strings.SplitSeq(rest, ".") {
		if num, pre, ok := splitPrefix(item); ok {
			out = append(out, num, pre)
		} else {
			out = append(out, item)
		}
	}
	return out
}

// splitPrefix is _prefix_regex, ^([0-9]+)((?:a|b|c|rc)[0-9]+)$.
func splitPrefix(item string) (string, string, bool) {
	n := digits(item, 0)
	if n == 0 {
		return "", "", false
	}
	rest := item[n:]
	var word int
	switch {
	case strings.HasPrefix(rest, "rc"):
		word = 2
	case strings.HasPrefix(rest, "a"), strings.HasPrefix(rest, "b"), strings.HasPrefix(rest, "c"):
		word = 1
	default:
		return "", "", false
	}
	if !isDigits(rest[word:]) {
		return "", "", false
	}
	return item[:n], rest, true
}

// padVersion is _pad_version's left result: left's leading numbers padded
// with "0" to as many as right has.
func padVersion(left, right []string) []string {
	ln, rn := leadingNumbers(left), leadingNumbers(right)
	if rn <= ln {
		return left
	}
	out := make([]string, 0, len(left)+rn-ln)
	out = append(out, left[:ln]...)
	for range rn - ln {
		out = append(out, "0")
	}
	return append(out, left[ln:]...)
}

func leadingNumbers(parts []string) int {
	n := 0
	for n < len(parts) && isDigits(parts[n]) {
		n++
	}
	return n
}
