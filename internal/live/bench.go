package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// BenchArgs is bench.py's argument.
type BenchArgs struct {
	Config     string  `json:"config"` // a config.json path
	Batches    []int   `json:"batches"`
	SeqLens    []int   `json:"seq_lens"`
	DType      string  `json:"dtype"` // bf16, fp16, fp32
	Warmup     int     `json:"warmup,omitempty"`
	Runs       int     `json:"runs,omitempty"`
	CapSeconds float64 `json:"cap_seconds,omitempty"` // per measurement
	NoLayer    bool    `json:"no_layer,omitempty"`    // skip the whole-layer forward
	// Families and Functions come from the knowledge base (Bench fills
	// them when empty): the model types bench.py's Gated DeltaNet routine
	// times, and the functions it times with their modules and the torch
	// references transformers keeps for them.
	Families  []string        `json:"families"`
	Functions []BenchFunction `json:"functions"`
}

// BenchFunction is one kernel function bench.py times.
type BenchFunction struct {
	Name      string   `json:"name"`
	Module    string   `json:"module"`
	TorchRefs []string `json:"torch_refs"`
}

// gdnRoutine is bench.py's routine for Gated DeltaNet layers.
const gdnRoutine = "gated_delta_net"

// withKB fills Families and Functions from the knowledge base: the
// families whose bench is bench.py's Gated DeltaNet routine, and the
// functions of their linear_attention layers.
func (a BenchArgs) withKB() BenchArgs {
	d := kb.Families()
	if len(a.Families) == 0 {
		a.Families = d.BenchFamilies(gdnRoutine)
	}
	if len(a.Functions) == 0 {
		seen := map[string]bool{}
		for _, mt := range a.Families {
			for _, fn := range d.Functions(d.Families[mt].Kinds["linear_attention"], false) {
				if !seen[fn.Name] {
					seen[fn.Name] = true
					a.Functions = append(a.Functions, BenchFunction{Name: fn.Name, Module: fn.Module, TorchRefs: fn.TorchRefs})
				}
			}
		}
	}
	return a
}

// Bench is bench.py's answer: the JSON of `fastpath bench --json`.
type Bench struct {
	Bench        int            `json:"bench"`
	Config       string         `json:"config"`
	ModelType    string         `json:"model_type"`
	DType        string         `json:"dtype"`
	Device       string         `json:"device,omitempty"`
	Torch        string         `json:"torch,omitempty"`
	Transformers string         `json:"transformers,omitempty"`
	Shapes       map[string]int `json:"shapes,omitempty"`
	Layers       map[string]int `json:"layers,omitempty"`
	Results      []BenchResult  `json:"results"`
	LayerForward []LayerResult  `json:"layer_forward"`
	// Skipped says what could not be compared and why.
	Skipped []string `json:"skipped"`
	Errors  []string `json:"errors"`
}

// BenchResult is one kernel function at one shape.
type BenchResult struct {
	Kind          string `json:"kind"`
	Function      string `json:"function"`
	Phase         string `json:"phase"` // prefill (seq_len tokens) or decode (one token)
	Batch         int    `json:"batch"`
	SeqLen        int    `json:"seq_len"`
	Layers        int    `json:"layers"`
	CallsPerLayer int    `json:"calls_per_layer"`
	Timing
}

