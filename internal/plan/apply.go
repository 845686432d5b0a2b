package plan

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

// Runner carries out steps' commands with a POSIX shell, one command at a
// time, carrying the environment their `export` lines set into the later
// commands (and back to the caller, for doctor's second look).
type Runner struct {
	// Env is the environment to start from (KEY=VALUE).
	Env []string
	// Out receives the commands and their output as they run.
	Out io.Writer
	// Shell runs each command with -c (default /bin/sh).
	Shell string
}

// Result is what running steps did.
type Result struct {
	// Ran are the steps that completed.
	Ran []Step
	// Exports are the variables the export lines set, in first-set order,
	// with their final values (KEY=VALUE).
	Exports []string
	// Env is the environment after the steps.
	Env []string
	// Failed is the step that failed (nil when all ran), Command the
	// command, Output the end of its output.
	Failed  *Step
	Command string
	Output  string
	Err     error
}

var (
	exportLine = lazyregexp.New(`^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	unsetLine  = lazyregexp.New(`^unset ([A-Za-z_][A-Za-z0-9_]*)$`)
)

// placeholder matches a word no real command holds, only a template's hole
// (`pip install PACKAGE`, `<version>`): the last guard before a shell sees it.
var placeholder = lazyregexp.New(`(^|\s)(PACKAGE|VERSION|PATH_TO_[A-Z_]+)(\s|$)|<[a-z][a-z0-9_-]*>`)

// ownGroup runs cmd in a process group of its own, and makes cancelling
// ctx (Ctrl-C, SIGTERM, a timeout) stop that whole group: pip's and a
// build's children with it, not just the shell.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		time.AfterFunc(killGrace, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
		return nil
	}
	cmd.WaitDelay = killGrace + time.Second
}

// killGrace is how long a cancelled command's group has to exit after
// SIGTERM before it is sent SIGKILL.
const killGrace = 3 * time.Second

// tailSize is how much of a failed command's output is kept to show again.
const tailSize = 16 << 10

// Run runs the steps in order and stops at the first command that fails.
func (r *Runner) Run(ctx context.Context, steps []Step) Result {
	shell := r.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	env := append([]string{}, r.Env...)
	var res Result
	var exported []string
	for i := range steps {
		s := steps[i]
		fmt.Fprintf(r.Out, "==> %s: %s\n", s.Finding, s.Title)
		for _, c := range s.Commands {
			fmt.Fprintf(r.Out, "$ %s\n", c)
			tail := &tailBuffer{max: tailSize}
			w := io.MultiWriter(r.Out, tail)
			var err error
			if p := placeholder.FindString(c); p != "" {
				err = fmt.Errorf("refusing to run a command with the unfilled placeholder %q", strings.TrimSpace(p))
			} else if m := exportLine.FindStringSubmatch(c); m != nil {
				// The shell expands the value ($CUDA_HOME, $(...), quotes)
				// exactly as it would in the user's shell.
				var out bytes.Buffer
				cmd := exec.CommandContext(ctx, shell, "-c", c+` && printf '%s' "$`+m[1]+`"`)
				ownGroup(cmd)
				cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, w
				if err = cmd.Run(); err == nil {
					v := out.String()
					if strings.HasSuffix(m[1], "PATH") {
						v = dedupeList(v)
					}
					env = setEnv(env, m[1], v)
					if !contains(exported, m[1]) {
						exported = append(exported, m[1])
					}
				}
			} else if m := unsetLine.FindStringSubmatch(c); m != nil {
				env = unsetEnv(env, m[1])
			} else {
				cmd := exec.CommandContext(ctx, shell, "-c", c)
				ownGroup(cmd)
				cmd.Env, cmd.Stdout, cmd.Stderr = env, w, w
				err = cmd.Run()
			}
			if err != nil {
				res.Failed, res.Command, res.Output, res.Err = &steps[i], c, tail.String(), err
				res.Env, res.Exports = env, exports(env, exported)
				return res
			}
		}
		res.Ran = append(res.Ran, s)
	}
	res.Env, res.Exports = env, exports(env, exported)
	return res
}

// dedupeList drops repeated entries of a colon-separated list, keeping the
// first (the one that wins): two steps that both put $CUDA_HOME/bin first
// leave it there once.
func dedupeList(v string) string {
	seen := map[string]bool{}
	var out []string
	for _, e := range strings.Split(v, ":") {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return strings.Join(out, ":")
}

func exports(env, names []string) []string {
	var out []string
	for _, n := range names {
		if v, ok := lookupEnv(env, n); ok {
			out = append(out, n+"="+v)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lookupEnv(env []string, k string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if key, v, ok := strings.Cut(env[i], "="); ok && key == k {
			return v, true
		}
	}
	return "", false
}

func setEnv(env []string, k, v string) []string {
	return append(unsetEnv(env, k), k+"="+v)
}

func unsetEnv(env []string, k string) []string {
	out := env[:0:0]
	for _, e := range env {
		if key, _, _ := strings.Cut(e, "="); key != k {
			out = append(out, e)
		}
	}
	return out
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte{}, t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
