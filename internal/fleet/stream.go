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

	"github.com/fastpath-dev/fastpath/internal/diagnose"
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
	diagnose.Doctor
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

// maxPending caps the bytes of unfinished labelled reports held at once.
const maxPending = 256 << 20

// ReadStream reads `doctor --json-lines` output: one report per line,
// blank lines skipped. Lines labelled by `srun --label` ("3: ...") are
// put back together per task first: srun cuts a task's long lines into
// 1 KiB pieces, each on a line of its own behind its task's label, and
// interleaves the pieces of all tasks (without --label the pieces
// interleave unmarked and cannot be told apart). Machines are named after
// their node; the second and later reports from one node (several tasks
// per node) are named NODE#2, NODE#3, ...
func ReadStream(r io.Reader) (*StreamResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	res := &StreamResult{}
	seen := map[string]int{}
	pending := map[string][]byte{} // task label -> the pieces so far
	pendingBytes := 0
	var order []string // labels in order of first piece, for messages
	add := func(where string, doc []byte) error {
		if len(res.Machines) >= MaxStreamReports {
			return fmt.Errorf("over %d reports in the stream", MaxStreamReports)
		}
		m, perr := parseLine(doc)
		if perr != nil {
			res.Unreadable = append(res.Unreadable, fmt.Sprintf("%s: %v", where, perr))
			return nil
		}
		seen[m.Name]++
		if n := seen[m.Name]; n > 1 {
			m.Name = fmt.Sprintf("%s#%d", m.Name, n)
		}
		res.Machines = append(res.Machines, m)
		return nil
	}
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(br)
		where := fmt.Sprintf("line %d", lineNo)
		if errors.Is(err, errLineTooLong) {
			res.Unreadable = append(res.Unreadable, fmt.Sprintf("%s: over %d bytes", where, MaxLine))
		} else if label, piece, ok := cutLabel(line); ok {
			buf, started := pending[label]
			if !started {
				order = append(order, label)
				if !bytes.HasPrefix(bytes.TrimSpace(piece), []byte("{")) {
					if len(bytes.TrimSpace(piece)) > 0 {
						res.Unreadable = append(res.Unreadable, fmt.Sprintf("%s (task %s): not a doctor report: %.60q", where, label, piece))
					}
					goto next
				}
			}
			if len(buf)+len(piece) > MaxLine || pendingBytes+len(piece) > maxPending {
				res.Unreadable = append(res.Unreadable, fmt.Sprintf("%s (task %s): a report over %d bytes", where, label, MaxLine))
				pendingBytes -= len(buf)
				delete(pending, label)
				goto next
			}
			buf = append(buf, piece...)
			pendingBytes += len(piece)
			pending[label] = buf
			if t := bytes.TrimSpace(buf); bytes.HasSuffix(t, []byte("}")) && json.Valid(t) {
				pendingBytes -= len(buf)
				delete(pending, label)
				if aerr := add(fmt.Sprintf("%s (task %s)", where, label), t); aerr != nil {
					return res, aerr
				}
			}
		} else if len(bytes.TrimSpace(line)) > 0 {
			if aerr := add(where, line); aerr != nil {
				return res, aerr
			}
		}
	next:
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return res, err
		}
	}
	for _, label := range order {
		if buf, ok := pending[label]; ok {
			res.Unreadable = append(res.Unreadable, fmt.Sprintf("task %s: its report ends unfinished after %d bytes", label, len(buf)))
		}
	}
	return res, nil
}

// cutLabel splits srun --label's "N: " (the task number, right-aligned
// with blanks to the width of the largest) from the piece that follows.
func cutLabel(line []byte) (label string, piece []byte, ok bool) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i || j-i > 9 || j+1 >= len(line) || line[j] != ':' || line[j+1] != ' ' {
		return "", nil, false
	}
	return string(line[i:j]), line[j+2:], true
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
	var nr NodeReport
	if err := json.Unmarshal(line, &nr); err != nil {
		return Machine{}, fmt.Errorf("not a doctor report: %v", err)
	}
	m, err := Parse(line)
	if err != nil {
		return Machine{}, err
	}
	m.Name = nodeLabel(nr.Node)
	return m, nil
}

// maxNodeName caps a node's name as read from a stream (a DNS name's limit).
const maxNodeName = 253

// nodeLabel makes a name read from the stream safe to print: control
// characters (terminal escapes among them) and invalid UTF-8 become '?',
// and it is cut to maxNodeName bytes.
func nodeLabel(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "?"))
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
	if len(s) > maxNodeName {
		s = strings.ToValidUTF8(s[:maxNodeName], "")
	}
	if s == "" {
		return "unnamed"
	}
	return s
}
