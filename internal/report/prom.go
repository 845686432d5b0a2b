package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/safetext"
)

// Prometheus writes the diagnosis in Prometheus' text exposition format,
// for node_exporter's textfile collector (a *.prom file it reads on every
// scrape). Every metric is a gauge: a file describes the machine as of
// the last doctor run, which fastpath_last_run_timestamp_seconds dates.
// nowUnix is that time.
func Prometheus(w io.Writer, f *facts.Facts, findings []finding.Finding, models []*model.Report, nowUnix int64) error {
	ew := &errWriter{w: w}
	head := func(name, help string) {
		ew.printf("# HELP %s %s\n# TYPE %s gauge\n", name, promHelp(help), name)
	}
	head("fastpath_info", "What fastpath saw on this machine; the value is always 1.")
	ew.printf("fastpath_info%s 1\n", promLabels(infoLabels(f)))

	head("fastpath_finding", "Findings of fastpath doctor on this machine, by id and severity (the value counts occurrences).")
	type key struct{ id, sev string }
	counts := map[key]int{}
	var keys []key
	for _, fd := range findings {
		k := key{string(fd.ID), string(fd.Severity)}
		if counts[k] == 0 {
			keys = append(keys, k)
		}
		counts[k]++
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].id != keys[j].id {
			return keys[i].id < keys[j].id
		}
		return keys[i].sev < keys[j].sev
	})
	for _, k := range keys {
		ew.printf("fastpath_finding%s %d\n", promLabels([][2]string{{"id", k.id}, {"severity", k.sev}}), counts[k])
	}

	head("fastpath_findings", "Number of findings of fastpath doctor on this machine, by severity.")
	bySev := map[finding.Severity]int{}
	for _, fd := range findings {
		bySev[fd.Severity]++
	}
	for _, s := range []finding.Severity{finding.Error, finding.Warning, finding.Info} {
		ew.printf("fastpath_findings%s %d\n", promLabels([][2]string{{"severity", string(s)}}), bySev[s])
	}

	head("fastpath_fast_path_ready", "1 when doctor found no error on this machine (and every model given runs its fast path), else 0.")
	ready := bySev[finding.Error] == 0
	ew.printf("fastpath_fast_path_ready %d\n", b2i(ready))

	head("fastpath_package_info", "Versions of torch and the kernel packages in the diagnosed Python environment; the value is always 1.")
	for _, p := range packageRows(f) {
		ew.printf("fastpath_package_info%s 1\n", promLabels([][2]string{{"package", p[0]}, {"version", p[1]}}))
	}

	if len(models) > 0 {
		head("fastpath_model_fast_path_ready", "1 when the model loads and every kernel-dependent layer runs its fast kernel here, else 0.")
		for _, m := range models {
			ew.printf("fastpath_model_fast_path_ready%s %d\n", promLabels([][2]string{{"model", m.Model}}), b2i(ModelReady(m)))
		}
		head("fastpath_model_fallback_layers", "Layers of the model that run the slow torch fallback here.")
		for _, m := range models {
			ew.printf("fastpath_model_fallback_layers%s %d\n", promLabels([][2]string{{"model", m.Model}}), m.FallbackLayers)
		}
		head("fastpath_model_layers", "Layers of the model.")
		for _, m := range models {
			ew.printf("fastpath_model_layers%s %d\n", promLabels([][2]string{{"model", m.Model}}), m.NumLayers)
		}
	}
	head("fastpath_last_run_timestamp_seconds", "When fastpath doctor wrote this file (Unix time).")
	ew.printf("fastpath_last_run_timestamp_seconds %d\n", nowUnix)
	return ew.err
}

// ModelReady: every layer was judged, the model loads and none of its
// layers falls back to torch (a model fastpath could not judge is not ready).
func ModelReady(m *model.Report) bool {
	return m.Judged && m.FallbackLayers == 0 && m.WillNotLoad == ""
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// infoLabels are the machine's identity facts, "" where unknown.
func infoLabels(f *facts.Facts) [][2]string {
	var torch, torchCUDA, driver, driverCUDA, python, gpu, capability string
	if f.Torch != nil {
		torch, torchCUDA = f.Torch.Version, f.Torch.CUDA
	}
	if f.GPU.Driver != nil {
		driver, driverCUDA = f.GPU.Driver.Version, f.GPU.Driver.CUDA
	}
	if f.Python.Selected != nil {
		python = f.Python.Selected.Version
	}
	var names, caps []string
	for _, d := range f.GPU.Devices {
		names = appendNew(names, d.Name)
		caps = appendNew(caps, d.Capability)
	}
	gpu, capability = strings.Join(names, ","), strings.Join(caps, ",")
	var nvcc []string
	for _, c := range f.CUDA.Compilers {
		nvcc = appendNew(nvcc, c.Version)
	}
	return [][2]string{
		{"version", f.Tool}, {"os", strings.TrimSpace(f.OS.ID + " " + f.OS.VersionID)}, {"python", python},
		{"torch", torch}, {"torch_cuda", torchCUDA}, {"driver", driver}, {"driver_cuda", driverCUDA},
		{"nvcc", strings.Join(nvcc, ",")}, {"gpu", gpu}, {"gpu_capability", capability}, {"gpus", fmt.Sprint(len(f.GPU.Devices))},
	}
}

// kernelPackages are the distributions whose versions the cluster outputs
// carry: torch and the packages that decide fast paths (PEP 503 names; the
// KB's packages.json, entries with "metrics").
var kernelPackages = sync.OnceValue(kb.MetricPackages) // on first use: an init costs every start

// packageRows are the kernel packages installed in the selected environment.
func packageRows(f *facts.Facts) [][2]string {
	if f.Python.Selected == nil {
		return nil
	}
	have := map[string]string{}
	for _, d := range f.Python.Selected.Distributions {
		n := normalizeName(d.Name)
		if _, seen := have[n]; !seen && !d.Shadowed {
			have[n] = d.Version
		}
	}
	var out [][2]string
	for _, p := range kernelPackages() {
		if v, ok := have[p]; ok {
			out = append(out, [2]string{p, v})
		}
	}
	return out
}

func normalizeName(s string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(s) {
		if r == '-' || r == '_' || r == '.' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	return b.String()
}

func appendNew(ss []string, s string) []string {
	if s == "" {
		return ss
	}
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

// promLabels renders {k="v",...}, escaping values as the format requires.
func promLabels(kv [][2]string) string {
	if len(kv) == 0 {
		return ""
	}
	parts := make([]string, len(kv))
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	for i, p := range kv {
		// safetext.Clean: a label value from a root must not carry a
		// terminal escape (F9); its \u001b form is then escaped as text.
		parts[i] = p[0] + `="` + r.Replace(safetext.Clean(strings.ToValidUTF8(p[1], "\uFFFD"))) + `"`
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// promHelp escapes a HELP text (backslash and newline only).
func promHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(safetext.Clean(s))
}
