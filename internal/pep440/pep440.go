// Package pep440 is fastpath's small interface to Python version numbers
// (PEP 440), kept narrow so the library behind it can be swapped.
package pep440

import (
	pep "github.com/aquasecurity/go-pep440-version"

	"github.com/fastpath-dev/fastpath/internal/version"
)

// Version is a parsed PEP 440 version.
type Version struct{ v pep.Version }

// Parse parses s ("2.11.0+cu128", "1.0-post1").
func Parse(s string) (Version, error) {
	v, err := pep.Parse(s)
	if err != nil {
		return Version{}, err
	}
	return Version{v}, nil
}

// String is the normalised form, as packaging.version.Version prints it.
func (v Version) String() string { return v.v.String() }

// Compare returns -1, 0 or +1.
func (v Version) Compare(o Version) int { return v.v.Compare(o.v) }

// Less reports whether a is older than b in PEP 440's order (2.11.0rc1 is
// older than 2.11.0). When either does not parse, the two compare as
// dotted numbers (version.Compare), as pip's legacy versions did.
func Less(a, b string) bool {
	va, err1 := pep.Parse(a)
	vb, err2 := pep.Parse(b)
	if err1 != nil || err2 != nil {
		return version.Compare(a, b) < 0
	}
	return va.Compare(vb) < 0
}

// Normalize returns the normalised spelling of s, or s itself when it is not
// a valid PEP 440 version (pip prints those verbatim).
func Normalize(s string) string {
	v, err := pep.Parse(s)
	if err != nil {
		return s
	}
	return v.String()
}

// Satisfies reports whether version s meets the specifier spec (">=2.3.3",
// "==12.8.*"). Unparseable input never satisfies.
func Satisfies(s, spec string) bool {
	v, err := pep.Parse(s)
	if err != nil {
		return false
	}
	sp, err := pep.NewSpecifiers(spec)
	if err != nil {
		return false
	}
	return sp.Check(v)
}
