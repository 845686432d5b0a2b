package report_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	fpmodel "github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/report"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// seedFacts are the facts of the seed container with eight 12.0 GPUs.
func seedFacts(t *testing.T) (*facts.Facts, []finding.Finding) {
	t.Helper()
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	env, _ := source.ParseEnv(fixture.SeedEnv)
	src, err := source.Root(root, env)
	if err != nil {
		t.Fatal(err)
	}
	f := collect.Collect(context.Background(), src, collect.Options{GPUs: fixture.SeedGPUs, ToolVersion: "0.1.0-test"})
	return f, diagnose.Run(f)
}

// seedModels: the seed model falling back on 48 of its 64 layers, and a
// model on its fast path.
var seedModels = []*fpmodel.Report{
	{Model: fixture.SeedModel, NumLayers: 64, FallbackLayers: 48, Judged: true},
	{Model: "org/fast-model", NumLayers: 32, Judged: true},
}

func parseProm(t *testing.T, text string) map[string]*dtoFamily {
	t.Helper()
	old := model.NameValidationScheme
	// Metric and label names must be valid for every Prometheus, not only
	// those accepting UTF-8 names.
	model.NameValidationScheme = model.LegacyValidation
	defer func() { model.NameValidationScheme = old }()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("expfmt: %v\n%s", err, text)
	}
	out := map[string]*dtoFamily{}
	for name, mf := range fams {
		fam := &dtoFamily{typ: mf.GetType().String(), help: mf.GetHelp()}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			fam.samples = append(fam.samples, sample{labels, m.GetGauge().GetValue()})
		}
		out[name] = fam
	}
	return out
}

type sample struct {
	labels map[string]string
	value  float64
}

type dtoFamily struct {
	typ, help string
	samples   []sample
}

func (f *dtoFamily) value(t *testing.T, kv ...string) float64 {
	t.Helper()
next:
	for _, s := range f.samples {
		for i := 0; i+1 < len(kv); i += 2 {
			if s.labels[kv[i]] != kv[i+1] {
				continue next
			}
		}
		return s.value
	}
	t.Fatalf("no sample with %v", kv)
	return 0
}

func TestPrometheusParses(t *testing.T) {
	f, findings := seedFacts(t)
	var b bytes.Buffer
	if err := report.Prometheus(&b, f, findings, seedModels, 1767225600); err != nil {
		t.Fatal(err)
	}
	fams := parseProm(t, b.String())
	for name, fam := range fams {
		if fam.typ != "GAUGE" || fam.help == "" {
			t.Errorf("%s: type %s, help %q", name, fam.typ, fam.help)
		}
	}
	info := fams["fastpath_info"].samples[0].labels
	for k, v := range map[string]string{"torch": fixture.SeedTorch, "torch_cuda": "12.8", "python": fixture.SeedPython, "gpu_capability": "12.0", "gpus": "8", "nvcc": "", "version": "0.1.0-test", "os": "ubuntu 24.04"} {
		if info[k] != v {
			t.Errorf("fastpath_info %s=%q, want %q", k, info[k], v)
		}
	}
	var errs float64
	for _, fd := range findings {
		if fd.Severity == finding.Error {
			errs++
		}
	}
	if got := fams["fastpath_findings"].value(t, "severity", "error"); got != errs || errs == 0 {
		t.Errorf("error findings %v, want %v (>0)", got, errs)
	}
	if got := fams["fastpath_finding"].value(t, "id", "no-cuda-compiler", "severity", "error"); got != 1 {
		t.Errorf("no-cuda-compiler = %v", got)
	}
	if got := fams["fastpath_fast_path_ready"].value(t); got != 0 {
		t.Errorf("ready = %v on a machine with errors", got)
	}
	if got := fams["fastpath_package_info"].value(t, "package", "fla-core"); got != 1 {
		t.Errorf("fla-core = %v", got)
	}
	if _, ok := fams["fastpath_package_info"]; ok {
		for _, s := range fams["fastpath_package_info"].samples {
			if s.labels["package"] == "causal-conv1d" {
				t.Errorf("causal-conv1d is not installed in the seed but has %v", s.labels)
			}
		}
	}
	m := fams["fastpath_model_fallback_layers"]
	if m.value(t, "model", fixture.SeedModel) != 48 || m.value(t, "model", "org/fast-model") != 0 {
		t.Errorf("fallback layers: %+v", m.samples)
	}
	r := fams["fastpath_model_fast_path_ready"]
	if r.value(t, "model", fixture.SeedModel) != 0 || r.value(t, "model", "org/fast-model") != 1 {
		t.Errorf("model readiness: %+v", r.samples)
	}
	if got := fams["fastpath_last_run_timestamp_seconds"].value(t); got != 1767225600 {
		t.Errorf("timestamp %v", got)
	}
}

