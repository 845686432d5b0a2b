package torch

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// VersionPy is what torch/version.py says. Unset strings are "" (Python's
// None and an absent line read the same).
type VersionPy struct {
	Version    string // __version__
	CUDA       string // cuda
	HIP        string // hip
	GitVersion string // git_version
}

// versionPyCap bounds the file read: torch writes about 300 bytes.
const versionPyCap = 64 << 10

// ParseVersionPy reads torch/version.py as text, never running it. It
// accepts the top-level assignments torch's build writes, with or without
// a type annotation (`cuda: Optional[str] = '12.8'`), single or double
// quotes, None, and trailing comments. Problems (a known name assigned
// something other than a string literal or None, binary junk, no
// __version__) come back as messages; whatever could be read is kept.
func ParseVersionPy(data []byte) (VersionPy, []string) {
	var v VersionPy
	var problems []string
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return v, []string{"not a text file"}
	}
	sawVersion := false
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue // only module-level statements set these names
		}
		target, value, ok := splitAssignment(line)
		if !ok {
			continue
		}
		var field *string
		switch target {
		case "__version__":
			field = &v.Version
			sawVersion = true
		case "cuda":
			field = &v.CUDA
		case "hip":
			field = &v.HIP
		case "git_version":
			field = &v.GitVersion
		default:
			continue
		}
		s, isNone, err := literal(value)
		if err != nil {
			problems = append(problems, fmt.Sprintf("line %d: %s: %v", i+1, target, err))
			continue
		}
		if isNone {
			*field = ""
		} else {
			*field = s
		}
	}
	if !sawVersion {
		problems = append(problems, "no __version__ assignment")
	} else if v.Version == "" {
		problems = append(problems, "__version__ is empty")
	}
	return v, problems
}

// splitAssignment splits `name[: annotation] = value` into the name and
// the value text. Comparisons (==) and augmented assignments are not
// assignments.
func splitAssignment(line string) (target, value string, ok bool) {
	eq := strings.IndexByte(line, '=')
	if eq <= 0 || strings.HasPrefix(line[eq:], "==") {
		return "", "", false
	}
	lhs := line[:eq]
	if c := lhs[len(lhs)-1]; c == '!' || c == '<' || c == '>' || c == '+' || c == '-' || c == '*' || c == '/' || c == '|' || c == '&' || c == ':' {
		return "", "", false
	}
	if colon := strings.IndexByte(lhs, ':'); colon >= 0 {
		lhs = lhs[:colon] // drop the annotation
	}
	target = strings.TrimSpace(lhs)
	if !isIdentifier(target) {
		return "", "", false
	}
	return target, strings.TrimSpace(line[eq+1:]), true
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// literal reads a Python string literal or None, followed by nothing but an
// optional comment.
func literal(value string) (s string, isNone bool, err error) {
	rest := ""
	switch {
	case value == "":
		return "", false, fmt.Errorf("no value")
	case strings.HasPrefix(value, "None"):
		isNone, rest = true, value[len("None"):]
	case value[0] == '\'' || value[0] == '"':
		q := value[0]
		if strings.HasPrefix(value, string([]byte{q, q, q})) {
			return "", false, fmt.Errorf("triple-quoted strings are not expected here")
		}
		end := strings.IndexByte(value[1:], q)
		if end < 0 {
			return "", false, fmt.Errorf("unterminated string %s", quoteShort(value))
		}
		s, rest = value[1:1+end], value[2+end:]
		if strings.IndexByte(s, '\\') >= 0 {
			return "", false, fmt.Errorf("escape sequences are not expected in %s", quoteShort(value))
		}
	default:
		return "", false, fmt.Errorf("not a string literal: %s", quoteShort(value))
	}
	rest = strings.TrimSpace(rest)
	if rest != "" && rest[0] != '#' {
		return "", false, fmt.Errorf("unexpected text after the value: %s", quoteShort(value))
	}
	return s, isNone, nil
}

// quoteShort quotes at most 60 bytes of s for a message.
func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return fmt.Sprintf("%q", s)
}
