package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The harness's limits on each run of the real binary (SECURITY.md).
const (
	// memLimit is the most resident memory one run may reach. A watchdog
	// reads /proc/PID/status every 10 ms and kills the run above it; the
	// kernel's own peak (wait4's ru_maxrss) is checked after exit.
	memLimit = 256 << 20
	// timeLimit is the most CPU time (user + system) one run may use: more
	// is a runaway. CPU time, not wall time, so that a loaded machine (2
	// cores shared by many builds) does not turn a slow run into a failure.
	timeLimit = 10 * time.Second
	// hangLimit is the most wall time one run may take: a run still going
	// is a hang (killed with its process group). A hang waits (a FIFO, a
	// network read) and uses no CPU, so timeLimit alone cannot catch it.
	hangLimit = 60 * time.Second
	// outputLimit is the most a run may print.
	outputLimit = 16 << 20
	// addressSpaceBackstop is RLIMIT_AS, set with prlimit(1) where it is
	// installed: a last guard for the machine running the tests should a
	// run allocate faster than the watchdog samples. Go reserves address
	// space it never touches, so it is far above memLimit.
	addressSpaceBackstop = 8 << 30
)

// buildBinary builds cmd/fastpath the way it ships (CGO_ENABLED=0).
func buildBinary(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	repo := wd
	for {
		if _, err := os.Stat(filepath.Join(repo, "go.mod")); err == nil {
			break
		}
		if repo == filepath.Dir(repo) {
			t.Fatal("no go.mod above " + wd)
		}
		repo = filepath.Dir(repo)
	}
	bin := filepath.Join(t.TempDir(), "fastpath")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/fastpath")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	mu    sync.Mutex
	max   int
	b     bytes.Buffer
	total int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += len(p)
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// result is one run's measurements and what went wrong.
type result struct {
	args     []string
	peak     int64 // bytes
	wall     time.Duration
	exit     int
	problems []string
}

// memory reads a live process's resident set size and its high-water mark
// (VmRSS, VmHWM) in bytes.
func memory(pid int) (rss, hwm int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	kb := func(v string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		return n << 10
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kb(v)
		} else if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm = kb(v)
		}
	}
	return rss, hwm
}

// panicked matches the Go runtime's report of a panic or fatal error.
var panicked = regexp.MustCompile(`(?m)^(panic|fatal error): .*\n(.*\n)*goroutine \d+ \[`)

// run runs the binary once under the limits and checks what it did.
func run(bin string, e *Env, scratch string, args []string, check func([]string, string) []string) result {
	r := result{args: args}
	name, argv := bin, args
	if pl, err := exec.LookPath("prlimit"); err == nil {
		name, argv = pl, append([]string{"--as=" + strconv.Itoa(addressSpaceBackstop), "--", bin}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = scratch
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + scratch, "TMPDIR=" + scratch,
		"XDG_CACHE_HOME=" + filepath.Join(scratch, ".cache"), "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	stdout, stderr := &capped{max: 4 << 20}, &capped{max: 1 << 20}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.problems = append(r.problems, "start: "+err.Error())
		return r
	}
	// The peak is the highest VmHWM sampled every 5 ms. wait4's ru_maxrss
	// cannot be used alone: Go starts children with CLONE_VM|CLONE_VFORK,
	// and exec folds the parent's (this test's) high-water mark into the
	// child's, so it is only an upper bound. A run shorter than one sample
	// falls back to it.
	overrun := make(chan int64, 1)
	done := make(chan struct{})
	var sampled int64
	var sampleMu sync.Mutex
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				rss, hwm := memory(cmd.Process.Pid)
				sampleMu.Lock()
				sampled = max(sampled, hwm)
				sampleMu.Unlock()
				if rss > memLimit {
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					overrun <- rss
					return
				}
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	r.wall = time.Since(start)
	var maxrss int64
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		r.exit = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			maxrss = ru.Maxrss << 10
		}
		cpu = ps.UserTime() + ps.SystemTime()
	}
	sampleMu.Lock()
	r.peak = sampled
	sampleMu.Unlock()
	if r.peak == 0 {
		r.peak = maxrss
	}
	select {
	case rss := <-overrun:
		r.problems = append(r.problems, fmt.Sprintf("overrun: killed at %d MiB resident (limit %d MiB)", rss>>20, memLimit>>20))
	default:
	}
	switch {
	case ctx.Err() != nil:
		r.problems = append(r.problems, fmt.Sprintf("hang: still running after %v", hangLimit))
	case cpu > timeLimit:
		r.problems = append(r.problems, fmt.Sprintf("runaway: %v of CPU time (limit %v)", cpu.Round(time.Millisecond), timeLimit))
	case r.peak > memLimit:
		r.problems = append(r.problems, fmt.Sprintf("overrun: peak %d MiB (limit %d MiB)", r.peak>>20, memLimit>>20))
	case err != nil && r.exit < 0:
		r.problems = append(r.problems, "killed: "+err.Error())
	}
	if r.exit > 2 {
		r.problems = append(r.problems, fmt.Sprintf("exit status %d (fastpath exits 0, 1 or 2)", r.exit))
	}
	out, errText := stdout.b.String(), stderr.b.String()
	if m := panicked.FindString(errText); m != "" {
		r.problems = append(r.problems, "panic: "+firstLine(m))
	}
	if stdout.total > outputLimit {
		r.problems = append(r.problems, fmt.Sprintf("balloon: printed %d MiB", stdout.total>>20))
	}
	if strings.Contains(out+errText, e.Canary) {
		i := strings.Index(out+errText, e.Canary)
		r.problems = append(r.problems, "host content in the output: "+strconv.Quote((out + errText)[max(0, i-60):i+len(e.Canary)]))
	}
	for _, c := range []string{"\x1b", "\x07", "\x00", "\r", "\u009b", "\u202e"} {
		if i := strings.Index(out+errText, c); i >= 0 {
			r.problems = append(r.problems, "raw control character in the output: "+strconv.Quote((out + errText)[max(0, i-40):min(len(out+errText), i+20)]))
			break
		}
	}
	if check != nil {
		r.problems = append(r.problems, check(args, out)...)
	}
	if b, err := os.ReadFile(e.Marker); err == nil {
		r.problems = append(r.problems, "executed a file from the input: "+firstLine(string(b)))
		os.Remove(e.Marker)
	}
	return r
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// treeState records every entry of a tree (type, size, time, link target),
// to find writes: the inputs and the host folder must not change.
func treeState(t *testing.T, dirs ...string) map[string]string {
	m := map[string]string{}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				m[p] = "error " + err.Error()
				return nil
			}
			fi, err := de.Info()
			if err != nil {
				return nil
			}
			v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
			if fi.Mode()&fs.ModeSymlink != 0 {
				l, _ := os.Readlink(p)
				v += " -> " + l
			}
			m[p] = v
			return nil
		})
	}
	return m
}