// Timing is a fast/fallback pair of measurements (median ms per call),
// each with its spread: min and p90 of the timed runs, the first call on its
// own (Triton's compile and autotuning; not counted against --cap), and the
// medians of the first and second half of the runs, Unstable when those
// differ by more than 10%.
type Timing struct {
	FastMS           *float64  `json:"fast_ms,omitempty"`
	FastRuns         int       `json:"fast_runs,omitempty"`
	FastCapped       bool      `json:"fast_capped,omitempty"`
	FastMinMS        *float64  `json:"fast_min_ms,omitempty"`
	FastP90MS        *float64  `json:"fast_p90_ms,omitempty"`
	FastFirstCallMS  *float64  `json:"fast_first_call_ms,omitempty"`
	FastHalvesMS     []float64 `json:"fast_halves_ms,omitempty"`
	FastUnstable     bool      `json:"fast_unstable,omitempty"`
	FastFrom         string    `json:"fast_from,omitempty"`
	FastError        string    `json:"fast_error,omitempty"`
	FallbackMS       *float64  `json:"fallback_ms,omitempty"`
	FallbackRuns     int       `json:"fallback_runs,omitempty"`
	FallbackCapped   bool      `json:"fallback_capped,omitempty"`
	FallbackMinMS    *float64  `json:"fallback_min_ms,omitempty"`
	FallbackP90MS    *float64  `json:"fallback_p90_ms,omitempty"`
	FallbackFirstMS  *float64  `json:"fallback_first_call_ms,omitempty"`
	FallbackHalvesMS []float64 `json:"fallback_halves_ms,omitempty"`
	FallbackUnstable bool      `json:"fallback_unstable,omitempty"`
	FallbackFrom     string    `json:"fallback_from,omitempty"`
	FallbackError    string    `json:"fallback_error,omitempty"`
	Error            string    `json:"error,omitempty"`
}

// spread words one side's spread: "min 0.80, p90 0.95, 20 runs".
func spread(min, p90 *float64, runs int) string {
	if min == nil || p90 == nil {
		return ""
	}
	return fmt.Sprintf("%.3g-%.3g, %d runs", *min, *p90, runs)
}

// unstableNotes name the sides whose two halves disagree.
func (t Timing) unstableNotes(what string) []string {
	var out []string
	if t.FastUnstable && len(t.FastHalvesMS) == 2 {
		out = append(out, fmt.Sprintf("%s fast: UNSTABLE, the two halves of its runs gave %.3g and %.3g ms (>10%% apart): run again", what, t.FastHalvesMS[0], t.FastHalvesMS[1]))
	}
	if t.FallbackUnstable && len(t.FallbackHalvesMS) == 2 {
		out = append(out, fmt.Sprintf("%s fallback: UNSTABLE, the two halves of its runs gave %.3g and %.3g ms (>10%% apart): run again", what, t.FallbackHalvesMS[0], t.FallbackHalvesMS[1]))
	}
	return out
}

// LayerResult is one whole GatedDeltaNet layer's forward, both ways.
type LayerResult struct {
	Kind   string `json:"kind"`
	Batch  int    `json:"batch"`
	SeqLen int    `json:"seq_len"`
	Timing
}

// Slowdown is fallback/fast, 0 when either is missing.
func (t Timing) Slowdown() float64 {
	if t.FastMS == nil || t.FallbackMS == nil || *t.FastMS <= 0 || !finite(*t.FallbackMS) {
		return 0
	}
	return *t.FallbackMS / *t.FastMS
}

