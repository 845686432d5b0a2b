package render

import (
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// Plural is one or many by n: Plural(1, "error", "errors") is "error".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count is n and the noun that agrees with it: "1 error", "0 errors",
// "3 machines".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Plural(n, one, many)
}

// CountVerb is a count and a verb that agree with it: CountVerb(1,
// "machine", "machines", "agrees", "agree") is "1 machine agrees".
func CountVerb(n int, one, many, verbOne, verbMany string) string {
	return Count(n, one, many) + " " + Plural(n, verbOne, verbMany)
}

// Severities is the one-line verdict over findings: "1 error, 2
// warnings", with ", 1 note" when there are notes, and "no problems
// found" when there is nothing.
func Severities(findings []finding.Finding) string {
	var e, w, i int
	for _, f := range findings {
		switch f.Severity {
		case finding.Error:
			e++
		case finding.Warning:
			w++
		default:
			i++
		}
	}
	if e+w+i == 0 {
		return "no problems found"
	}
	return SeverityCounts(e, w, i)
}

// SeverityCounts is "E errors, W warnings" and ", N notes" when n > 0.
func SeverityCounts(errors, warnings, notes int) string {
	parts := []string{Count(errors, "error", "errors"), Count(warnings, "warning", "warnings")}
	if notes > 0 {
		parts = append(parts, Count(notes, "note", "notes"))
	}
	return strings.Join(parts, ", ")
}
