package live

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// timerStub drives bench.py's Timer with a stand-in torch: the first call
// sleeps (a Triton compile), the CUDA events report 10 calls of 1.0 ms then
// 10 of 1.3 ms.
const timerStub = `
import json, sys, time, types
sys.path.insert(0, sys.argv[1])
import bench
seq = iter([1.0] * 10 + [1.3] * 10)
class Ev:
    def __init__(self, enable_timing=True): pass
    def record(self): pass
    def synchronize(self): pass
    def elapsed_time(self, other): return next(seq)
class Cuda:
    Event = Ev
    @staticmethod
    def synchronize(): pass
calls = []
def fn():
    calls.append(1)
    if len(calls) == 1:
        time.sleep(0.5)
m = bench.Timer(types.SimpleNamespace(cuda=Cuda), 1, 20, 0.3).measure(fn)
print(json.dumps(m))
`

// TestBenchTimer: the first call is timed apart and not counted against
// the cap (0.5 s of "compile" with a 0.3 s cap still gives all 20 runs);
// min, median, p90 and the halves come out, and halves 1.0 vs 1.3 ms (30%
// apart) are flagged unstable.
func TestBenchTimer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"bench.py": BenchScript, "probe.py": ProbeScript, "stub.py": timerStub} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(py, "-B", filepath.Join(dir, "stub.py"), dir).Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var m struct {
		MS, MinMS, P90MS, FirstMS float64
		Runs                      int
		Capped, Unstable          bool
		HalvesMS                  []float64
	}
	var raw map[string]any
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	b, _ := json.Marshal(map[string]any{"MS": raw["ms"], "MinMS": raw["min_ms"], "P90MS": raw["p90_ms"], "FirstMS": raw["first_ms"],
		"Runs": raw["runs"], "Capped": raw["capped"], "Unstable": raw["unstable"], "HalvesMS": raw["halves_ms"]})
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Runs != 20 || m.Capped || m.FirstMS < 400 {
		t.Errorf("the first call counted against the cap: %s", out)
	}
	if m.MS != 1.15 || m.MinMS != 1.0 || m.P90MS != 1.3 || len(m.HalvesMS) != 2 || m.HalvesMS[0] != 1.0 || m.HalvesMS[1] != 1.3 || !m.Unstable {
		t.Errorf("spread: %s", out)
	}
}
