package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
)

// Exit statuses of the scripts fastpath runs on a target; doctor itself
// uses 0, 1 and 2, a shell 126 and 127.
const (
	exitNeedBinary   = 97 // no fastpath of this build in the target's cache
	exitWrongArch    = 98 // the target's machine is not this binary's
	exitReceiveFails = 96 // the binary could not be stored
)

const marker = "fastpath-remote:"

// Result statuses.
const (
	StatusOK       = "ok"       // doctor ran, no error-severity finding
	StatusFindings = "findings" // doctor ran and found errors
	StatusFailed   = "failed"   // the target could not be diagnosed
	StatusTimeout  = "timeout"  // the target did not answer in time
)

// Config says how to reach targets and what to run there.
type Config struct {
	Template *Template
	// Binary is the fastpath executable to send (the running one, read
	// once and shared by every target) and Version its version.
	Binary  []byte
	Version string
	// DoctorArgs follow `doctor --json` on the target.
	DoctorArgs []string
	Parallel   int           // targets at a time (default 16)
	Timeout    time.Duration // per target, both round trips (default 60s)
	// GOARCH of Binary (default runtime.GOARCH): the target's uname -m must match.
	GOARCH string
	// Finished, when set, is called once per target as soon as it is
	// done, with its index in targets (from several goroutines, one at a
	// time, before Progress). It may change *r: a caller that keeps a
	// thousand targets spools each full report and keeps a slim one.
	Finished func(i int, r *Result)
	// Progress, when set, is called after each target finishes (from
	// several goroutines, one at a time).
	Progress func(done, total int, r *Result)
}

// Result is what became of one target.
type Result struct {
	Target string `json:"target"`
	Status string `json:"status"`
	// Error says why a failed target failed; ExitCode is the transport's.
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code"`
	// SentBinary: the target had no fastpath of this build and was sent one.
	SentBinary bool    `json:"sent_binary"`
	Seconds    float64 `json:"seconds"`
	// StderrTail is the end of the target's standard error.
	StderrTail string           `json:"stderr_tail,omitempty"`
	Doctor     *diagnose.Doctor `json:"doctor,omitempty"`
}

// BuildID names a build: its version and the start of its SHA-256, so two
// dev builds of one version never share a cache entry.
func BuildID(version string, binary []byte) string {
	sum := sha256.Sum256(binary)
	v := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '+' {
			return r
		}
		return '_'
	}, version)
	return v + "-" + hex.EncodeToString(sum[:6])
}

// unameArch is what `uname -m` prints on Linux for a GOARCH.
var unameArch = map[string]string{
	"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64", "386": "i686",
}

// Scripts are the POSIX sh programs run on a target: probe runs a cached
// fastpath of this build or exits 97; receive stores stdin as that build
// (checking its size) and runs it. The cache is ~/.cache/fastpath/BUILD;
// where HOME is unwritable the binary goes to a private mktemp folder.
type Scripts struct{ Probe, Receive string }

// MakeScripts builds the target-side scripts for a build.
func MakeScripts(buildID string, size int, goarch string, doctorArgs []string) Scripts {
	args := []string{"doctor", "--json"}
	args = append(args, doctorArgs...)
	for i, a := range args {
		args[i] = Quote(a)
	}
	run := strings.Join(args, " ")
	arch := unameArch[goarch]
	if arch == "" {
		arch = goarch
	}
	accept := arch
	switch arch {
	case "x86_64":
		accept = "x86_64|amd64"
	case "aarch64":
		accept = "aarch64|arm64"
	}
	archCheck := fmt.Sprintf(`m=$(uname -m); case "$m" in %s) ;; *) echo "%s the target is $m, this fastpath is for %s" >&2; exit %d;; esac; `,
		accept, marker, arch, exitWrongArch)
	dir := fmt.Sprintf(`d="${HOME:-/nonexistent}/.cache/fastpath/%s"; `, buildID)
	probe := archCheck + dir +
		fmt.Sprintf(`if [ -x "$d/fastpath" ]; then exec "$d/fastpath" %s; fi; echo "%s need-binary" >&2; exit %d`, run, marker, exitNeedBinary)
	receive := archCheck + dir +
		`if mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then :; else d=$(mktemp -d) || exit ` + fmt.Sprint(exitReceiveFails) + `; fi; ` +
		`t="$d/fastpath.$$"; ` +
		fmt.Sprintf(`if cat > "$t" && [ "$(($(wc -c < "$t")))" -eq %d ] && chmod 700 "$t" && mv -f "$t" "$d/fastpath"; then exec "$d/fastpath" %s; fi; `, size, run) +
		fmt.Sprintf(`rm -f "$t"; echo "%s could not store the binary in $d" >&2; exit %d`, marker, exitReceiveFails)
	return Scripts{Probe: probe, Receive: receive}
}

