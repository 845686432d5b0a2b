package explain

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// routineLine matches the lines a long build or install log is mostly made
// of, in the real logs of the corpus: compiler command lines, ninja's
// progress, pip's progress, setuptools' copying. They are where a block scan
// spends its time, so a signature's pattern may run on one only where it
// matches: a signature whose literal is on every compile line runs its
// pattern on every compile line (a 50 MB build log went from 58 to 235 ms on
// the H200 in session 11 when ninja-nvcc-colon-home's literal was
// "/bin/nvcc ", and conda-pytorch-cpu-build's "pytorch" is in every compile
// line of a conda env named for pytorch). A literal must belong to the
// failure it means.
var routineLine = regexp.MustCompile(`^\s*(?:\[\d+/\d+\] )?(?:\S*/bin/nvcc |\S*/(?:g\+\+|gcc|c\+\+|x86_64-linux-gnu-g\+\+) |Collecting |Downloading |Requirement already satisfied: |copying |creating |running build|Using cached )`)

func TestRoutineLinesTryNoSignature(t *testing.T) {
	m := Default()
	a := m.newAnalyzer()
	logs, err := filepath.Glob("testdata/corpus/*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no corpus logs: %v", err)
	}
	routine := 0
	check := func(name string, raw []byte) {
		routine++
		line := a.norm.line(append(raw[:len(raw):len(raw)], '\n'))
		for _, k := range a.cand.present(line, a.seen, nil) {
			a.seen[k>>6] = 0
			for _, i := range m.users[k].sigs {
				if m.sigs[i].re.Match(line) {
					continue // the line is this signature's evidence
				}
				t.Errorf("%s: signature %s runs on a routine line it does not match (literal %q): %.160s",
					name, m.sigs[i].sig.Name, m.lits[k].text, raw)
			}
		}
	}
	// The lines BenchmarkExplain's 50 MB log is made of.
	for i, f := range noiseLines {
		check(fmt.Sprintf("noiseLines[%d]", i), []byte(strings.TrimSuffix(fmt.Sprintf(f, 4096, 123), "\n")))
	}
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			raw := sc.Bytes()
			if !routineLine.Match(raw) || errorWord.Match(raw) {
				continue
			}
			check(filepath.Base(p), raw)
		}
		f.Close()
	}
	if routine < 30+len(noiseLines) {
		t.Fatalf("only %d routine lines in the corpus: the selection is broken", routine)
	}
	t.Logf("%d routine lines from %d real logs", routine, len(logs))
}

// errorWord marks a routine-looking line that reports a failure (a compiler
// line echoed in an error message): signatures may look at those.
var errorWord = regexp.MustCompile(`(?i)error|fatal|failed|not found|undefined|no such|unsupported|invalid`)
