package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// seedRoot writes the seed container and returns the flags that diagnose it.
func seedSourceFlags(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	if err := fixture.Seed(dir); err != nil {
		t.Fatal(err)
	}
	return []string{"--root", dir, "--env", "PATH=/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "--gpu", "12.0"}
}

const logs = "../explain/testdata/logs/"

// explain's exit statuses and outputs: 1 with an error finding, 0 for
// warnings only or an unknown log (said plainly), 2 for usage mistakes.
func TestExplainCommand(t *testing.T) {
	t.Setenv("COLUMNS", "1000") // whole lines: wrapping is internal/render's to test
	src := seedSourceFlags(t)
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		want  ExitCode
		out   []string
	}{
		{"nameerror", append([]string{"explain", logs + "causal-conv1d-no-nvcc.log"}, src...), "", ExitFindings,
			[]string{"1 error, 0 warnings in 49 lines", "[no-cuda-compiler]", "line 39: NameError: name 'bare_metal_version' is not defined",
				"consequence", "$ /root/venv/bin/python3 -m pip install --no-build-isolation causal-conv1d", "cuda-nvcc-12-8"}},
		{"warnings only", append([]string{"explain", logs + "transformers-5.17-fallback.log"}, src...), "", ExitOK,
			[]string{"0 errors, 1 warning", "[fast-path-fallback]", "pip install flash-linear-attention"}},
		{"unknown", append([]string{"explain", logs + "healthy-training.log"}, src...), "", ExitOK,
			[]string{"no known failure signature in 14 lines"}},
		{"stdin", append([]string{"explain", "-"}, src...), "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n", ExitFindings,
			[]string{"stdin", "[driver-too-old]", "line 1: RuntimeError"}},
		{"follow", append([]string{"explain", "--follow", "-"}, src...), "Collecting causal-conv1d\n      NameError: name 'bare_metal_version' is not defined\n", ExitFindings,
			[]string{"[no-cuda-compiler]", "line 2: NameError", "fastpath explain  stdin  1 error, 0 warnings in 2 lines", "1. No CUDA compiler"}},
		{"log from elsewhere", append([]string{"explain", "-"}, src...), "torch.__version__  = 2.9.1+cu130\nNameError: name 'bare_metal_version' is not defined\n", ExitFindings,
			[]string{"this machine's facts were not used: the log's torch is 2.9.1+cu130 (line 1), this machine's is 2.11.0+cu128", "CUDA 13.0"}},
		{"no args", []string{"explain"}, "", ExitFailure, []string{"one log file"}},
		{"two args", []string{"explain", "a", "b"}, "", ExitFailure, []string{"one log file"}},
		{"missing file", []string{"explain", "/nonexistent/build.log"}, "", ExitFailure, []string{"no such file"}},
		{"directory", []string{"explain", t.TempDir()}, "", ExitFailure, []string{"is a directory"}},
		{"bad gpu", []string{"explain", logs + "cc1plus-oom.log", "--gpu", "sm_x"}, "", ExitFailure, []string{"not a compute capability"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			got := Main(tc.args, strings.NewReader(tc.stdin), &out, &errb)
			if got != tc.want {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", got, tc.want, out.String(), errb.String())
			}
			for _, w := range tc.out {
				if !strings.Contains(out.String()+errb.String(), w) {
					t.Errorf("output lacks %q:\n%s%s", w, out.String(), errb.String())
				}
			}
		})
	}
}

// --json: {"findings": [Finding]} with the lines read, root cause
// first, and fixes made with the facts saved by `fastpath facts`.
func TestExplainJSONWithSavedFacts(t *testing.T) {
	src := seedSourceFlags(t)
	var facts, errb bytes.Buffer
	if code := Main(append([]string{"facts"}, src...), nil, &facts, &errb); code != 0 {
		t.Fatalf("facts: %d %s", code, errb.String())
	}
	factsFile := filepath.Join(t.TempDir(), "facts.json")
	if err := os.WriteFile(factsFile, facts.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	code := Main([]string{"explain", logs + "seed-story.log", "--facts", factsFile, "--json"}, nil, &out, &errb)
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Schema    string `json:"schema"`
		LinesRead int    `json:"lines_read"`
		Findings  []struct {
			ID       string   `json:"id"`
			Severity string   `json:"severity"`
			Title    string   `json:"title"`
			Evidence []string `json:"evidence"`
			Lines    []int    `json:"lines"`
			Fixes    []struct {
				Title    string   `json:"title"`
				Commands []string `json:"commands"`
			} `json:"fixes"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if doc.Schema != "fastpath.v1" || doc.LinesRead != 17 || len(doc.Findings) != 2 {
		t.Fatalf("doc: %+v", doc)
	}
	root, fallback := doc.Findings[0], doc.Findings[1]
	if root.ID != "no-cuda-compiler" || root.Severity != "error" || fallback.ID != "fast-path-fallback" || fallback.Severity != "warning" {
		t.Errorf("order: %s, %s", root.ID, fallback.ID)
	}
	if len(root.Lines) != 2 || root.Lines[0] != 11 || root.Lines[1] != 15 {
		t.Errorf("lines %v", root.Lines)
	}
	if !strings.Contains(out.String(), `"export CUDA_HOME=/usr/local/cuda-12.8"`) {
		t.Errorf("fixes not from the saved facts:\n%s", out.String())
	}
}
