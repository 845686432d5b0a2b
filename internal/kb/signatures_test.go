package kb

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The signature table parses, every pattern is RE2 and implies one of its
// literals (the prefilter must never hide a match), and every finding has a
// place in the precedence.
func TestSignaturesData(t *testing.T) {
	d := Signatures()
	if len(d.Signatures) < 20 || d.Source == "" || d.Precedence.Why == "" {
		t.Fatalf("table: %d signatures", len(d.Signatures))
	}
	names := map[string]bool{}
	for _, s := range append(slices.Clone(d.Signatures), d.Context...) {
		if names[s.Name] {
			t.Errorf("%s: duplicate name", s.Name)
		}
		names[s.Name] = true
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if len(s.Literals) == 0 {
			t.Errorf("%s: no literals", s.Name)
		}
		// The source text's matching line must contain a literal.
		for _, line := range strings.Split(s.Origin.Text, "\n") {
			if !re.MatchString(line) {
				continue
			}
			if !slices.ContainsFunc(s.Literals, func(l string) bool { return strings.Contains(line, l) }) {
				t.Errorf("%s: %q matches the pattern but no literal", s.Name, line)
			}
		}
	}
	for _, s := range d.Signatures {
		if !slices.Contains(d.Precedence.Order, s.Finding) {
			t.Errorf("%s: finding %q not in the precedence", s.Name, s.Finding)
		}
		if s.Severity != "error" && s.Severity != "warning" {
			t.Errorf("%s: severity %q", s.Name, s.Severity)
		}
		if s.Title == "" || s.Origin.Text == "" || s.Origin.From == "" {
			t.Errorf("%s: title, text and source are required", s.Name)
		}
	}
	if d.Modules.Dists["causal_conv1d_cuda"] != "causal-conv1d" {
		t.Error("torch builds or module table missing")
	}
}
