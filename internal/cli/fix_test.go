package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// writeWheel writes a pure-Python wheel the way a build backend does: the
// package, and dist-info with METADATA, WHEEL and a RECORD of sha256 hashes.
func writeWheel(t *testing.T, dir, name, version string, files map[string]string) string {
	t.Helper()
	dist := strings.ReplaceAll(name, "-", "_")
	file := filepath.Join(dir, fmt.Sprintf("%s-%s-py3-none-any.whl", dist, version))
	info := fmt.Sprintf("%s-%s.dist-info", dist, version)
	all := map[string]string{
		info + "/METADATA": fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: a stand-in built by fastpath's tests\n", name, version),
		info + "/WHEEL":    "Wheel-Version: 1.0\nGenerator: fastpath-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	for k, v := range files {
		all[k] = v
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, p := range sortedKeys(all) {
		w, err := zw.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, all[p])
		sum := sha256.Sum256([]byte(all[p]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(all[p]))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", info)
	w, _ := zw.Create(info + "/RECORD")
	io.WriteString(w, record.String())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pep503 serves the wheels in dir as a PEP 503 simple index on loopback.
func pep503(t *testing.T, dir string) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/", func(w http.ResponseWriter, r *http.Request) {
		project := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
		entries, _ := os.ReadDir(dir)
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html><body>\n")
		n := 0
		for _, e := range entries {
			if strings.HasPrefix(strings.ReplaceAll(strings.ToLower(e.Name()), "_", "-"), project+"-") {
				data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				fmt.Fprintf(&b, "<a href=\"/files/%s#sha256=%x\">%s</a><br/>\n", e.Name(), sha256.Sum256(data), e.Name())
				n++
			}
		}
		if n == 0 {
			http.NotFound(w, r)
			return
		}
		b.WriteString("</body></html>\n")
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, b.String())
	})
	mux.Handle("/files/", http.StripPrefix("/files/", http.FileServer(http.Dir(dir))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// lfm2Config is a small LFM2 config: its conv layers need causal-conv1d
// and nothing else.
const lfm2Config = `{"model_type": "lfm2", "num_hidden_layers": 4, "hidden_size": 64,
  "layer_types": ["conv", "conv", "full_attention", "conv"], "transformers_version": "5.17.0"}`

// kernelVenv is a real venv made with this machine's python3 whose only
// problem is a missing kernel package: a torch stand-in with CUDA, a
// toolkit builds find, gcc, ninja, and an LFM2 model config.
type kernelVenv struct {
	python, site, cfg string
	env               []string
}

func newKernelVenv(t *testing.T) kernelVenv {
	t.Helper()
	if testing.Short() {
		// python -m venv runs ensurepip: 10 to 70 s per test on a loaded
		// 2-core machine. The full run (CI's second step) keeps these.
		t.Skip("builds a real venv with pip: not under -short")
	}
	py3 := testenv.Python3(t)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	testenv.Run(t, nil, py3, "-m", "venv", venv)
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages of %s: %v", venv, sites)
	}
	tag := "cp3" + strings.TrimPrefix(filepath.Base(filepath.Dir(sites[0])), "python3.")
	// The fixture writes below a root; the venv is a real host path.
	host := fixture.New("/")
	host.Torch(sites[0], "2.11.0+cu128", "12.8", tag)
	host.Toolkit(filepath.Join(dir, "cuda-12.8"), "12.8.93")
	host.Dist(sites[0], fixture.Dist{Name: "transformers", Version: "5.17.0"})
	cfg := filepath.Join(dir, "lfm2", "config.json")
	host.File(cfg, lfm2Config)
	// ninja is only looked up on PATH, never run: a stand-in keeps CI
	// machines without ninja from adding missing-ninja.
	host.Exec(filepath.Join(dir, "bin", "ninja"), "#!/bin/sh\necho 1.13.0\n")
	if err := host.Err(); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + filepath.Join(venv, "bin") + ":" + filepath.Join(dir, "bin") + ":/usr/local/bin:/usr/bin:/bin",
		"CUDA_HOME=" + filepath.Join(dir, "cuda-12.8"), "CUDA_PATH=", "CONDA_PREFIX=", "VIRTUAL_ENV=" + venv,
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1"}
	return kernelVenv{python: filepath.Join(venv, "bin", "python3"), site: sites[0], cfg: cfg, env: env}
}

func (k kernelVenv) source() SourceFlags {
	return SourceFlags{Python: k.python, GPUs: []string{"9.0"}, Env: k.env}
}

func findingIDs(t *testing.T, k kernelVenv) []finding.ID {
	t.Helper()
	var out, errb bytes.Buffer
	o := &DoctorOptions{Output: Output{JSON: true}, Source: k.source(), Models: []string{k.cfg}}
	if err := RunDoctor(context.Background(), o, &IO{Out: &out, Err: &errb}); err != nil {
		if _, ok := err.(findingsError); !ok {
			t.Fatalf("doctor: %v\n%s", err, errb.String())
		}
	}
	var doc struct {
		Findings []finding.Finding `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var ids []finding.ID
	for _, f := range doc.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

// TestFixApplyInstallsKernelPackage: a real `fix --apply` installs a
// kernel package (a stand-in wheel built here) from a loopback PEP 503
// index into a real venv; the fast-path-fallback finding goes away and the
// before/after says so.
func TestFixApplyInstallsKernelPackage(t *testing.T) {
	k := newKernelVenv(t)
	if ids := findingIDs(t, k); len(ids) != 1 || ids[0] != finding.FastPathFallback {
		t.Fatalf("the venv must have exactly one problem, fast-path-fallback; doctor says %v", ids)
	}
	wheels := t.TempDir()
	writeWheel(t, wheels, "causal-conv1d", "1.7.0", map[string]string{
		"causal_conv1d/__init__.py": "__version__ = '1.7.0'\n\ndef causal_conv1d_fn(*a, **k):\n    raise NotImplementedError('stand-in')\n\ncausal_conv1d_update = causal_conv1d_fn\n",
	})
	idx := pep503(t, wheels)

	var out, errb bytes.Buffer
	o := &FixOptions{Apply: true, Yes: true, Plan: PlanOptions{Source: k.source(), Models: []string{k.cfg},
		IndexURLs: []string{idx.URL + "/simple"}, githubAPI: "http://127.0.0.1:1"}}
	err := RunFix(context.Background(), o, &IO{Out: &out, Err: &errb})
	if err != nil {
		t.Fatalf("fix --apply: %v\n%s\n%s", err, out.String(), errb.String())
	}
	text := out.String()
	for _, want := range []string{
		"fix --apply will run 1 step:",
		"==> fast-path-fallback: Install the prebuilt wheel causal_conv1d-1.7.0-py3-none-any.whl from index " + idx.URL + "/simple",
		"Successfully installed causal-conv1d-1.7.0",
		"doctor before -> after: 1 finding -> 0 findings",
		"gone:     fast-path-fallback",
		"remain:   (none)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(k.site, "causal_conv1d-1.7.0.dist-info", "RECORD")); len(m) != 1 {
		t.Error("causal-conv1d is not installed in the venv")
	}
	if ids := findingIDs(t, k); len(ids) != 0 {
		t.Errorf("doctor still finds %v", ids)
	}
}

// TestFixApplyStopsAtFailure: the index has no such package, so pip fails;
// the run stops there with pip's own message, and doctor's after shows the
// finding remains.
func TestFixApplyStopsAtFailure(t *testing.T) {
	k := newKernelVenv(t)
	wheels := t.TempDir()
	// The index serves a truncated wheel: pip refuses it.
	name := filepath.Base(writeWheel(t, wheels, "causal-conv1d", "1.7.0", map[string]string{"causal_conv1d/__init__.py": ""}))
	idx := pep503(t, wheels)
	data, _ := os.ReadFile(filepath.Join(wheels, name))
	os.WriteFile(filepath.Join(wheels, name), data[:len(data)/2], 0o644)

	var out, errb bytes.Buffer
	o := &FixOptions{Apply: true, Yes: true, Plan: PlanOptions{Source: k.source(), Models: []string{k.cfg},
		IndexURLs: []string{idx.URL + "/simple"}, githubAPI: "http://127.0.0.1:1"}}
	err := RunFix(context.Background(), o, &IO{Out: &out, Err: &errb})
	if err == nil || !strings.Contains(err.Error(), "step causal-conv1d/wheel-index failed") {
		t.Fatalf("want the step's failure, got %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"FAILED: step \"Install the prebuilt wheel", "its output (end):", "ERROR: Wheel 'causal-conv1d' located at", "is invalid", "remain:   fast-path-fallback"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(k.site, "causal_conv1d-*.dist-info")); len(m) != 0 {
		t.Errorf("installed anyway: %v", m)
	}
}

// TestFixRefuses: never under --root or --facts; never without --yes when
// stdin is not a terminal; nothing changes without --apply.
func TestFixRefuses(t *testing.T) {
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	src := SourceFlags{Root: root, GPUs: fixture.SeedGPUs, Env: fixture.SeedEnv}
	var out bytes.Buffer
	err := RunFix(context.Background(), &FixOptions{Apply: true, Yes: true, Plan: PlanOptions{Source: src, Offline: true}}, &IO{Out: &out})
	if _, ok := err.(*UsageError); !ok || !strings.Contains(err.Error(), "not with --root, --image or --facts") {
		t.Errorf("--root: %v", err)
	}
	out.Reset()
	if err := RunFix(context.Background(), &FixOptions{Plan: PlanOptions{Source: src, Offline: true, Models: []string{fixture.SeedModel}}}, &IO{Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Nothing was changed.") || !strings.Contains(out.String(), "causal-conv1d/wheel-github") {
		t.Errorf("fix without --apply:\n%s", out.String())
	}

	k := newKernelVenv(t)
	before, _ := filepath.Glob(filepath.Join(k.site, "*"))
	out.Reset()
	o := &FixOptions{Apply: true, Plan: PlanOptions{Source: k.source(), Models: []string{k.cfg}, Offline: true}}
	err = RunFix(context.Background(), o, &IO{Out: &out, In: strings.NewReader("y\n")})
	if err == nil || !strings.Contains(err.Error(), "refusing to change anything without --yes: stdin is not a terminal") {
		t.Errorf("no terminal: %v", err)
	}
	// A terminal that answers no.
	o.stdinIsTerminal = func(io.Reader) bool { return true }
	out.Reset()
	if err := RunFix(context.Background(), o, &IO{Out: &out, In: strings.NewReader("n\n")}); err != nil || !strings.Contains(out.String(), "Run them? [y/N] Nothing was changed.") {
		t.Errorf("answered no: %v\n%s", err, out.String())
	}
	after, _ := filepath.Glob(filepath.Join(k.site, "*"))
	if len(after) != len(before) {
		t.Errorf("site-packages changed: %d -> %d entries", len(before), len(after))
	}
}
