// Package pep440 is fastpath's small interface to Python version numbers
// (PEP 440), kept narrow so the library behind it can be swapped.
package pep440

import (
	pep "github.com/aquasecurity/go-pep440-version"
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