// Run diagnoses every target, Parallel at a time, and returns one Result
// per target in the order given. A target that fails, refuses or hangs is
// reported in its Result; it never stops the others.
func Run(ctx context.Context, cfg Config, targets []string) []Result {
	if cfg.Parallel <= 0 {
		cfg.Parallel = 16
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.GOARCH == "" {
		cfg.GOARCH = runtime.GOARCH
	}
	scripts := MakeScripts(BuildID(cfg.Version, cfg.Binary), len(cfg.Binary), cfg.GOARCH, cfg.DoctorArgs)
	results := make([]Result, len(targets))
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	// Targets start in the order given, Parallel at a time; once ctx ends
	// no more start.
	sem := make(chan struct{}, cfg.Parallel)
	for i, t := range targets {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			results[i] = Result{Target: t, Status: StatusFailed, Error: "not started: interrupted", ExitCode: -1}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = runOne(ctx, cfg, scripts, t)
			mu.Lock()
			defer mu.Unlock()
			if cfg.Finished != nil {
				cfg.Finished(i, &results[i])
			}
			if cfg.Progress != nil {
				done++
				cfg.Progress(done, len(targets), &results[i])
			}
		}()
	}
	wg.Wait()
	return results
}

func runOne(ctx context.Context, cfg Config, s Scripts, target string) (r Result) {
	start := time.Now()
	r.Target = target
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	if err := CheckTarget(target); err != nil {
		r.Status, r.Error, r.ExitCode = StatusFailed, err.Error(), -1
		return r
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	out, errTail, code, err := execute(ctx, cfg.Template.Command(target, s.Probe), nil)
	if err == nil && code == exitNeedBinary && strings.Contains(errTail, marker+" need-binary") {
		r.SentBinary = true
		out, errTail, code, err = execute(ctx, cfg.Template.Command(target, s.Receive), cfg.Binary)
	}
	r.ExitCode, r.StderrTail = code, errTail
	switch {
	case parent.Err() != nil:
		r.Status, r.Error = StatusFailed, "interrupted; its processes were killed"
		return r
	case ctx.Err() == context.DeadlineExceeded:
		r.Status, r.Error = StatusTimeout, fmt.Sprintf("no answer within %s; its processes were killed", cfg.Timeout)
		return r
	case err != nil:
		r.Status, r.Error = StatusFailed, err.Error()
		return r
	}
	if code == 0 || code == 1 {
		var d diagnose.Doctor
		if jerr := json.Unmarshal(out, &d); jerr != nil || d.Facts == nil {
			r.Status = StatusFailed
			r.Error = fmt.Sprintf("exit %d without a doctor report on stdout (%d bytes)", code, len(out))
			if jerr != nil {
				r.Error += ": " + jerr.Error()
			}
			return r
		}
		r.Doctor = &d
		r.Status = StatusOK
		if code == 1 {
			r.Status = StatusFindings
		}
		return r
	}
	r.Status = StatusFailed
	r.Error = failureReason(code, errTail)
	return r
}

func failureReason(code int, errTail string) string {
	if i := strings.LastIndex(errTail, marker); i >= 0 {
		line, _, _ := strings.Cut(errTail[i+len(marker):], "\n")
		return strings.TrimSpace(line)
	}
	last := strings.TrimSpace(errTail)
	if i := strings.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	switch code {
	case 255:
		return "transport failed (exit 255, ssh's code for a connection error): " + last
	case 126, 127:
		return fmt.Sprintf("could not run (exit %d): %s", code, last)
	}
	if last == "" {
		return fmt.Sprintf("exit %d", code)
	}
	return fmt.Sprintf("exit %d: %s", code, last)
}

// MaxStdout caps the doctor report kept from one target: real ones are
// well under 1 MiB, and with --parallel 16 the buffers stay under 64 MiB
// however much a hostile target prints. A target over it fails with the
// cap named in its error.
const MaxStdout = 4 << 20

// tailBytes is how much of a target's standard error is kept.
const tailBytes = 2048

// runEnv names the environment variable that marks every process a
// transport starts, so that those that leave its process group (setsid,
// a daemonising ProxyCommand) can still be found and killed.
const runEnv = "FASTPATH_REMOTE_RUN"

// execute runs argv in its own process group with stdin (nil: empty) and
// returns its stdout, the tail of its stderr and its exit code. When ctx
// ends (timeout or interrupt) the whole group is killed, and then every
// process still carrying this run's mark in its environment, wherever it
// moved: a transport's children (ssh's ProxyCommand, sh's sleep, a setsid
// grandchild) die with it. Processes a transport starts on another machine
// are that machine's to end (ssh closes the session; docker and kubectl
// end the exec).
func execute(ctx context.Context, argv []string, stdin []byte) (stdout []byte, stderrTail string, code int, err error) {
	mark := newMark()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), runEnv+"="+mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		killMarked(mark)
		return err
	}
	// A grandchild holding the pipes open must not keep Wait waiting.
	cmd.WaitDelay = 2 * time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out := &capWriter{max: MaxStdout}
	tail := &tailWriter{max: tailBytes}
	cmd.Stdout, cmd.Stderr = out, tail
	runErr := cmd.Run()
	if ctx.Err() != nil {
		// Processes forked while the group was being killed.
		killMarked(mark)
	}
	if out.over {
		return nil, tail.String(), -1, fmt.Errorf("its report is over the %d MiB cap on a target's output (fastpath remote keeps at most %d bytes of each target's stdout)", MaxStdout>>20, MaxStdout)
	}
	var ee *exec.ExitError
	switch {
	case runErr == nil:
		return out.buf.Bytes(), tail.String(), 0, nil
	case ctx.Err() != nil:
		return nil, tail.String(), -1, ctx.Err()
	case errors.As(runErr, &ee) && ee.Exited():
		return out.buf.Bytes(), tail.String(), ee.ExitCode(), nil
	}
	return nil, tail.String(), -1, runErr
}

// newMark is a value no other run shares.
func newMark() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

// maxEnviron caps how much of one process's environment is read.
const maxEnviron = 1 << 20

// killMarked kills every process whose environment holds runEnv=mark,
// repeating while it finds some (a dying process may have forked), at
// most a few rounds. It reads /proc; where /proc is absent it does nothing.
func killMarked(mark string) {
	needle := []byte("\x00" + runEnv + "=" + mark + "\x00")
	self := os.Getpid()
	for round := 0; round < 5; round++ {
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := 0
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			if environHas(pid, needle) {
				syscall.Kill(pid, syscall.SIGKILL)
				found++
			}
		}
		if found == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func environHas(pid int, needle []byte) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxEnviron))
	// The first variable has no NUL before it.
	return bytes.Contains(append([]byte{0}, b...), needle)
}

type capWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.max {
		w.over = true
		return 0, errors.New("output too large")
	}
	return w.buf.Write(p)
}

type tailWriter struct {
	b   []byte
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string { return string(w.b) }
