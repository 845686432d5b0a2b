// Package fleet compares machines: which facts differ between their doctor
// reports (torch, CUDA, driver, compilers, Python, kernel packages, GPUs)
// and which findings each one has.
package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/model"
)

// Machine is one machine's facts and findings, named.
type Machine struct {
	Name     string
	Facts    *facts.Facts
	Findings []finding.Finding
	Models   []*model.Report
}

// maxReport caps a report file read from disk.
const maxReport = 256 << 20

// Load reads a `doctor --json` report, or a `facts` file (diagnosed here),
// naming the machine after the file.
func Load(path string) (Machine, error) {
	f, err := os.Open(path)
	if err != nil {
		return Machine{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxReport+1))
	if err != nil {
		return Machine{}, err
	}
	if len(b) > maxReport {
		return Machine{}, fmt.Errorf("%s: over %d bytes", path, maxReport)
	}
	m, err := Parse(b)
	if err != nil {
		return Machine{}, fmt.Errorf("%s: %w", path, err)
	}
	m.Name = strings.TrimSuffix(filepath.Base(path), ".json")
	return m, nil
}

// Parse reads a doctor report or a facts document.
func Parse(b []byte) (Machine, error) {
	var probe struct {
		Schema string          `json:"schema"`
		Facts  json.RawMessage `json:"facts"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return Machine{}, err
	}
	if probe.Schema != facts.Schema {
		return Machine{}, fmt.Errorf("schema %q, want %q (a `fastpath doctor --json` or `fastpath facts` file)", probe.Schema, facts.Schema)
	}
	if len(probe.Facts) > 0 && !bytes.Equal(probe.Facts, []byte("null")) {
		var d diagnose.Doctor
		if err := json.Unmarshal(b, &d); err != nil {
			return Machine{}, err
		}
		return FromDoctor("", &d), nil
	}
	var f facts.Facts
	if err := json.Unmarshal(b, &f); err != nil {
		return Machine{}, err
	}
	return Machine{Facts: &f, Findings: diagnose.Run(&f)}, nil
}

// FromDoctor names a doctor report.
func FromDoctor(name string, d *diagnose.Doctor) Machine {
	if d.Facts == nil {
		d.Facts = &facts.Facts{}
	}
	return Machine{Name: name, Facts: d.Facts, Findings: d.Findings, Models: d.Models}
}

// KernelPackages are the distributions compared between machines: torch and
// the packages whose presence and versions decide fast paths (the KB's
// packages.json, entries with "compare").
var KernelPackages = sync.OnceValue(kb.ComparedPackages) // on first use: an init costs every start

// Row is one fact across machines; Values line up with Diff.Machines, ""
// where the machine has none.
type Row struct {
	Fact    string   `json:"fact"`
	Values  []string `json:"values"`
	Differs bool     `json:"differs"`
}

// Diff is the comparison of machines.
type Diff struct {
	Schema   string   `json:"schema"`
	Machines []string `json:"machines"`
	// Rows are every fact compared, finding rows ("finding <id>": the
	// severity, with a count when it occurs more than once) last.
	Rows []Row `json:"rows"`
	// Findings are each machine's finding ids, in Machines' order.
	Findings [][]string `json:"findings"`
	// Expected is diff --expect N: the machines that should have reported;
	// Missing how many of them did not.
	Expected int `json:"expected,omitempty"`
	Missing  int `json:"missing,omitempty"`
	// Unreadable are the lines of a `-` stream that held no report.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Differences are the rows that differ.
func (d *Diff) Differences() []Row {
	var out []Row
	for _, r := range d.Rows {
		if r.Differs {
			out = append(out, r)
		}
	}
	return out
}

type extractor struct {
	fact string
	get  func(m *Machine) string
}

var extractors = []extractor{
	{"os", func(m *Machine) string { return strings.TrimSpace(m.Facts.OS.ID + " " + m.Facts.OS.VersionID) }},
	{"arch", func(m *Machine) string { return m.Facts.OS.Arch }},
	{"glibc", func(m *Machine) string { return m.Facts.OS.Glibc }},
	{"kernel", func(m *Machine) string { return m.Facts.OS.Kernel }},
	{"python", func(m *Machine) string {
		if py := m.Facts.Python.Selected; py != nil {
			return py.Version
		}
		return ""
	}},
	{"torch", func(m *Machine) string {
		if t := m.Facts.Torch; t != nil {
			return t.Version
		}
		return ""
	}},
	{"torch cuda", func(m *Machine) string {
		if t := m.Facts.Torch; t != nil {
			if t.HIP != "" {
				return "hip " + t.HIP
			}
			return t.CUDA
		}
		return ""
	}},
	{"torch archs", func(m *Machine) string {
		if t := m.Facts.Torch; t != nil {
			return strings.Join(t.Archs, " ")
		}
		return ""
	}},
	{"driver", func(m *Machine) string {
		if d := m.Facts.GPU.Driver; d != nil {
			return d.Version
		}
		return ""
	}},
	{"driver cuda", func(m *Machine) string {
		if d := m.Facts.GPU.Driver; d != nil {
			return d.CUDA
		}
		return ""
	}},
	{"nvcc", func(m *Machine) string {
		var vs []string
		for _, c := range m.Facts.CUDA.Compilers {
			vs = append(vs, valueOr(c.Version, "?"))
		}
		return strings.Join(uniqueSorted(vs), " ")
	}},
	{"nvcc (CUDA_HOME)", func(m *Machine) string {
		h := m.Facts.CUDA.TorchHome
		if h == nil || h.NVCC == "" {
			return ""
		}
		for _, c := range m.Facts.CUDA.Compilers {
			if c.Path == h.NVCC || c.Home == h.Path || contains(c.Paths, h.NVCC) {
				return valueOr(c.Version, "?")
			}
		}
		return "?"
	}},
	{"gcc", func(m *Machine) string {
		if g := m.Facts.Toolchain.GCC; g != nil {
			return valueOr(g.Version, "?")
		}
		return ""
	}},
	{"gpus", func(m *Machine) string {
		n := map[string]int{}
		var names []string
		for _, d := range m.Facts.GPU.Devices {
			name := valueOr(d.Name, "unknown")
			if n[name] == 0 {
				names = append(names, name)
			}
			n[name]++
		}
		sort.Strings(names)
		for i, name := range names {
			names[i] = fmt.Sprintf("%dx %s", n[name], name)
		}
		return strings.Join(names, ", ")
	}},
	{"gpu capability", func(m *Machine) string {
		var cs []string
		for _, d := range m.Facts.GPU.Devices {
			cs = append(cs, d.Capability)
		}
		return strings.Join(uniqueSorted(cs), " ")
	}},
}

// Compare lines the machines up fact by fact.
func Compare(ms []Machine) *Diff {
	d := &Diff{Schema: facts.Schema, Machines: []string{}, Rows: []Row{}, Findings: [][]string{}}
	if len(ms) == 0 {
		return d
	}
	for _, m := range ms {
		d.Machines = append(d.Machines, m.Name)
	}
	add := func(fact string, vals []string) {
		r := Row{Fact: fact, Values: vals}
		for _, v := range vals[1:] {
			if v != vals[0] {
				r.Differs = true
			}
		}
		d.Rows = append(d.Rows, r)
	}
	for _, e := range extractors {
		vals := make([]string, len(ms))
		for i := range ms {
			vals[i] = e.get(&ms[i])
		}
		add(e.fact, vals)
	}
	pkgs := make([]map[string]string, len(ms))
	for i := range ms {
		pkgs[i] = Packages(ms[i].Facts)
	}
	for _, p := range KernelPackages() {
		vals := make([]string, len(ms))
		any := false
		for i := range ms {
			vals[i] = pkgs[i][p]
			any = any || vals[i] != ""
		}
		if any {
			add("package "+p, vals)
		}
	}
	sev := make([]map[finding.ID]string, len(ms))
	ids := map[finding.ID]bool{}
	d.Findings = make([][]string, len(ms))
	for i, m := range ms {
		count := map[finding.ID]int{}
		sev[i] = map[finding.ID]string{}
		for _, f := range m.Findings {
			count[f.ID]++
			if old, ok := sev[i][f.ID]; !ok || f.Severity.Rank() < finding.Severity(old).Rank() {
				sev[i][f.ID] = string(f.Severity)
			}
			ids[f.ID] = true
		}
		for id, n := range count {
			if n > 1 {
				sev[i][id] = fmt.Sprintf("%s x%d", sev[i][id], n)
			}
			d.Findings[i] = append(d.Findings[i], string(id))
		}
		sort.Strings(d.Findings[i])
		if d.Findings[i] == nil {
			d.Findings[i] = []string{}
		}
	}
	var sorted []string
	for id := range ids {
		sorted = append(sorted, string(id))
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		vals := make([]string, len(ms))
		for i := range ms {
			vals[i] = sev[i][finding.ID(id)]
		}
		add("finding "+id, vals)
	}
	return d
}

var nameSep = lazyregexp.New(`[-_.]+`)

// Normalize is PEP 503's name normalisation.
func Normalize(name string) string { return nameSep.ReplaceAllString(strings.ToLower(name), "-") }

// Packages maps the selected environment's normalised distribution names to
// versions, skipping shadowed copies Python does not import.
func Packages(f *facts.Facts) map[string]string {
	out := map[string]string{}
	if f.Python.Selected == nil {
		return out
	}
	for _, d := range f.Python.Selected.Distributions {
		n := Normalize(d.Name)
		if _, seen := out[n]; seen || d.Shadowed {
			continue
		}
		out[n] = d.Version
	}
	return out
}

// ErrNoMachines is returned for an empty comparison.
var ErrNoMachines = errors.New("no machines to compare")

func valueOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

func uniqueSorted(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
