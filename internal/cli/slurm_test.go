package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// slurmTools are what scripts/slurm-loopback.sh needs (Debian: slurm-wlm, munge).
var slurmTools = []string{"munged", "mungekey", "slurmctld", "slurmd", "srun", "sinfo"}

// TestSlurmLoopbackCluster runs the documented Slurm recipe on a real
// Slurm cluster: scripts/slurm-loopback.sh starts munged, slurmctld and
// three slurmd (distinct NodeName and ports) on 127.0.0.1, and
//
//	srun --label --nodes=3 --ntasks-per-node=1 --bcast=PATH fastpath doctor --json-lines | fastpath diff --expect 3 -
//
// must name the three nodes, with no shared filesystem: srun --bcast
// copies the binary, and the reports come back on srun's stdout. Then
// --expect 4 reports one missing, a node that differs (--multi-prog) is
// pinned, and three tasks on one node are told apart. .ci/run installs Slurm and runs this test with -v, so the CI log
// shows the nodes, srun's and diff's output and their exit statuses.
func TestSlurmLoopbackCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts a Slurm cluster")
	}
	for _, tool := range slurmTools {
		if _, err := exec.LookPath(tool); err != nil {
			if _, err := os.Stat("/usr/sbin/" + tool); err != nil {
				t.Skipf("Slurm is not installed (%s not found; apt-get install slurm-wlm munge, as .ci/run does)", tool)
			}
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the loopback Slurm cluster runs as root (slurmd starts tasks as their user)")
	}
	bin := fastpathBinary(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "slurm-loopback.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fp-slurm-") // short: munge's socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+os.Getenv("PATH")+":/usr/sbin", "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	run := func(timeout time.Duration, stdin []byte, name string, args ...string) (string, string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = env
		cmd.WaitDelay = 5 * time.Second
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if ctx.Err() != nil {
			t.Errorf("%s %q: no end within %s", name, args, timeout)
		} else if err != nil && code < 0 {
			t.Errorf("%s: %v", name, err)
		}
		return out.String(), errb.String(), code
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _, _ := run(30*time.Second, nil, script, "logs", dir)
			t.Logf("slurm logs:\n%s", logs)
		}
		run(60*time.Second, nil, script, "stop", dir)
		os.RemoveAll(dir)
	})

	nodes := 3
	out, errs, code := run(120*time.Second, nil, script, "start", dir, fmt.Sprint(nodes))
	if code != 0 {
		// A Slurm built without multiple-slurmd support: one node, several tasks.
		t.Logf("three slurmd on one host failed (exit %d): %s\nfalling back to one node", code, errs)
		run(60*time.Second, nil, script, "stop", dir)
		nodes = 1
		if out, errs, code = run(120*time.Second, nil, script, "start", dir, "1"); code != 0 {
			t.Fatalf("slurm-loopback.sh start: exit %d\n%s\n%s", code, out, errs)
		}
	}
	t.Logf("slurm cluster up, %d slurmd:\n%s", nodes, out)
	want := []string{}
	for i := 1; i <= nodes; i++ {
		want = append(want, fmt.Sprintf("n%d", i))
	}

	// The recipe: one task per node, the binary broadcast by srun.
	srunArgs := []string{"--label", "--time=2", fmt.Sprintf("--nodes=%d", nodes), "--ntasks-per-node=1",
		"--bcast=" + filepath.Join(dir, "fastpath-bcast"), bin, "doctor", "--json-lines", "--gpu", "9.0"}
	stream, srunErr, srunCode := run(90*time.Second, nil, "srun", srunArgs...)
	t.Logf("$ srun %s\nexit %d, %d bytes on stdout in %d lines; stderr:\n%s", strings.Join(srunArgs, " "), srunCode, len(stream), strings.Count(stream, "\n"), srunErr)
	expect := fmt.Sprint(nodes)
	diffOut, diffErr, diffCode := run(30*time.Second, []byte(stream), bin, "diff", "--expect", expect, "-")
	t.Logf("$ ... | fastpath diff --expect %s -\nexit %d\n%s%s", expect, diffCode, diffOut, diffErr)
	if diffCode != 0 || strings.Contains(diffOut, "missing:") {
		t.Errorf("diff --expect %s: exit %d", expect, diffCode)
	}
	jsonOut, _, _ := run(30*time.Second, []byte(stream), bin, "diff", "--json", "-")
	var d struct {
		Machines []string `json:"machines"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &d); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, jsonOut)
	}
	sort.Strings(d.Machines)
	if strings.Join(d.Machines, " ") != strings.Join(want, " ") {
		t.Errorf("machines %q, want %q", d.Machines, want)
	}

	// One node short of what was asked for.
	more := fmt.Sprint(nodes + 1)
	missOut, missErr, missCode := run(30*time.Second, []byte(stream), bin, "diff", "--expect", more, "-")
	t.Logf("$ ... | fastpath diff --expect %s -\nexit %d\n%s%s", more, missCode, missOut, missErr)
	if missCode != int(ExitFailure) || !strings.Contains(missOut, fmt.Sprintf("missing: 1 of %s expected machines did not report", more)) {
		t.Errorf("diff --expect %s: exit %d", more, missCode)
	}

	// Nodes that differ: with --multi-prog, node n2's doctor judges for
	// another GPU; diff must pin the difference on n2.
	if nodes > 1 {
		progs := filepath.Join(dir, "multi.conf")
		conf := fmt.Sprintf("1 %s doctor --json-lines --gpu 12.0\n0,2-%d %s doctor --json-lines --gpu 9.0\n", bin, nodes-1, bin)
		if err := os.WriteFile(progs, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		multiArgs := []string{"--label", "--time=2", fmt.Sprintf("--nodes=%d", nodes), fmt.Sprintf("--ntasks=%d", nodes), "--ntasks-per-node=1", "--multi-prog", progs}
		stream, srunErr, srunCode = run(90*time.Second, nil, "srun", multiArgs...)
		t.Logf("$ srun %s  # %s\nexit %d, %d bytes on stdout; stderr:\n%s", strings.Join(multiArgs, " "), strings.ReplaceAll(conf, "\n", "; "), srunCode, len(stream), srunErr)
		diffOut, diffErr, diffCode = run(30*time.Second, []byte(stream), bin, "diff", "--expect", expect, "-")
		t.Logf("$ ... | fastpath diff --expect %s -\nexit %d\n%s%s", expect, diffCode, diffOut, diffErr)
		var capRow string
		for _, l := range strings.Split(diffOut, "\n") {
			if strings.HasPrefix(l, "gpu capability") {
				capRow = l
			}
		}
		header := strings.Fields(strings.Split(diffOut, "\n")[0]) // fact n? n? n?
		fields := strings.Fields(strings.TrimPrefix(capRow, "gpu capability"))
		for i, h := range header[1:] {
			want := "9.0"
			if h == "n2" {
				want = "12.0"
			}
			if i >= len(fields) || fields[i] != want {
				t.Errorf("gpu capability of %s: row %q, want %s", h, capRow, want)
			}
		}
		if diffCode != 0 || len(header) != nodes+1 {
			t.Errorf("diff over differing nodes: exit %d", diffCode)
		}
	}

	// Several tasks on one node, each labelled, their pieces interleaved by srun.
	tasksArgs := []string{"--label", "--time=2", "--nodes=1", "--ntasks=3", "--overcommit", bin, "doctor", "--json-lines", "--gpu", "9.0"}
	stream, srunErr, srunCode = run(90*time.Second, nil, "srun", tasksArgs...)
	t.Logf("$ srun %s\nexit %d, %d bytes on stdout in %d lines; stderr:\n%s", strings.Join(tasksArgs, " "), srunCode, len(stream), strings.Count(stream, "\n"), srunErr)
	diffOut, diffErr, diffCode = run(30*time.Second, []byte(stream), bin, "diff", "--expect", "3", "-")
	t.Logf("$ ... | fastpath diff --expect 3 -\nexit %d\n%s%s", diffCode, diffOut, diffErr)
	if diffCode != 0 || !strings.Contains(diffOut, "#2") || !strings.Contains(diffOut, "#3") {
		t.Errorf("three tasks on one node: diff exit %d", diffCode)
	}
}