// PerForwardMS is what the fallback adds to one forward pass (prefill of
// seq_len tokens, or one decode step): layers x calls x (fallback - fast);
// ok is false when either side is missing.
func (r BenchResult) PerForwardMS() (float64, bool) {
	if r.FastMS == nil || r.FallbackMS == nil || !finite(*r.FastMS) || !finite(*r.FallbackMS) {
		return 0, false
	}
	return float64(r.Layers*r.CallsPerLayer) * (*r.FallbackMS - *r.FastMS), true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Bench runs bench.py.
func (r *Runner) Bench(ctx context.Context, args BenchArgs) (*Bench, error) {
	arg, err := json.Marshal(args.withKB())
	if err != nil {
		return nil, err
	}
	// The partial lines bench.py writes after each result are for us, not
	// for the progress shown to the user.
	saved := r.Stderr
	if saved != nil {
		r.Stderr = &dropPartial{w: saved}
	}
	res, err := r.Run(ctx, "bench.py", BenchScript, string(arg))
	r.Stderr = saved
	if err != nil {
		// Killed at the time limit: report what finished.
		if res != nil {
			if b := partialBench(res.Stderr); b != nil {
				b.Errors = append(b.Errors, err.Error()+": the results above are those that finished")
				return b, nil
			}
		}
		return nil, err
	}
	b, err := ParseBench(res.Stdout)
	if err != nil {
		return nil, fmt.Errorf("bench with %s (exit status %d): %w%s", r.Python, res.ExitCode, err, tail(res.Stderr))
	}
	if res.ExitCode != 0 {
		b.Errors = append(b.Errors, fmt.Sprintf("bench exited with status %d%s", res.ExitCode, tail(res.Stderr)))
	}
	return b, nil
}

// partialPrefix starts bench.py's stderr lines that hold everything
// measured so far.
const partialPrefix = "bench-partial: "

// partialBench is the last complete partial result bench.py wrote to
// stderr, nil when there is none.
func partialBench(stderr []byte) *Bench {
	var last *Bench
	for _, line := range bytes.Split(stderr, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(partialPrefix))
		if !ok {
			continue
		}
		var b Bench
		if json.Unmarshal(rest, &b) == nil && b.Bench != 0 {
			last = &b
		}
	}
	return last
}

// dropPartial forwards whole lines except bench.py's partial results.
type dropPartial struct {
	w    interface{ Write([]byte) (int, error) }
	line []byte
}

func (d *dropPartial) Write(p []byte) (int, error) {
	d.line = append(d.line, p...)
	for {
		i := bytes.IndexByte(d.line, '\n')
		if i < 0 {
			break
		}
		if !bytes.HasPrefix(d.line, []byte(partialPrefix)) {
			d.w.Write(d.line[:i+1]) //nolint:errcheck // progress display only
		}
		d.line = d.line[i+1:]
	}
	if len(d.line) > 1<<20 && !bytes.HasPrefix(d.line, []byte(partialPrefix)) {
		d.w.Write(d.line) //nolint:errcheck
		d.line = nil
	}
	return len(p), nil
}

// ParseBench reads bench.py's output.
func ParseBench(stdout []byte) (*Bench, error) {
	var b Bench
	if err := extractJSON(stdout, &b); err != nil {
		return nil, err
	}
	if b.Bench == 0 {
		return nil, errors.New(`the JSON is not the benchmark's (no "bench" version)`)
	}
	return &b, nil
}

func ms(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}

func shape(batch, seq int, phase string) string {
	if phase == "decode" {
		return fmt.Sprintf("b=%d decode", batch)
	}
	return fmt.Sprintf("b=%d L=%d", batch, seq)
}

