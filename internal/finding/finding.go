// Package finding defines what diagnosis produces: a verdict with its
// evidence and the concrete fixes. IDs are a public contract (README,
// scripts, the JSON output): add new ones, never rename.
package finding

import "strings"

// ID names a kind of finding; stable across releases.
type ID string

// The ids themselves are in ids.go, generated from the registry
// internal/kb/data/findings.json.
//
//go:generate go run ./genids

// Severity orders findings: errors make `doctor` exit 1.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rank orders severities, most severe first.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Finding is one verdict. Every verdict cites evidence a user can check by
// hand (a path, a version, a symbol).
type Finding struct {
	ID       ID       `json:"id"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	Detail   string   `json:"detail"`
	Evidence []string `json:"evidence"`
	Fixes    []Fix    `json:"fixes"`
	// Decisive indexes the Evidence lines that decide the verdict: the
	// ones a text report shows by default (docs/output.md). Empty means
	// "the first lines that are not searched places".
	Decisive []int `json:"decisive,omitempty"`
}

// SearchedPrefix starts an evidence line that names a place looked at
// (found or not), not a fact that decides the verdict: "searched: PATH:
// /usr/bin/nvcc (absent)". A text report counts these by default and lists
// them with -v; JSON keeps them in evidence.
const SearchedPrefix = "searched: "

// SearchedPlace returns the place an evidence line names, and whether the
// line is a searched place at all.
func SearchedPlace(line string) (string, bool) {
	return strings.CutPrefix(line, SearchedPrefix)
}

// Fix is one way out, with the exact commands for this environment.
type Fix struct {
	Title    string   `json:"title"`
	Commands []string `json:"commands"`
}
