package source

import (
	"path"
	"strings"
)

// Need declares files a collection is going to read, before it reads them.
// A source that can only stream its files (an image's compressed layers)
// keeps what matches while it reads each layer once; every other file is
// still found, listed and stat-ed, and its body read on demand, only more
// slowly. Needs are a speed contract, never a correctness one.
type Need struct {
	// Pattern is matched against clean absolute in-source paths with
	// path.Match, one component per component. A pattern starting with
	// "**/" matches its remaining components against the end of a path at
	// any depth ("**/*.dist-info/METADATA").
	Pattern string
	// ELF marks files that ELF readers (debug/elf, elfdyn, fatbin) open:
	// the headers, section and program header tables, the dynamic section
	// and its tables, and fatbin headers are kept, not the code.
	ELF bool
}

// NeedMatcher is a compiled set of Needs.
type NeedMatcher struct {
	exact    map[string]bool // patterns without wildcards: whole-file needs
	exactELF map[string]bool
	pats     []compiledNeed
}

type compiledNeed struct {
	comps    []string
	anyDepth bool
	elf      bool
}

// CompileNeeds prepares needs for matching.
func CompileNeeds(needs []Need) *NeedMatcher {
	m := &NeedMatcher{exact: map[string]bool{}, exactELF: map[string]bool{}}
	for _, n := range needs {
		p := n.Pattern
		any := strings.HasPrefix(p, "**/")
		if any {
			p = strings.TrimPrefix(p, "**/")
		}
		if !any && !strings.ContainsAny(p, `*?[\`) {
			if n.ELF {
				m.exactELF[path.Clean(p)] = true
			} else {
				m.exact[path.Clean(p)] = true
			}
			continue
		}
		m.pats = append(m.pats, compiledNeed{comps: components(p), anyDepth: any, elf: n.ELF})
	}
	return m
}

// Match reports whether p is needed, and whether as an ELF file.
func (m *NeedMatcher) Match(p string) (needed, elf bool) {
	if m == nil {
		return false, false
	}
	if m.exactELF[p] {
		return true, true
	}
	needed = m.exact[p]
	var comps []string
	for _, n := range m.pats {
		if needed && !n.elf || elf {
			continue
		}
		if comps == nil {
			comps = components(p)
		}
		if n.match(comps) {
			needed = true
			elf = elf || n.elf
		}
	}
	return needed, elf
}

func (n compiledNeed) match(comps []string) bool {
	if len(comps) < len(n.comps) || !n.anyDepth && len(comps) != len(n.comps) {
		return false
	}
	tail := comps[len(comps)-len(n.comps):]
	for i, pc := range n.comps {
		if !matchComponent(pc, tail[i]) {
			return false
		}
	}
	return true
}

// matchComponent is path.Match for one component, in linear time when the
// pattern's only wildcard is "*" (all of Needs'): a hostile image's 4 KB
// names must not cost quadratic time against every pattern.
func matchComponent(pat, s string) bool {
	if strings.ContainsAny(pat, `?[\`) {
		ok, _ := path.Match(pat, s)
		return ok
	}
	parts := strings.Split(pat, "*")
	if len(parts) == 1 {
		return pat == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
