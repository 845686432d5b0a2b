package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
)

// NFDPrefix is the namespace of fastpath's node labels. node-feature-discovery
// publishes labels outside its own namespaces only when nfd-master allows
// it (-extra-label-ns=fastpath.io, or extraLabelNs in its configuration).
const NFDPrefix = "fastpath.io/"

// NFD writes a node-feature-discovery feature file (for
// /etc/kubernetes/node-feature-discovery/features.d/): one NAME=VALUE line
// per label, each name and value valid as a Kubernetes label. Facts that
// are unknown get no label, so a selector on them never matches by accident.
func NFD(w io.Writer, f *facts.Facts, findings []finding.Finding, models []*model.Report) error {
	ew := &errWriter{w: w}
	ew.printf("# fastpath %s doctor: node labels for node-feature-discovery\n", f.Tool)
	label := func(name, value string) {
		v := LabelValue(value)
		if v == "" && value != "" {
			return
		}
		n := NFDPrefix + LabelName(name)
		// The API server's own rules (k8slabel.go) decide, not our sanitiser: a label
		// nfd-master would refuse is never written.
		if !validLabelKey(n) || !validLabelValue(v) {
			return
		}
		ew.printf("%s=%s\n", n, v)
	}
	var errs, warns int
	ids := map[string]finding.Severity{}
	for _, fd := range findings {
		switch fd.Severity {
		case finding.Error:
			errs++
		case finding.Warning:
			warns++
		}
		if old, ok := ids[string(fd.ID)]; !ok || fd.Severity.Rank() < old.Rank() {
			ids[string(fd.ID)] = fd.Severity
		}
	}
	label("fast-path-ready", fmt.Sprint(errs == 0))
	label("errors", fmt.Sprint(errs))
	label("warnings", fmt.Sprint(warns))
	for _, kv := range infoLabels(f) {
		if kv[1] == "" || kv[0] == "version" {
			continue
		}
		label(strings.ReplaceAll(kv[0], "_", "-"), kv[1])
	}
	label("version", f.Tool)
	for _, p := range packageRows(f) {
		label("pkg."+p[0], p[1])
	}
	for _, id := range sortedKeys(ids) {
		label("finding."+id, string(ids[id]))
	}
	for _, m := range models {
		label("model."+m.Model, fmt.Sprint(ModelReady(m)))
	}
	return ew.err
}

func sortedKeys(m map[string]finding.Severity) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// labelChars keeps [A-Za-z0-9._-] and turns the rest into '-'.
func labelChars(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

// trimLabel cuts s to 63 characters and trims what may not start or end a
// label (anything not alphanumeric).
func trimLabel(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	isAlnum := func(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' }
	for len(s) > 0 && !isAlnum(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && !isAlnum(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// LabelValue makes s a valid Kubernetes label value: at most 63 of
// [A-Za-z0-9._-], alphanumeric at both ends (2.8.0+cu128 -> 2.8.0-cu128,
// "NVIDIA H200" -> NVIDIA-H200); "" when nothing is left.
func LabelValue(s string) string { return trimLabel(labelChars(s)) }

// LabelName makes s a valid name part of a label key (after the prefix):
// the same rules as a value, never empty.
func LabelName(s string) string {
	if n := trimLabel(labelChars(s)); n != "" {
		return n
	}
	return "unnamed"
}
