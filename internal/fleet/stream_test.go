package fleet

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// TestReadStream: reports of several nodes on one stream, as srun
// merges its tasks' output: labelled lines, a node with two tasks, srun's
// --label prefix, blank lines, another program's line, a cut line and one
// over the line cap.
func TestReadStream(t *testing.T) {
	seed := seedVariant(t, nil)
	other := seedVariant(t, func(root string, tr *fixture.Tree) { removeDist(t, root, "fla_core-*.dist-info") })
	line := func(node string, f *facts.Facts, proc int) string {
		var b bytes.Buffer
		nr := &NodeReport{Node: node, Slurm: &SlurmTask{JobID: "7", ProcID: proc, Nodes: 3, Tasks: 4},
			Doctor: report.Doctor{Schema: facts.Schema, Facts: f, Findings: diagnose.Run(f)}}
		if err := WriteLine(&b, nr); err != nil {
			t.Fatal(err)
		}
		if strings.Count(b.String(), "\n") != 1 {
			t.Fatalf("WriteLine wrote %d lines", strings.Count(b.String(), "\n"))
		}
		return b.String()
	}
	n1 := line("n1", seed, 0)
	stream := n1 + "\n" + line("n2", other, 1) + line("n3", seed, 2) + line("n1", seed, 3) +
		"srun: error: n4: task 4: Exited with exit code 1\n" + n1[:len(n1)/2] + "\n" +
		"{\"x\":\"" + strings.Repeat("a", MaxLine) + "\"}\n" + strings.TrimSuffix(line("n5", seed, 5), "\n")
	res, err := ReadStream(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range res.Machines {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "n1 n2 n3 n1#2 n5" {
		t.Errorf("machines %q", got)
	}
	if len(res.Unreadable) != 3 || !strings.HasPrefix(res.Unreadable[0], "line 6: not a doctor report") ||
		!strings.HasPrefix(res.Unreadable[1], "line 7:") || res.Unreadable[2] != "line 8: over 16777216 bytes" {
		t.Errorf("unreadable %q", res.Unreadable)
	}
	d := Compare(res.Machines)
	var fla *Row
	for i := range d.Rows {
		if d.Rows[i].Fact == "package fla-core" {
			fla = &d.Rows[i]
		}
	}
	if fla == nil || !fla.Differs || fla.Values[1] != "" || fla.Values[0] == "" {
		t.Errorf("fla-core row %+v", fla)
	}
	// An endless line costs no more than the cap.
	res, err = ReadStream(io.LimitReader(zeros{}, 3*MaxLine))
	if err != nil || len(res.Machines) != 0 || len(res.Unreadable) != 1 {
		t.Errorf("endless line: %v %+v", err, res.Unreadable)
	}
}

// TestReadStreamSrunLabel: what `srun --label` prints for three tasks:
// each task's report cut into 1 KiB pieces, every piece on a line of its
// own behind the task's label (blank-padded to the widest), the tasks'
// pieces interleaved; plus a stray labelled line and a task cut short.
func TestReadStreamSrunLabel(t *testing.T) {
	seed := seedVariant(t, nil)
	var docs [][]byte
	for i, node := range []string{"n1", "n1", "n2", "n3"} {
		var b bytes.Buffer
		WriteLine(&b, &NodeReport{Node: node, Slurm: &SlurmTask{JobID: "9", ProcID: i}, Doctor: report.Doctor{Schema: facts.Schema, Facts: seed, Findings: diagnose.Run(seed)}})
		docs = append(docs, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	docs[3] = docs[3][:3000] // task 3 died mid-report
	var stream strings.Builder
	stream.WriteString(" 1: srun: some text the task printed\n")
	for off := 0; ; off += 1024 {
		wrote := false
		for task, d := range docs {
			if off < len(d) {
				fmt.Fprintf(&stream, "%2d: %s\n", task, d[off:min(off+1024, len(d))])
				wrote = true
			}
		}
		if !wrote {
			break
		}
	}
	res, err := ReadStream(strings.NewReader(stream.String()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range res.Machines {
		names = append(names, m.Name)
	}
	if got := strings.Join(names, " "); got != "n1 n1#2 n2" {
		t.Errorf("machines %q", got)
	}
	if len(res.Unreadable) != 2 || !strings.Contains(res.Unreadable[0], "(task 1): not a doctor report") || res.Unreadable[1] != "task 3: its report ends unfinished after 3000 bytes" {
		t.Errorf("unreadable %q", res.Unreadable)
	}
}

func TestNodeLabel(t *testing.T) {
	for in, want := range map[string]string{
		"gpu-01": "gpu-01", "": "unnamed", "  ": "unnamed", "a\x1b[2Jb": "a?[2Jb", "n\x9b1": "n?1", "bad\xffname": "bad?name",
		strings.Repeat("n", 300): strings.Repeat("n", maxNodeName),
	} {
		if got := nodeLabel(in); got != want {
			t.Errorf("nodeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	return len(p), nil
}

func TestNodeNameAndSlurm(t *testing.T) {
	env := map[string]string{"SLURMD_NODENAME": "gpu-07", "SLURM_JOB_ID": "42", "SLURM_STEP_ID": "0", "SLURM_PROCID": "5",
		"SLURM_NODEID": "2", "SLURM_STEP_NUM_NODES": "4", "SLURM_STEP_NUM_TASKS": "8"}
	get := func(k string) string { return env[k] }
	if n := NodeName(get); n != "gpu-07" {
		t.Errorf("NodeName = %q", n)
	}
	if s := SlurmFromEnv(get); s == nil || *s != (SlurmTask{JobID: "42", StepID: "0", ProcID: 5, NodeID: 2, Nodes: 4, Tasks: 8}) {
		t.Errorf("SlurmFromEnv = %+v", s)
	}
	env["FASTPATH_NODE_NAME"] = "override"
	if n := NodeName(get); n != "override" {
		t.Errorf("NodeName = %q", n)
	}
	if SlurmFromEnv(func(string) string { return "" }) != nil {
		t.Error("a Slurm task outside Slurm")
	}
}
