package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/report"
)

// NodeReport is one line of `doctor --json-lines`: the doctor report
// (schema, facts, findings, models, as `doctor --json`) with the name of
// the node it ran on, so that many nodes' reports can share one stream
// (srun's standard output) without a shared filesystem.
type NodeReport struct {
	// Node is $FASTPATH_NODE_NAME, else $SLURMD_NODENAME (the node's
	// name in Slurm, distinct for several slurmd on one host), else the
	// host name.
	Node string `json:"node"`
	// Slurm is the Slurm task that printed the line, when run by srun.
	Slurm *SlurmTask `json:"slurm,omitempty"`
	report.Doctor
}

// SlurmTask says which task of which job step printed a report, from the
// variables slurmstepd sets (srun(1) OUTPUT ENVIRONMENT VARIABLES).
type SlurmTask struct {
	JobID  string `json:"job_id"`
	StepID string `json:"step_id,omitempty"`
	ProcID int    `json:"proc_id"` // the task's rank in the step
	NodeID int    `json:"node_id"` // the node's index in the step
	Nodes  int    `json:"nodes"`   // nodes in the step
	Tasks  int    `json:"tasks"`   // tasks in the step
}

// NodeName is the name a node's report carries (see NodeReport.Node).
func NodeName(getenv func(string) string) string {
	for _, k := range []string{"FASTPATH_NODE_NAME", "SLURMD_NODENAME"} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}

// SlurmFromEnv is the Slurm task this process is, or nil outside srun.
func SlurmFromEnv(getenv func(string) string) *SlurmTask {
	job := getenv("SLURM_JOB_ID")
	proc := getenv("SLURM_PROCID")
	if job == "" || proc == "" {
		return nil
	}
	num := func(k string) int { n, _ := strconv.Atoi(getenv(k)); return n }
	nodes := num("SLURM_STEP_NUM_NODES")
	if nodes == 0 {
		nodes = num("SLURM_NNODES")
	}
	tasks := num("SLURM_STEP_NUM_TASKS")
	if tasks == 0 {
		tasks = num("SLURM_NTASKS")
	}
	return &SlurmTask{JobID: job, StepID: getenv("SLURM_STEP_ID"), ProcID: num("SLURM_PROCID"), NodeID: num("SLURM_NODEID"), Nodes: nodes, Tasks: tasks}
}

// WriteLine writes r as one line of compact JSON.
func WriteLine(w io.Writer, r *NodeReport) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Stream caps: one line is one report (real ones are tens of KiB), and a
// stream holds at most maxStreamReports of them.
const (
	MaxLine          = 16 << 20
	MaxStreamReports = 100_000
)

// StreamResult is what a stream of `doctor --json-lines` held.
type StreamResult struct {
	Machines []Machine
	// Unreadable says, per line that was not a report, why (a truncated
	// or interleaved line, another program's output).
	Unreadable []string
}

// ReadStream reads `doctor --json-lines` output: one report per line,
// blank lines skipped, an `srun --label` prefix ("3: ") allowed. Machines
// are named after their node; the second and later reports from one node
// (several tasks per node) are named NODE#2, NODE#3, ...
func ReadStream(r io.Reader) (*StreamResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	res := &StreamResult{}
	seen := map[string]int{}
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(br)
		if errors.Is(err, errLineTooLong) {
			res.Unreadable = append(res.Unreadable, fmt.Sprintf("line %d: over %d bytes", lineNo, MaxLine))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if len(res.Machines) >= MaxStreamReports {
				return res, fmt.Errorf("over %d reports in the stream", MaxStreamReports)
			}
			m, perr := parseLine(line)
			if perr != nil {
				res.Unreadable = append(res.Unreadable, fmt.Sprintf("line %d: %v", lineNo, perr))
			} else {
				seen[m.Name]++
				if n := seen[m.Name]; n > 1 {
					m.Name = fmt.Sprintf("%s#%d", m.Name, n)
				}
				res.Machines = append(res.Machines, m)
			}
		}
		if err == io.EOF {
			return res, nil
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return res, err
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline, reading at most
// MaxLine bytes of it; a longer line is skipped to its end.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil || err == io.EOF {
				return nil, errLineTooLong
			}
			return nil, err
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// parseLine reads one report line.
func parseLine(line []byte) (Machine, error) {
	line = bytes.TrimSpace(line)
	if i := bytes.IndexByte(line, '{'); i > 0 && isLabel(line[:i]) {
		line = line[i:]
	}
	var nr NodeReport
	if err := json.Unmarshal(line, &nr); err != nil {
		return Machine{}, fmt.Errorf("not a doctor report: %v", err)
	}
	m, err := Parse(line)
	if err != nil {
		return Machine{}, err
	}
	m.Name = strings.TrimSpace(nr.Node)
	if m.Name == "" {
		m.Name = "unnamed"
	}
	return m, nil
}

// isLabel: srun --label's "N: " before a task's line.
func isLabel(p []byte) bool {
	p = bytes.TrimSpace(p)
	if len(p) < 2 || p[len(p)-1] != ':' {
		return false
	}
	for _, c := range p[:len(p)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
