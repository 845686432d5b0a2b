// Package version compares dotted version numbers, the one comparator
// fastpath has for them: CUDA releases (12.8), NVIDIA drivers (580.159.04),
// compilers (13.3.0), Python installs (3.12.3). PEP 440 ordering of Python
// package versions, with its pre- and post-releases, is internal/pep440's.
package version

import "strings"

// maxDigits caps the digits read of one component: a longer run (from a
// hostile folder name) saturates instead of overflowing.
const maxDigits = 18

// Compare returns -1, 0 or +1 as a is older than, the same as, or newer than
// b. Each maximal run of decimal digits is one component, compared as a
// number; what lies between runs only separates them, so 580.159.04 is
// 580.159.4, python3.9 is older than python3.12, and a folder
// /root/.pyenv/versions/3.12.3 compares as 3.12.3. Missing components are 0,
// so 12.8 is 12.8.0. A suffix counts as more components (3.13.0rc1 and
// 2.11.0+cu128 are newer than 3.13.0 and 2.11.0): PEP 440's order is
// internal/pep440's.
func Compare(a, b string) int {
	for a != "" || b != "" {
		var x, y uint64
		x, a = component(a)
		y, b = component(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

// components counts the digit runs of s.
func components(s string) int {
	n := 0
	for s != "" {
		_, rest := component(s)
		if rest == s {
			break
		}
		n++
		s = rest
	}
	return n
}

// Less is a strict total order for sorting: by Compare, then the version
// with fewer components first (12.8 before 12.8.0), then by the strings, so
// a sort is deterministic whatever the input order.
func Less(a, b string) bool {
	if c := Compare(a, b); c != 0 {
		return c < 0
	}
	if na, nb := components(a), components(b); na != nb {
		return na < nb
	}
	return a < b
}

// component returns the number of s's first digit run (0 when s has none)
// and what follows the run.
func component(s string) (uint64, string) {
	i := strings.IndexAny(s, "0123456789")
	if i < 0 {
		return 0, ""
	}
	s = s[i:]
	var n uint64
	j := 0
	for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
		if j < maxDigits {
			n = n*10 + uint64(s[j]-'0')
		} else {
			n = 1<<64 - 1
		}
	}
	return n, s[j:]
}
