// Package live runs fastpath's embedded Python scripts with the selected
// interpreter on the live host: the probe (`doctor --live`: what importing
// torch and the kernel packages really does) and the benchmark (`bench`:
// fast kernel vs torch fallback). Each runs with a timeout, its output
// bounded and parsed; a script that hangs, crashes or prints junk gives an
// error, never a panic.
package live

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

//go:embed probe.py
var ProbeScript string

//go:embed bench.py
var BenchScript string

// DefaultTimeout bounds a probe: importing torch takes seconds (7.5 s cold
// on the reference H200), a minute is generous.
const DefaultTimeout = 60 * time.Second

// MaxOutput bounds what is kept of a script's stdout and of its stderr.
const MaxOutput = 4 << 20

// Runner runs a script with an interpreter.
type Runner struct {
	// Python is the interpreter to run (the selected environment's).
	Python string
	// Env is the environment; nil means this process's.
	Env []string
	// Timeout bounds the run (DefaultTimeout when zero).
	Timeout time.Duration
	// Stderr, when set, receives the script's stderr as it comes (bench
	// progress); it is kept bounded in Result.Stderr as well.
	Stderr interface{ Write([]byte) (int, error) }
}

// Result is one run's raw outcome.
type Result struct {
	Stdout, Stderr []byte
	// Truncated is set when an output passed MaxOutput.
	Truncated bool
	ExitCode  int
	Elapsed   time.Duration
}

// Run writes script to a private temporary folder and runs it there with
// the argument arg, offline.
func (r *Runner) Run(ctx context.Context, name, script, arg string) (*Result, error) {
	if r.Python == "" {
		return nil, errors.New("no Python interpreter selected")
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dir, err := os.MkdirTemp("", "fastpath-live-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// probe.py sits beside every script as a module (the bench imports its
	// helpers): one copy of the code that reads transformers' wrappers.
	if err := os.WriteFile(filepath.Join(dir, "probe.py"), []byte(ProbeScript), 0o600); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// -B: leave no __pycache__ behind in the temporary folder.
	cmd := exec.CommandContext(ctx, r.Python, "-B", path, arg)
	cmd.Dir = dir
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(append([]string(nil), env...), "HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1")
	stdout := &capped{max: MaxOutput}
	stderr := &capped{max: MaxOutput, tee: r.Stderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	killGroup(cmd)
	// A grandchild holding the pipes open must not keep us waiting.
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	err = cmd.Run()
	res := &Result{Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes(), Truncated: stdout.over || stderr.over,
		ExitCode: cmd.ProcessState.ExitCode(), Elapsed: time.Since(start)}
	if ctx.Err() == context.DeadlineExceeded {
		return res, fmt.Errorf("%s with %s did not finish within %s (killed)%s", name, r.Python, timeout, tail(res.Stderr))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return res, fmt.Errorf("running %s with %s: %w", name, r.Python, err)
	}
	return res, nil
}

// capped keeps the first max bytes written and drops the rest, so a script
// printing without end cannot exhaust memory; it never fails the writer.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
	tee  interface{ Write([]byte) (int, error) }
}

func (c *capped) Write(p []byte) (int, error) {
	if c.tee != nil {
		c.tee.Write(p) //nolint:errcheck // progress display only
	}
	if room := c.max - c.buf.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// tail is the end of a script's stderr for an error message: the last
// lines, where Python puts the exception.
func tail(stderr []byte) string {
	s := strings.TrimSpace(string(bytes.ToValidUTF8(stderr, []byte("?"))))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	out := strings.Join(lines, "\n  ")
	if len(out) > 2000 {
		out = out[len(out)-2000:]
	}
	return "; stderr:\n  " + out
}

// extractJSON returns the script's JSON object: the whole stdout, or else
// its last line that parses as a JSON object (anything printed before it
// is noise from imported libraries).
func extractJSON(stdout []byte, v any) error {
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) == 0 {
		return errors.New("printed nothing on stdout")
	}
	if trimmed[0] == '{' && json.Unmarshal(trimmed, v) == nil {
		return nil
	}
	lines := bytes.Split(trimmed, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) > 0 && l[0] == '{' && json.Unmarshal(l, v) == nil {
			return nil
		}
	}
	head := trimmed
	if len(head) > 200 {
		head = head[:200]
	}
	return fmt.Errorf("printed no JSON object (stdout begins %q)", head)
}

// ProbeArgs is the probe's argument.
type ProbeArgs struct {
	Packages  []ProbePackage `json:"packages"`
	Models    []string       `json:"models"`
	Functions []string       `json:"functions,omitempty"`
}

// ProbePackage is one package to import, and a tiny kernel to run after it.
type ProbePackage struct {
	Name   string `json:"name"`
	Import string `json:"import"`
	Smoke  string `json:"smoke,omitempty"`
}

// KBProbeArgs is the probe argument for the knowledge base's kernel
// packages (and `kernels`, the Hub kernel loader), and the model types.
func KBProbeArgs(modelTypes []string) ProbeArgs {
	d := kb.Families()
	a := ProbeArgs{Models: append([]string{}, modelTypes...)}
	names := make([]string, 0, len(d.Packages))
	for n := range d.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a.Packages = append(a.Packages, ProbePackage{Name: n, Import: d.Packages[n].Import})
	}
	a.Packages = append(a.Packages, ProbePackage{Name: "kernels", Import: "kernels"})
	seen := map[string]bool{}
	for _, set := range d.FunctionSets {
		for _, f := range set {
			seen[f.Name] = true
		}
	}
	for f := range seen {
		a.Functions = append(a.Functions, f)
	}
	sort.Strings(a.Functions)
	return a
}

// Probe runs the probe. The error is set when no answer could be read;
// a probe that answered with its own errors returns them in LiveFacts.Errors.
func (r *Runner) Probe(ctx context.Context, args ProbeArgs) (*facts.LiveFacts, error) {
	arg, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	res, err := r.Run(ctx, "probe.py", ProbeScript, string(arg))
	if err != nil {
		return nil, err
	}
	lf, err := ParseProbe(res.Stdout)
	if err != nil {
		return nil, fmt.Errorf("probe with %s (exit status %d): %w%s", r.Python, res.ExitCode, err, tail(res.Stderr))
	}
	lf.Seconds = res.Elapsed.Seconds()
	if res.ExitCode != 0 {
		lf.Errors = append(lf.Errors, fmt.Sprintf("probe exited with status %d%s", res.ExitCode, tail(res.Stderr)))
	}
	return lf, nil
}

// ParseProbe reads the probe's output.
func ParseProbe(stdout []byte) (*facts.LiveFacts, error) {
	var lf facts.LiveFacts
	if err := extractJSON(stdout, &lf); err != nil {
		return nil, err
	}
	if lf.Probe == 0 {
		return nil, errors.New(`the JSON is not the probe's (no "probe" version)`)
	}
	return &lf, nil
}
