package pep440

import (
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"2.11.0+cu128", "1!2.0", "1.0.post1.dev2", "1.0-1", "v1.0RC1", " 1.0a.post ", "1.0+abc.007",
	"1.0prev\u0131ew1", "1.0.po\u017ft1", "1.0+\u212a", "1.0+\u0130", "1.0.dev", "1.0a-1", "01.2", "", "1.0+",
}

// asciiOnly: packaging folds four non-ASCII letters into its words and
// keeps them in the sort key (package comment), so for those spellings
// Parse(Normalize(s)) need not equal Parse(s), in packaging as here.
func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// FuzzVersion: never panics; Normalize is idempotent; the normal form
// parses to an equal version and prints itself.
func FuzzVersion(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if nn := Normalize(n); nn != n {
			t.Fatalf("Normalize(%q) = %q, Normalize of that = %q", s, n, nn)
		}
		v, err := Parse(s)
		if err != nil {
			if n != s {
				t.Fatalf("Normalize(%q) = %q for a string Parse rejects", s, n)
			}
			return
		}
		if v.Compare(v) != 0 {
			t.Fatalf("%q does not compare equal to itself", s)
		}
		if !asciiOnly(s) {
			return
		}
		w, err := Parse(n)
		if err != nil {
			t.Fatalf("Parse(Normalize(%q) = %q): %v", s, n, err)
		}
		if v.Compare(w) != 0 || w.String() != n {
			t.Fatalf("Parse(Normalize(%q)) = %q, compares %d with Parse(%q)", s, w, v.Compare(w), s)
		}
	})
}

// FuzzCompare: Compare is antisymmetric and transitive.
func FuzzCompare(f *testing.F) {
	f.Add("1.0", "1.0.post1", "1.0+local")
	f.Add("1.0.dev0", "1.0a0", "1.0")
	f.Add("2.11.0+cu128", "2.11.0+cu130", "2.11.0+cpu")
	f.Add("1.0+1", "1.0+a", "1.0+1.a")
	f.Add("1.0.post1.dev0", "1.0.post1", "1.0.post0")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		va, e1 := Parse(a)
		vb, e2 := Parse(b)
		vc, e3 := Parse(c)
		if e1 != nil || e2 != nil || e3 != nil {
			return
		}
		if va.Compare(vb) != -vb.Compare(va) {
			t.Fatalf("Compare(%q, %q) = %d but Compare(%q, %q) = %d", a, b, va.Compare(vb), b, a, vb.Compare(va))
		}
		ab, bc, ac := va.Compare(vb), vb.Compare(vc), va.Compare(vc)
		if ab <= 0 && bc <= 0 && ac > 0 || ab >= 0 && bc >= 0 && ac < 0 {
			t.Fatalf("not transitive: %q %q %q: %d %d %d", a, b, c, ab, bc, ac)
		}
		if Less(a, b) != (ab < 0) {
			t.Fatalf("Less(%q, %q) = %v, Compare %d", a, b, Less(a, b), ab)
		}
	})
}
