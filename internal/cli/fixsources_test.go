package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/explain"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// fixSource is one fix fastpath printed: where, and its commands.
type fixSource struct {
	from     string
	commands []string
	// python and kind are the environment's interpreter and kind (venv,
	// uv, conda) where the fix is for a known one; "" for a log's.
	python, kind string
	// installed are the environment's distributions (canonical names);
	// nil for a log's environment, which is not known.
	installed map[string]string
	known     bool
}

// distsOf are an environment's distributions: canonical name -> version.
func distsOf(f *facts.Facts) map[string]string {
	out := map[string]string{}
	if f == nil || f.Python.Selected == nil {
		return out
	}
	for _, d := range f.Python.Selected.Distributions {
		if !d.Shadowed {
			out[canonical(d.Name)] = d.Version
		}
	}
	return out
}

// seedArgs are the source flags of the seed container written at root.
func seedArgs(root string) []string {
	args := []string{"--root", root}
	for _, e := range fixture.SeedEnv {
		args = append(args, "--env", e)
	}
	return args
}

// factVariant is a change to the seed's facts: another torch, another kind
// of environment, no torch.
type factVariant struct {
	name   string
	change func(f *facts.Facts)
}

// setTorch changes torch's version in the facts and in the environment's
// distributions alike.
func setTorch(f *facts.Facts, version, cuda string) {
	f.Torch.Version, f.Torch.CUDA = version, cuda
	for i, d := range f.Python.Selected.Distributions {
		if d.Name == "torch" {
			f.Python.Selected.Distributions[i].Version = version
		}
	}
}

var factVariants = []factVariant{
	{"seed", func(f *facts.Facts) {}},
	{"H200 cu130", func(f *facts.Facts) {
		setTorch(f, "2.11.0+cu130", "13.0")
		f.GPU.Devices = f.GPU.Devices[:1]
		f.GPU.Devices[0].Capability, f.GPU.Devices[0].Name = "9.0", "NVIDIA H200"
	}},
	{"A100 torch 2.4.0+cu121", func(f *facts.Facts) {
		setTorch(f, "2.4.0+cu121", "12.1")
		f.GPU.Devices = f.GPU.Devices[:1]
		f.GPU.Devices[0].Capability, f.GPU.Devices[0].Name = "8.0", "NVIDIA A100-SXM4-80GB"
	}},
	{"no torch", func(f *facts.Facts) {
		f.Torch = nil
		py := f.Python.Selected
		var ds []facts.Distribution
		for _, d := range py.Distributions {
			if d.Name != "torch" {
				ds = append(ds, d)
			}
		}
		py.Distributions = ds
	}},
	{"uv venv without pip", func(f *facts.Facts) {
		py := f.Python.Selected
		py.Kind = "uv"
		var ds []facts.Distribution
		for _, d := range py.Distributions {
			if !strings.EqualFold(d.Name, "pip") {
				ds = append(ds, d)
			}
		}
		py.Distributions = ds
	}},
	{"conda", func(f *facts.Facts) {
		py := f.Python.Selected
		py.Kind, py.Prefix, py.Interpreter = "conda", "/opt/conda/envs/work", "/opt/conda/envs/work/bin/python3.12"
	}},
	{"torch 2.4.0 CPU-only", func(f *facts.Facts) {
		setTorch(f, "2.4.0+cpu", "")
	}},
	{"torch 2.4.0+cu124, driver 535", func(f *facts.Facts) {
		setTorch(f, "2.4.0+cu124", "12.4")
		f.GPU.Driver = &facts.Driver{Version: "535.104.05", CUDA: "12.2", From: "nvidia-smi"}
	}},
	{"conda-installed CPU-only torch", func(f *facts.Facts) {
		py := f.Python.Selected
		py.Kind, py.Prefix, py.Interpreter = "conda", "/opt/conda/envs/work", "/opt/conda/envs/work/bin/python3.12"
		setTorch(f, "2.4.0", "")
		for i, d := range py.Distributions {
			if d.Name == "torch" {
				py.Distributions[i].Installer = "conda"
			}
		}
	}},
	{"g++ 15", func(f *facts.Facts) {
		if f.Toolchain.GXX != nil {
			f.Toolchain.GXX.Version = "15.1.0"
		}
	}},
}

// seedPython is the seed container's interpreter.
const seedPython = "/root/venv/bin/python3"

