package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/remote"
	"github.com/fastpath-dev/fastpath/internal/report"
	"github.com/fastpath-dev/fastpath/internal/source"
)

const seedSite = fixture.SeedVenv + "/lib/python3.12/site-packages"

// seedVariant writes the seed container, changed by edit, and returns the
// facts collected from it.
func seedVariant(t *testing.T, edit func(root string, tr *fixture.Tree)) *facts.Facts {
	t.Helper()
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		tr := fixture.New(root)
		edit(root, tr)
		if err := tr.Err(); err != nil {
			t.Fatal(err)
		}
	}
	env, err := source.ParseEnv(fixture.SeedEnv)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(root, env)
	if err != nil {
		t.Fatal(err)
	}
	return collect.Collect(context.Background(), src, collect.Options{GPUs: fixture.SeedGPUs, ToolVersion: "test"})
}

func removeDist(t *testing.T, root, glob string) {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(root, seedSite, glob))
	if len(ms) == 0 {
		t.Fatalf("nothing matches %s", glob)
	}
	for _, m := range ms {
		if err := os.RemoveAll(m); err != nil {
			t.Fatal(err)
		}
	}
}

// save writes what `doctor --json` (asDoctor) or `facts` would have saved.
func save(t *testing.T, dir, name string, f *facts.Facts, asDoctor bool) string {
	t.Helper()
	var v any = f
	if asDoctor {
		v = report.Doctor{Schema: facts.Schema, Facts: f, Findings: diagnose.Run(f), Models: nil}
	}
	var b bytes.Buffer
	if err := report.JSON(&b, v); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDiffNamesExactlyTheDifferences saves three machines built from the
// seed: the seed itself, one with torch 2.9.1+cu126 and without fla-core, and
// one with a CUDA 12.8 toolkit installed; the comparison must name exactly
// those differences and what follows from them (torch's targets, findings).
func TestDiffNamesExactlyTheDifferences(t *testing.T) {
	seed := seedVariant(t, nil)
	otherTorch := seedVariant(t, func(root string, tr *fixture.Tree) {
		removeDist(t, root, "torch-*.dist-info")
		removeDist(t, root, "torch")
		removeDist(t, root, "fla_core-*.dist-info")
		tr.Torch(seedSite, "2.9.1+cu126", "12.6", "cp312")
	})
	withNVCC := seedVariant(t, func(root string, tr *fixture.Tree) {
		tr.Toolkit("/usr/local/cuda-12.8", "12.8.93").Symlink("/usr/local/cuda", "cuda-12.8")
	})
	dir := t.TempDir()
	paths := []string{
		save(t, dir, "node-a", seed, true),
		save(t, dir, "node-b", otherTorch, false), // a facts file: diagnosed when read
		save(t, dir, "node-c", withNVCC, true),
	}
	var ms []Machine
	for _, p := range paths {
		m, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	d := Compare(ms)
	if diff := cmp.Diff([]string{"node-a", "node-b", "node-c"}, d.Machines); diff != "" {
		t.Fatal(diff)
	}
	got := map[string][]string{}
	for _, r := range d.Differences() {
		got[r.Fact] = r.Values
	}
	want := map[string][]string{
		"torch":                    {"2.11.0+cu128", "2.9.1+cu126", "2.11.0+cu128"},
		"torch cuda":               {"12.8", "12.6", "12.8"},
		"torch archs":              {"sm_75 sm_80 sm_86 sm_90 sm_100 sm_120", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"},
		"package torch":            {"2.11.0+cu128", "2.9.1+cu126", "2.11.0+cu128"},
		"package fla-core":         {"0.4.1", "", "0.4.1"},
		"nvcc":                     {"", "", "12.8.93"},
		"nvcc (CUDA_HOME)":         {"", "", "12.8.93"},
		"finding no-cuda-compiler": {"error", "error", ""},
		// torch 2.9.1+cu126 has no code for the seed's compute capability 12.0 GPUs.
		"finding torch-arch-unsupported": {"", "error", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
	// Facts that agree are compared too, and shown with --all.
	agree := map[string]string{}
	for _, r := range d.Rows {
		if !r.Differs {
			agree[r.Fact] = r.Values[0]
		}
	}
	for fact, v := range map[string]string{"python": fixture.SeedPython, "os": "ubuntu 24.04", "glibc": "2.39", "package transformers": "5.17.0", "package triton": "3.6.0", "package flash-linear-attention": "0.4.1", "gpu capability": "12.0"} {
		if agree[fact] != v {
			t.Errorf("agreed %s = %q, want %q", fact, agree[fact], v)
		}
	}
	var text bytes.Buffer
	if err := d.Text(&text, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`(?m)^fact +node-a +node-b +node-c$`, `(?m)^package fla-core +0\.4\.1 +- +0\.4\.1$`, `(?m)^finding torch-arch-unsupported +- +error +-$`,
	} {
		if !regexp.MustCompile(line).MatchString(text.String()) {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
	if strings.Contains(text.String(), "package transformers") {
		t.Errorf("text shows a fact that agrees:\n%s", text.String())
	}
	var md bytes.Buffer
	if err := d.Markdown(&md, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| package fla-core | 0.4.1 | - | 0.4.1 |") || !strings.Contains(md.String(), "3 machines, 9 facts differ") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// TestDiffGroupsManyMachines: past six machines each value lists its
// machines, the common one first, so the odd machine out stands out.
func TestDiffGroupsManyMachines(t *testing.T) {
	seed := seedVariant(t, nil)
	var ms []Machine
	for i := range 9 {
		f := *seed
		name := "gpu-" + string(rune('0'+i))
		if i == 7 {
			f.GPU.Driver = &facts.Driver{Version: "550.54.15", From: "/proc/driver/nvidia/version"}
		}
		ms = append(ms, Machine{Name: name, Facts: &f, Findings: diagnose.Run(&f)})
	}
	d := Compare(ms)
	var facts []string
	for _, r := range d.Differences() {
		facts = append(facts, r.Fact)
	}
	// diagnose.Run judges the driver's CUDA (12.4 for 550) from today's KB.
	if diff := cmp.Diff([]string{"driver", "driver cuda", "finding driver-too-old"}, facts); diff != "" {
		t.Fatalf("differences (-want +got):\n%s", diff)
	}
	var text bytes.Buffer
	if err := d.Text(&text, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "driver\n  -                           8  gpu-0, gpu-1, gpu-2, gpu-3, gpu-4, gpu-5, gpu-6, gpu-8\n  550.54.15                   1  gpu-7\n"
	if !strings.Contains(text.String(), want) {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}
}

func TestRemoteReport(t *testing.T) {
	seed := seedVariant(t, nil)
	rs := []remote.Result{
		{Target: "n1", Status: remote.StatusFindings, SentBinary: true, Doctor: &report.Doctor{Schema: facts.Schema, Facts: seed, Findings: diagnose.Run(seed)}},
		{Target: "n2", Status: remote.StatusFailed, Error: "transport failed", StderrTail: "ssh: connect to host n2 port 22: Connection refused\n", ExitCode: 255},
	}
	r := NewReport(rs)
	if got := r.Diff.Machines; len(got) != 1 || got[0] != "n1" {
		t.Errorf("compared %v, want only the target that answered", got)
	}
	var text bytes.Buffer
	if err := r.Text(&text, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"n1      findings  0.0      sent    1 error, 0 warnings", "n2      failed", "  | ssh: connect to host n2 port 22: Connection refused", "no-cuda-compiler"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, text.String())
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Targets) != 2 || back.Targets[0].Doctor == nil {
		t.Errorf("JSON round trip: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{`{}`, `{"schema":"other"}`, `not json`, `[]`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%s) accepted", in)
		}
	}
}

func TestCompareNothing(t *testing.T) {
	d := Compare(nil)
	var b bytes.Buffer
	if err := d.Text(&b, Options{}); err != nil || !strings.Contains(b.String(), "no machines") {
		t.Errorf("%q %v", b.String(), err)
	}
	if r := NewReport([]remote.Result{{Target: "x", Status: remote.StatusFailed}}); len(r.Diff.Machines) != 0 {
		t.Error(r.Diff.Machines)
	}
}
