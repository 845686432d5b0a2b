package live

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/render"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// TestProbeWithoutTorch runs the real probe with this machine's python3,
// which has no torch: the probe must say so and still try every package.
func TestProbeWithoutTorch(t *testing.T) {
	py := testenv.Python3(t)
	if exec.Command(py, "-c", "import torch").Run() == nil {
		t.Skip("python3 here has torch; this test is about its absence")
	}
	r := &Runner{Python: py, Timeout: 30 * time.Second}
	args := KBProbeArgs([]string{"qwen3_5"})
	args.Packages = append(args.Packages, ProbePackage{Name: "stdlib-json", Import: "json"})
	lf, err := r.Probe(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if lf.Torch.OK || !strings.Contains(lf.Torch.Error, "No module named 'torch'") {
		t.Errorf("torch = %+v, want a failed import quoting ModuleNotFoundError", lf.Torch)
	}
	if len(lf.Packages) != len(args.Packages) {
		t.Fatalf("%d packages reported, want %d", len(lf.Packages), len(args.Packages))
	}
	byImport := map[string]bool{}
	for _, p := range lf.Packages {
		byImport[p.Import] = p.OK
		if !p.OK && (p.ErrorType == "" || p.Error == "") {
			t.Errorf("%s: failed import without its exception: %+v", p.Import, p)
		}
	}
	if !byImport["json"] || byImport["causal_conv1d"] {
		t.Errorf("imports = %v, want json ok and causal_conv1d failed", byImport)
	}
	if lf.Python.Executable == "" || lf.Python.Version == "" {
		t.Errorf("python = %+v", lf.Python)
	}
	if m, ok := lf.Models["qwen3_5"]; !ok || (m.Error == "" && !lf.Transformers.OK) {
		t.Errorf("models = %+v: want qwen3_5 with why it could not be resolved", lf.Models)
	}
}

// fakePython writes a shell script standing in for an interpreter.
func fakePython(t *testing.T, body string) string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	p := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeFailures: an interpreter that hangs, crashes or prints junk
// gives an error naming what happened, within the timeout.
func TestProbeFailures(t *testing.T) {
	cases := []struct {
		name, body string
		timeout    time.Duration
		want       []string // in the error
	}{
		{"hangs", "echo started >&2\nsleep 600", 300 * time.Millisecond, []string{"did not finish within 300ms", "started"}},
		{"hangs with a child holding stdout", "sleep 600 &\nsleep 600", 300 * time.Millisecond, []string{"did not finish"}},
		{"crashes", "echo 'Traceback (most recent call last):' >&2\necho '  File \"probe.py\", line 1' >&2\necho 'SystemError: boom' >&2\nexit 1",
			5 * time.Second, []string{"exit status 1", "printed nothing on stdout", "SystemError: boom"}},
		{"prints junk", "echo 'Segmentation fault?'\nhead -c 300 /dev/zero | tr '\\0' x", 5 * time.Second, []string{"printed no JSON object", "Segmentation fault?"}},
		{"prints someone else's JSON", `echo '{"hello": 1}'`, 5 * time.Second, []string{`no "probe" version`}},
		{"prints a JSON list", `echo '[1,2]'`, 5 * time.Second, []string{"printed no JSON object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runner{Python: fakePython(t, tc.body), Timeout: tc.timeout}
			lf, err := r.Probe(context.Background(), KBProbeArgs(nil))
			if err == nil {
				t.Fatalf("no error; got %+v", lf)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestProbeNoiseBeforeJSON: libraries that print on stdout before the
// answer do not hide it; a non-zero exit after an answer is kept as an error.
func TestProbeNoiseBeforeJSON(t *testing.T) {
	r := &Runner{Python: fakePython(t, `echo 'Triton banner'
echo '{"probe": 1, "torch": {"ok": false, "error": "ImportError: libcudart.so.13: cannot open shared object file"}}'
exit 3`)}
	lf, err := r.Probe(context.Background(), KBProbeArgs(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lf.Torch.Error, "libcudart.so.13") {
		t.Errorf("torch error = %q", lf.Torch.Error)
	}
	if len(lf.Errors) != 1 || !strings.Contains(lf.Errors[0], "status 3") {
		t.Errorf("errors = %q, want the exit status", lf.Errors)
	}
}

// TestOutputIsBounded: a script printing without end is cut at MaxOutput.
func TestOutputIsBounded(t *testing.T) {
	r := &Runner{Python: fakePython(t, "head -c 6000000 /dev/zero | tr '\\0' x"), Timeout: 20 * time.Second}
	res, err := r.Run(context.Background(), "probe.py", ProbeScript, "{}")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != MaxOutput || !res.Truncated {
		t.Errorf("kept %d bytes, truncated=%v; want %d, true", len(res.Stdout), res.Truncated, MaxOutput)
	}
}

func TestNoInterpreter(t *testing.T) {
	if _, err := (&Runner{}).Probe(context.Background(), KBProbeArgs(nil)); err == nil {
		t.Error("no error without an interpreter")
	}
	r := &Runner{Python: filepath.Join(t.TempDir(), "missing-python")}
	if _, err := r.Probe(context.Background(), KBProbeArgs(nil)); err == nil || !strings.Contains(err.Error(), "missing-python") {
		t.Errorf("err = %v, want one naming the interpreter", err)
	}
}

// TestScriptsCompile: the embedded scripts are valid Python for this
// machine's python3 and, where pyenv has it, the oldest supported 3.8.
func TestScriptsCompile(t *testing.T) {
	pys := []string{testenv.Python3(t)}
	if home, err := os.UserHomeDir(); err == nil {
		if m, _ := filepath.Glob(filepath.Join(home, ".pyenv/versions/3.8*/bin/python3")); len(m) > 0 {
			pys = append(pys, m[0])
		}
	}
	dir := t.TempDir()
	for name, script := range map[string]string{"probe.py": ProbeScript, "bench.py": BenchScript} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, py := range pys {
			cmd := exec.Command(py, "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])", p)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s does not parse with %s: %v\n%s", name, py, err, out)
			}
		}
		if out, err := exec.Command(pys[0], "-m", "py_compile", p).CombinedOutput(); err != nil {
			t.Errorf("py_compile %s: %v\n%s", name, err, out)
		}
	}
}

// TestBenchWithoutTorch runs the real bench.py here: no torch, so it must
// say so in its JSON, after reading the model's shapes.
func TestBenchWithoutTorch(t *testing.T) {
	py := testenv.Python3(t)
	if exec.Command(py, "-c", "import torch").Run() == nil {
		t.Skip("python3 here has torch")
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"model_type": "qwen3_next", "hidden_size": 2048, "num_hidden_layers": 48,
		"linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
		"linear_conv_kernel_dim": 4, "full_attention_interval": 4}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	r := &Runner{Python: py, Timeout: 30 * time.Second, Stderr: &progress}
	b, err := r.Bench(context.Background(), BenchArgs{Config: cfg, Batches: []int{1}, SeqLens: []int{2048}, DType: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	if b.ModelType != "qwen3_next" || b.Layers["linear_attention"] != 36 || b.Shapes["conv_dim"] != 2*16*128+32*128 {
		t.Errorf("model_type %q, layers %v, shapes %v", b.ModelType, b.Layers, b.Shapes)
	}
	if len(b.Errors) == 0 || !strings.Contains(b.Errors[0], "torch not importable") {
		t.Errorf("errors = %q, want torch not importable", b.Errors)
	}
	var out bytes.Buffer
	if err := Render(&out, b, render.Options{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "torch not importable") {
		t.Errorf("render does not say why nothing was timed:\n%s", out.String())
	}
}