// fixCommandSources runs explain over every log of the corpus (without
// facts and with the seed's) and doctor and plan --offline over the seed
// container (with its model, for four GPUs) and over variants of its facts,
// and returns every fix they print.
func fixCommandSources(t *testing.T) []fixSource {
	t.Helper()
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	var out []fixSource
	var seedTree []int // the tree's fixes: its environment is the seed facts'
	// doctor and plan on the tree, for the seed's GPUs and three others.
	for _, gpu := range []string{"12.0", "9.0", "8.0", "10.0"} {
		args := append(seedArgs(root), "--gpu", gpu, "--model", fixture.SeedModel)
		for _, fx := range append(commandsOf("doctor --gpu "+gpu, runJSON(t, append([]string{"doctor"}, args...)...)),
			commandsOf("plan --gpu "+gpu, runJSON(t, append([]string{"plan", "--offline", "--json"}, args...)...))...) {
			fx.python, fx.kind = seedPython, "venv"
			seedTree = append(seedTree, len(out))
			out = append(out, fx)
		}
	}
	// The seed's facts and variants of them.
	raw := runJSON(t, append([]string{"facts"}, append(seedArgs(root), "--gpu", "12.0")...)...)
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	// The seed's model config, read from the tree (--facts reads no root).
	models, _ := filepath.Glob(filepath.Join(root, "root/.cache/huggingface/hub/models--Qwen--Qwen3.5-27B/snapshots/*"))
	if len(models) != 1 {
		t.Fatalf("the seed's model config: %v", models)
	}
	model := models[0]
	var seedFacts *facts.Facts
	for _, v := range factVariants {
		var f facts.Facts
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		v.change(&f)
		if v.name == "seed" {
			seedFacts = &f
		}
		fb, _ := json.Marshal(&f)
		file := filepath.Join(t.TempDir(), "facts.json")
		if err := os.WriteFile(file, fb, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, fx := range append(commandsOf("doctor facts "+v.name, runJSON(t, "doctor", "--facts", file, "--model", model)),
			commandsOf("plan facts "+v.name, runJSON(t, "plan", "--offline", "--json", "--facts", file, "--model", model))...) {
			fx.python, fx.kind = f.Python.Selected.Interpreter, f.Python.Selected.Kind
			fx.installed, fx.known = distsOf(&f), true
			out = append(out, fx)
		}
	}
	for _, i := range seedTree {
		out[i].installed, out[i].known = distsOf(seedFacts), true
	}
	// explain over the corpus.
	dir := filepath.Join("..", "explain", "testdata", "corpus")
	var c struct {
		Logs []struct {
			File string `json:"file"`
		} `json:"logs"`
	}
	cb, err := os.ReadFile(filepath.Join(dir, "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cb, &c); err != nil {
		t.Fatal(err)
	}
	for _, l := range c.Logs {
		lb, err := os.ReadFile(filepath.Join(dir, l.File))
		if err != nil {
			t.Fatal(err)
		}
		s, err := explain.Default().Scan(bytes.NewReader(lb))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []*facts.Facts{nil, seedFacts} {
			from := "explain " + l.File
			if f != nil {
				from += " (seed facts)"
			}
			for _, fd := range explain.Findings(s, f) {
				for _, fx := range fd.Fixes {
					src := fixSource{from: from + ": " + fx.Title, commands: fx.Commands}
					if f != nil {
						src.installed, src.known = distsOf(f), true
					}
					out = append(out, src)
				}
			}
		}
	}
	return append(out, remedySweep()...)
}

// remedySweep calls the remedy builders whose commands come from KB tables
// (the pip compiler wheels of cuda.json, build profiles and wheel_only of
// builds.json, torch's CUDA builds) for torch CUDA builds, GPUs and kinds
// of environment no fixture has.
func remedySweep() []fixSource {
	var out []fixSource
	for _, cuda := range []string{"11.8", "12.1", "12.4", "12.6", "12.8", "12.9", "13.0"} {
		for _, kind := range []string{"venv", "uv", "conda"} {
			c := remedy.Context{
				TorchVersion: remedy.Of("2.11.0+cu"+strings.ReplaceAll(cuda, ".", ""), remedy.FromMachine),
				TorchCUDA:    remedy.Of(cuda, remedy.FromMachine), Platform: remedy.Of(remedy.Linux, remedy.FromMachine),
				Distro: remedy.Of("ubuntu 22.04", remedy.FromMachine), Arch: remedy.Of("x86_64", remedy.FromMachine),
				GPUs: []remedy.Fact[string]{remedy.Of("9.0", remedy.FromMachine)}, Python: remedy.Of(seedPython, remedy.FromMachine),
				PythonKind: remedy.Of(kind, remedy.FromMachine), HasPip: kind != "uv", Conda: kind == "conda",
			}
			from := "remedy cu" + cuda + " " + kind + ": "
			add := func(rs ...remedy.Remedy) {
				for _, r := range rs {
					// A Context with no machine: nothing is known installed.
					out = append(out, fixSource{from: from + r.Title, commands: r.Commands, python: seedPython, kind: kind, known: true})
				}
			}
			add(remedy.CompilerRoutes(c)...)
			add(remedy.TorchInstall(c, "2.11.0", cuda, true), remedy.Ninja(c))
			for pkg := range kb.Builds().Packages {
				add(remedy.BuildFromSource(c, pkg, pkg, cuda)...)
			}
			for _, p := range kb.Packages().Packages {
				for torch := range p.TorchPins {
					r, _ := remedy.ReleaseForTorch(c, p.Name, torch)
					add(r)
				}
			}
			for pkg := range kb.Builds().WheelOnly.Packages {
				for _, arch := range []string{"", "9.0"} {
					if r, ok := remedy.WheelOnlyRebuild(c, pkg, "", arch); ok {
						add(r)
					}
				}
			}
		}
	}
	return out
}

// commandsOf are the fixes in a JSON document: every "commands" list (a
// finding's fix, a plan's step), not undo lists.
func commandsOf(from string, doc any) []fixSource {
	var out []fixSource
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if cs, ok := v["commands"].([]any); ok {
				fx := fixSource{from: from}
				if title, ok := v["title"].(string); ok {
					fx.from += ": " + title
				}
				for _, c := range cs {
					if s, ok := c.(string); ok {
						fx.commands = append(fx.commands, s)
					}
				}
				out = append(out, fx)
			}
			for k, x := range v {
				if k != "commands" && k != "undo" {
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}
