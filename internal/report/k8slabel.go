package report

import "strings"

// The Kubernetes API server's label rules, as booleans: NFD writes no label
// nfd-master would refuse. They were k8s.io/apimachinery's validation
// functions, whose package inits (and the rest of apimachinery they pull
// in) cost every fastpath start (issue 17); TestLabelRulesMatchAPI compares
// these with them.

// validLabelKey is validation.IsQualifiedName: an optional DNS-1123
// subdomain prefix of at most 253 characters and "/", then a name of 1 to
// 63 characters of [A-Za-z0-9_.-] starting and ending alphanumeric.
func validLabelKey(s string) bool {
	name := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		prefix := s[:i]
		name = s[i+1:]
		if strings.IndexByte(name, '/') >= 0 || len(prefix) == 0 || len(prefix) > 253 || !dnsSubdomain(prefix) {
			return false
		}
	}
	return len(name) <= 63 && labelWord(name)
}

// validLabelValue is validation.IsValidLabelValue: empty, or at most 63
// characters of [A-Za-z0-9_.-] starting and ending alphanumeric.
func validLabelValue(s string) bool {
	return s == "" || len(s) <= 63 && labelWord(s)
}

// labelWord: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
func labelWord(s string) bool {
	if s == "" || !alnum(s[0], true) || !alnum(s[len(s)-1], true) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c, true) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// dnsSubdomain: [a-z0-9]([-a-z0-9]*[a-z0-9])? labels joined by dots.
func dnsSubdomain(s string) bool {
	for _, l := range strings.Split(s, ".") {
		if l == "" || !alnum(l[0], false) || !alnum(l[len(l)-1], false) {
			return false
		}
		for i := 0; i < len(l); i++ {
			if !alnum(l[i], false) && l[i] != '-' {
				return false
			}
		}
	}
	return true
}

func alnum(c byte, upper bool) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || upper && 'A' <= c && c <= 'Z'
}