// Render writes the benchmark as text tables (internal/render: prose wraps
// to o's width; the tables are as wide as they are; -q prints the heading
// and the tables only).
func Render(w io.Writer, b *Bench, o render.Options) error {
	p := render.NewPrinter(w, o)
	w = p
	head := fmt.Sprintf("%s (%s)", b.ModelType, b.Config)
	if b.Device != "" {
		head += fmt.Sprintf(" on %s, %s, torch %s, transformers %s", b.Device, b.DType, orDash(b.Torch), orDash(b.Transformers))
	}
	p.Para("", head)
	for _, k := range sortedKeys(b.Layers) {
		p.Line(render.Count(b.Layers[k], k+" layer", k+" layers"))
	}
	if len(b.Results) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "FUNCTION\tSHAPE\tFAST ms\t(MIN-P90, RUNS)\tFALLBACK ms\t(MIN-P90, RUNS)\tSLOWDOWN\tPER FORWARD (+ms)")
		for _, r := range b.Results {
			slow, per := "-", "-"
			if s := r.Slowdown(); s > 0 {
				slow = fmt.Sprintf("%.1fx", s)
			}
			if d, ok := r.PerForwardMS(); ok {
				per = fmt.Sprintf("%+.1f (%d layers x %d)", d, r.Layers, r.CallsPerLayer)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s%s%s\t%s\t%s%s%s\t%s\t%s\t%s\n", r.Function, shape(r.Batch, r.SeqLen, r.Phase),
				ms(r.FastMS), capMark(r.FastCapped), unstableMark(r.FastUnstable), orDash(spread(r.FastMinMS, r.FastP90MS, r.FastRuns)),
				ms(r.FallbackMS), capMark(r.FallbackCapped), unstableMark(r.FallbackUnstable), orDash(spread(r.FallbackMinMS, r.FallbackP90MS, r.FallbackRuns)), slow, per)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if !o.Quiet() {
			p.Para("", p.P.D("ms: median per call (CUDA events), after a first call timed apart (Triton compiles there; not counted against --cap); * stopped early at the time cap; ! unstable (the two halves of the runs differ by more than 10%). PER FORWARD: what the fallback adds to one prefill or one decode step."))
		}
	}
	if len(b.LayerForward) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WHOLE LAYER\tSHAPE\tFAST ms\t(MIN-P90, RUNS)\tFALLBACK ms\t(MIN-P90, RUNS)\tSLOWDOWN\tNOTE")
		for _, l := range b.LayerForward {
			slow := "-"
			if s := l.Slowdown(); s > 0 {
				slow = fmt.Sprintf("%.1fx", s)
			}
			note := strings.Join(nonEmpty(l.Error, l.FastError, l.FallbackError), "; ")
			fmt.Fprintf(tw, "%s\t%s\t%s%s%s\t%s\t%s%s%s\t%s\t%s\t%s\n", l.Kind, shape(l.Batch, l.SeqLen, "prefill"),
				ms(l.FastMS), capMark(l.FastCapped), unstableMark(l.FastUnstable), orDash(spread(l.FastMinMS, l.FastP90MS, l.FastRuns)),
				ms(l.FallbackMS), capMark(l.FallbackCapped), unstableMark(l.FallbackUnstable), orDash(spread(l.FallbackMinMS, l.FallbackP90MS, l.FallbackRuns)), slow, oneLine(note))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var unstable []string
	for _, r := range b.Results {
		unstable = append(unstable, r.unstableNotes(r.Function+" "+shape(r.Batch, r.SeqLen, r.Phase))...)
	}
	for _, l := range b.LayerForward {
		unstable = append(unstable, l.unstableNotes("whole layer "+shape(l.Batch, l.SeqLen, "prefill"))...)
	}
	if o.Quiet() {
		return p.Err()
	}
	if len(unstable) > 0 {
		fmt.Fprintln(w, "\n"+p.P.B("Unstable:"))
		for _, n := range unstable {
			p.Para("  ", n)
		}
	}
	notes := append([]string{}, b.Skipped...)
	for _, r := range b.Results {
		for _, e := range nonEmpty(r.Error, r.FallbackError) {
			notes = append(notes, fmt.Sprintf("%s %s: %s", r.Function, shape(r.Batch, r.SeqLen, r.Phase), e))
		}
		if r.FastError != "" && !containsSuffix(b.Skipped, r.FastError) {
			notes = append(notes, fmt.Sprintf("%s %s fast: %s", r.Function, shape(r.Batch, r.SeqLen, r.Phase), r.FastError))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\n"+p.P.B("Not compared:"))
		for _, n := range notes {
			p.Para("  ", oneLine(n))
		}
	}
	if len(b.Errors) > 0 {
		fmt.Fprintln(w, "\n"+p.P.B("Errors:"))
		for _, e := range b.Errors {
			// A traceback keeps its lines: no wrapping.
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(strings.TrimSpace(e), "\n", "\n  "))
		}
	}
	return p.Err()
}

// sortedKeys are m's keys in order: a map's order would change the output
// from run to run.
func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func unstableMark(u bool) string {
	if u {
		return "!"
	}
	return ""
}

func capMark(c bool) string {
	if c {
		return "*"
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func containsSuffix(list []string, s string) bool {
	for _, l := range list {
		if strings.HasSuffix(l, s) {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
