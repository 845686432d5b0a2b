package plan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C or SIGTERM during `fix --apply` cancels the context: the running
// command's whole process group (its background children too) must stop,
// and Run must return promptly.
func TestRunnerCancelKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &Runner{Out: &bytes.Buffer{}}
	done := make(chan Result, 1)
	start := time.Now()
	go func() {
		done <- r.Run(ctx, []Step{{ID: "s", Commands: []string{"sleep 60 & echo $! > " + pidFile + "; wait"}}})
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
	}
	if pid == 0 {
		t.Fatal("the step never started its background child")
	}
	cancel()
	select {
	case res := <-done:
		if res.Err == nil {
			t.Error("a cancelled step reported success")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// The grandchild is gone (or a zombie awaiting its reaper) within the grace.
	for deadline := time.Now().Add(killGrace + 2*time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") || syscall.Kill(pid, 0) != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %d still runs %v after cancel", pid, time.Since(start))
		}
	}
}

// F6's last guard: a command with an unfilled placeholder never reaches a shell.
func TestRunnerRefusesPlaceholderCommand(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	r := &Runner{Out: &bytes.Buffer{}}
	for _, c := range []string{
		"touch " + marker + " && python3 -m pip install PACKAGE",
		"touch " + marker + " && pip install causal-conv1d==<version>",
	} {
		res := r.Run(context.Background(), []Step{{ID: "s", Commands: []string{c}}})
		if res.Err == nil || !strings.Contains(res.Err.Error(), "placeholder") {
			t.Errorf("%q: err %v, want a placeholder refusal", c, res.Err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a command with a placeholder ran")
	}
	res := r.Run(context.Background(), []Step{{ID: "s", Commands: []string{"export PIP_PACKAGE_X=1", "true 'torch<2.9'"}}})
	if res.Err != nil {
		t.Errorf("real commands refused: %v", res.Err)
	}
}