// TestPrometheusHostileValues: names read from a machine (GPU names,
// versions) carry quotes, backslashes, newlines and broken UTF-8; the file
// still parses and the values survive.
func TestPrometheusHostileValues(t *testing.T) {
	f := &facts.Facts{Schema: facts.Schema, Tool: "x",
		Torch: &facts.Torch{Version: `2.8"0\` + "\n+x"},
		GPU:   facts.GPU{Devices: []facts.Device{{Name: "bad\xff\xfename", Capability: "9.0"}}}}
	findings := []finding.Finding{{ID: "a", Severity: finding.Warning}, {ID: "a", Severity: finding.Warning}, {ID: "b", Severity: finding.Info}}
	var b bytes.Buffer
	if err := report.Prometheus(&b, f, findings, nil, 0); err != nil {
		t.Fatal(err)
	}
	fams := parseProm(t, b.String())
	info := fams["fastpath_info"].samples[0].labels
	if info["torch"] != f.Torch.Version || info["gpu"] != "bad\uFFFDname" {
		t.Errorf("labels %q", info)
	}
	if got := fams["fastpath_finding"].value(t, "id", "a"); got != 2 {
		t.Errorf("a repeated finding is one series counting 2, got %v", got)
	}
	if fams["fastpath_fast_path_ready"].value(t) != 1 {
		t.Error("no error: ready")
	}
	if _, ok := fams["fastpath_model_fallback_layers"]; ok {
		t.Error("model metrics without models")
	}
}

func nfdLabels(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		// Kubernetes' own label validation (k8s.io/apimachinery), as the API
		// server applies it to the labels nfd-master publishes.
		if !ok || !strings.HasPrefix(name, report.NFDPrefix) {
			t.Errorf("invalid feature line %q", line)
		}
		for _, e := range append(validation.IsQualifiedName(name), validation.IsValidLabelValue(value)...) {
			t.Errorf("feature line %q: %s", line, e)
		}
		if _, dup := out[name]; dup {
			t.Errorf("label %s twice", name)
		}
		out[name] = value
	}
	return out
}

func TestNFD(t *testing.T) {
	f, findings := seedFacts(t)
	var b bytes.Buffer
	if err := report.NFD(&b, f, findings, seedModels); err != nil {
		t.Fatal(err)
	}
	got := nfdLabels(t, b.String())
	for name, want := range map[string]string{
		"fast-path-ready":          "false",
		"torch":                    "2.11.0-cu128",
		"torch-cuda":               "12.8",
		"gpu-capability":           "12.0",
		"gpus":                     "8",
		"python":                   fixture.SeedPython,
		"pkg.fla-core":             "0.4.1",
		"pkg.transformers":         "5.17.0",
		"finding.no-cuda-compiler": "error",
		"model.Qwen-Qwen3.5-27B":   "false",
		"model.org-fast-model":     "true",
		"version":                  "0.1.0-test",
	} {
		if got["fastpath.io/"+name] != want {
			t.Errorf("fastpath.io/%s=%q, want %q", name, got["fastpath.io/"+name], want)
		}
	}
	for _, absent := range []string{"nvcc", "driver", "pkg.causal-conv1d"} {
		if v, ok := got["fastpath.io/"+absent]; ok {
			t.Errorf("fastpath.io/%s=%q for an unknown or absent fact", absent, v)
		}
	}
}

func TestLabelValue(t *testing.T) {
	long := strings.Repeat("a", 70)
	for in, want := range map[string]string{
		"2.8.0+cu128":       "2.8.0-cu128",
		"NVIDIA H200":       "NVIDIA-H200",
		"12.0,9.0":          "12.0-9.0",
		"+local":            "local",
		"-._":               "",
		long:                long[:63],
		"a" + long + "-end": "a" + long[:62],
		"ünïcode":           "n-code",
	} {
		if got := report.LabelValue(in); got != want {
			t.Errorf("LabelValue(%q) = %q, want %q", in, got, want)
		}
	}
	var b bytes.Buffer
	hostile := &facts.Facts{Tool: "x", Torch: &facts.Torch{Version: "+++"}, GPU: facts.GPU{Devices: []facts.Device{{Name: "A\nB=C", Capability: "9.0"}}}}
	if err := report.NFD(&b, hostile, nil, []*fpmodel.Report{{Model: "../../" + long}}); err != nil {
		t.Fatal(err)
	}
	got := nfdLabels(t, b.String())
	if _, ok := got["fastpath.io/torch"]; ok {
		t.Errorf("a version with nothing label-safe got a label: %q", got)
	}
	if got["fastpath.io/gpu"] != "A-B-C" {
		t.Errorf("gpu label %q", got["fastpath.io/gpu"])
	}
}

// TestPrometheusPromtool runs Prometheus' own checker, `promtool check
// metrics` (Debian's prometheus package; .ci/run installs it), on the
// seed's metrics and on hostile values: no error and no lint warning.
func TestPrometheusPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found (apt-get install prometheus): the metrics are still checked by expfmt's parser")
	}
	// The oracle lints: a counter without _total is a warning.
	lint := exec.Command(promtool, "check", "metrics")
	lint.Stdin = strings.NewReader("# HELP foo_count x\n# TYPE foo_count counter\nfoo_count 1\n")
	if out, err := lint.CombinedOutput(); err == nil || !bytes.Contains(out, []byte("_total")) {
		t.Fatalf("promtool did not lint a bad counter: %v %q", err, out)
	}
	f, findings := seedFacts(t)
	hostile := &facts.Facts{Schema: facts.Schema, Tool: "x",
		Torch: &facts.Torch{Version: `2.8"0\` + "\n+x"},
		GPU:   facts.GPU{Devices: []facts.Device{{Name: "bad\xff\xfename", Capability: "9.0"}}}}
	for name, in := range map[string]struct {
		f        *facts.Facts
		findings []finding.Finding
		models   []*fpmodel.Report
	}{
		"seed":    {f, findings, seedModels},
		"hostile": {hostile, []finding.Finding{{ID: "a", Severity: finding.Warning}, {ID: "a", Severity: finding.Warning}}, []*fpmodel.Report{{Model: "a\"b\\c\nd"}}},
	} {
		var b bytes.Buffer
		if err := report.Prometheus(&b, in.f, in.findings, in.models, 1767225600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = &b
		out, err := cmd.CombinedOutput()
		t.Logf("%s: promtool check metrics: %v, output %q", name, err, out)
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("%s: promtool check metrics: %v\n%s", name, err, out)
		}
	}
}