// classStats is one row of the table: the worst run of an attack class.
type classStats struct {
	class           string
	runs            int
	held            bool
	peak            int64
	peakArgs        []string
	wall            time.Duration
	wallArgs        []string
	problems        []string
	describedInputs []string
}

// TestHostileCorpus builds the real binary and runs every command on every
// hostile input as a subprocess, under a 256 MiB memory limit, 10 s of CPU
// time and 60 s of wall time. It fails on a hang, an overrun, a panic, a write to the
// inputs or the host folder, an executed file, host content (a canary) or
// a raw control character in the output. The table it logs is the one in
// docs/security.md (go test ./internal/hostile -run Corpus -v).
func TestHostileCorpus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the corpus uses FIFOs and /proc: Linux only")
	}
	if testing.Short() {
		// About 150 runs of a freshly built binary: over a minute on a
		// loaded 2-core machine. The full run (CI's second step) keeps it.
		t.Skip("builds the binary and runs it 150 times: not under -short")
	}
	// FASTPATH_HOSTILE_BIN runs the corpus on another build (an older
	// commit, to see what it catches) instead of this tree's.
	bin := os.Getenv("FASTPATH_HOSTILE_BIN")
	if bin == "" {
		bin = buildBinary(t)
	}
	e, err := NewEnv(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases, err := e.Build()
	if err != nil {
		t.Fatal(err)
	}
	before := treeState(t, e.Dir, e.Host)
	scratch := t.TempDir()

	type job struct {
		c    Case
		args []string
	}
	var jobs []job
	for _, c := range cases {
		for _, a := range c.Runs {
			jobs = append(jobs, job{c, a})
		}
	}
	results := make([]result, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, min(4, runtime.NumCPU())))
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = run(bin, e, scratch, j.args, j.c.Check)
		}()
	}
	wg.Wait()

	stats := map[string]*classStats{}
	var order []string
	for i, j := range jobs {
		s := stats[j.c.Class]
		if s == nil {
			s = &classStats{class: j.c.Class, held: true}
			stats[j.c.Class] = s
			order = append(order, j.c.Class)
		}
		if len(s.describedInputs) == 0 || s.describedInputs[len(s.describedInputs)-1] != j.c.Name {
			s.describedInputs = append(s.describedInputs, j.c.Name)
		}
		s.runs++
		r := results[i]
		if r.peak > s.peak {
			s.peak, s.peakArgs = r.peak, r.args
		}
		if r.wall > s.wall {
			s.wall, s.wallArgs = r.wall, r.args
		}
		for _, p := range r.problems {
			s.held = false
			s.problems = append(s.problems, p)
			t.Errorf("fastpath %s: %s", shortArgs(r.args, e), p)
		}
	}
	after := treeState(t, e.Dir, e.Host)
	var changed []string
	for p, v := range after {
		if before[p] != v {
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			changed = append(changed, p+" (removed)")
		}
	}
	sort.Strings(changed)
	for _, p := range changed {
		t.Errorf("an input or host file changed: %s", p)
	}

	var tb strings.Builder
	fmt.Fprintf(&tb, "| class | inputs | runs | held | worst peak RSS | its command | worst time | its command |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range order {
		s := stats[c]
		fmt.Fprintf(&tb, "| %s | %s | %d | %v | %.1f MiB | `%s` | %.2f s | `%s` |\n", s.class, strings.Join(s.describedInputs, "; "), s.runs,
			yesNo(s.held), float64(s.peak)/(1<<20), shortArgs(s.peakArgs, e), s.wall.Seconds(), shortArgs(s.wallArgs, e))
	}
	t.Logf("hostile corpus: %d runs, limits %d MiB, %v CPU, %v wall\n%s", len(jobs), memLimit>>20, timeLimit, hangLimit, tb.String())
	if p := os.Getenv("FASTPATH_HOSTILE_TABLE"); p != "" {
		os.WriteFile(p, []byte(tb.String()), 0o644)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// shortArgs shows a command line with the corpus folders shortened.
func shortArgs(args []string, e *Env) string {
	s := strings.Join(args, " ")
	s = strings.ReplaceAll(s, e.Dir, "$IN")
	s = strings.ReplaceAll(s, e.Host, "$HOST")
	if i := strings.Index(s, " --gpu 12.0 --env"); i >= 0 {
		s = s[:i] + " <seed flags>"
	}
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
