package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/live"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// LiveFlags are doctor's --live flags.
type LiveFlags struct {
	Enabled bool          // --live
	Timeout time.Duration // --live-timeout
}

func (l *LiveFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&l.Enabled, "live", false, "also run the selected interpreter: import torch and the kernel packages, ask transformers what it resolves, and report where that disagrees with the static reading (live host only)")
	fs.DurationVar(&l.Timeout, "live-timeout", live.DefaultTimeout, "with --live: give the probe at most `DURATION`")
}

// liveOnly refuses sources where nothing may be run.
func liveOnly(s *SourceFlags, what string) error {
	if s.Root != "" || s.Image != "" || s.Facts != "" {
		return usageErrorf("%s runs Python on this machine: it cannot be combined with --root, --image or --facts", what)
	}
	return nil
}

// runner is the selected interpreter with the --env assumptions applied.
func runner(s *SourceFlags, f *facts.Facts, timeout time.Duration) (*live.Runner, error) {
	if f.Python.Selected == nil || f.Python.Selected.Interpreter == "" {
		return nil, fmt.Errorf("no Python interpreter found to run (give --python PATH)")
	}
	// --env assumptions apply to the run too (they come last: they win).
	env := append(os.Environ(), s.Env...)
	return &live.Runner{Python: f.Python.Selected.Interpreter, Env: env, Timeout: timeout}, nil
}

// check refuses --live where nothing may be run, before anything is read.
func (l *LiveFlags) check(s *SourceFlags) error {
	if !l.Enabled {
		return nil
	}
	return liveOnly(s, "--live")
}

// probe runs the live probe when --live is given and joins its answer to
// the facts; a probe that fails is reported, the static diagnosis stands.
func (l *LiveFlags) probe(ctx context.Context, s *SourceFlags, f *facts.Facts, models []*model.Report, ios *IO) error {
	if !l.Enabled {
		return nil
	}
	if err := l.check(s); err != nil {
		return err
	}
	r, err := runner(s, f, l.Timeout)
	if err != nil {
		f.Live = &facts.LiveFacts{Error: err.Error()}
		fmt.Fprintln(ios.Err, "fastpath: --live:", err)
		return nil
	}
	var types []string
	for _, m := range models {
		types = append(types, m.CodeModelType())
	}
	args := live.KBProbeArgs(types)
	args.AddStaticSuspects(f, diagnose.Run(f)) // issue 12: every static import/no-code error is checked live
	lf, err := r.Probe(ctx, args)
	if err != nil {
		f.Live = &facts.LiveFacts{Error: err.Error()}
		f.Warnings = append(f.Warnings, "live probe: "+err.Error())
		fmt.Fprintln(ios.Err, "fastpath: --live:", err)
		return nil
	}
	f.Live = lf
	return nil
}

// BenchOptions are `fastpath bench`'s flags.
type BenchOptions struct {
	Source  SourceFlags
	Model   string
	Batches []int
	SeqLens []int
	DType   string
	Runs    int
	Cap     time.Duration
	NoLayer bool
	Timeout time.Duration
	Output  // --format text|json, -v, -q
}

func newBenchCommand(ios *IO) *cobra.Command {
	o := &BenchOptions{}
	cmd := &cobra.Command{
		Use:   "bench --model CONFIG",
		Short: "Time each kernel's fast path against transformers' torch fallback on this GPU",
		Long: `bench runs an embedded Python benchmark with the selected interpreter: for
each kernel-dependent layer kind of the model (Gated DeltaNet: causal_conv1d_fn,
causal_conv1d_update, chunk_gated_delta_rule, fused_recurrent_gated_delta_rule),
it times the installed package's function and transformers' own torch
reference at the model's shapes (warm-up, CUDA events, median of repeated
runs), and one whole layer's forward both ways. It reports milliseconds per
call, the slowdown, and what the fallback adds to a forward pass; whatever
it cannot compare, it says why. Live host only; nothing is downloaded.
Progress goes to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunBench(cmd.Context(), o, ios)
		},
	}
	o.Source.register(cmd.Flags(), withPython|withEnv) // live host only: it runs the interpreter on the real GPU
	fs := cmd.Flags()
	fs.StringVar(&o.Model, "model", "", "the model: `CONFIG|DIR|ORG/NAME` (a config.json, a folder holding one, or a Hub id in the local cache)")
	fs.IntSliceVar(&o.Batches, "batch", []int{1}, "batch size `N` (repeatable)")
	fs.IntSliceVar(&o.SeqLens, "seq-len", []int{2048, 8192}, "prefill sequence length `N` (repeatable)")
	fs.StringVar(&o.DType, "dtype", "bf16", "tensor `DTYPE`: bf16, fp16 or fp32")
	fs.IntVar(&o.Runs, "runs", 20, "timed calls per measurement (`N`, after warm-up)")
	fs.DurationVar(&o.Cap, "cap", 20*time.Second, "stop a measurement after `DURATION` (slow fallbacks)")
	fs.BoolVar(&o.NoLayer, "no-layer", false, "skip the whole-layer forward")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "give the whole benchmark at most `DURATION`")
	addOutputFlags(cmd, &o.Output, allText, "text", "json")
	return cmd
}

// RunBench runs `fastpath bench`.
func RunBench(ctx context.Context, o *BenchOptions, ios *IO) error {
	if o.Model == "" {
		return usageErrorf("bench needs --model CONFIG|DIR|ORG/NAME")
	}
	switch o.DType {
	case "bf16", "fp16", "fp32":
	default:
		return usageErrorf("--dtype %q: want bf16, fp16 or fp32", o.DType)
	}
	for _, n := range append(append([]int{}, o.Batches...), o.SeqLens...) {
		if n < 1 || n > 1<<20 {
			return usageErrorf("--batch and --seq-len take positive sizes (got %d)", n)
		}
	}
	if o.Runs < 1 {
		return usageErrorf("--runs must be at least 1")
	}
	f, err := o.Source.Load(ctx)
	if err != nil {
		return err
	}
	src, err := o.Source.SourceContext(ctx)
	if err != nil {
		return err
	}
	loc, _, err := modelread.Load(src, o.Model)
	if err != nil {
		return fmt.Errorf("model %s: %w", o.Model, err)
	}
	cfgPath, err := filepath.Abs(loc.Path)
	if err != nil {
		return err
	}
	r, err := runner(&o.Source, f, o.Timeout)
	if err != nil {
		return err
	}
	r.Stderr = ios.Err
	b, err := r.Bench(ctx, live.BenchArgs{Config: cfgPath, Batches: o.Batches, SeqLens: o.SeqLens, DType: o.DType,
		Runs: o.Runs, Warmup: 3, CapSeconds: o.Cap.Seconds(), NoLayer: o.NoLayer})
	if err != nil {
		return err
	}
	if o.JSON {
		return report.JSON(ios.Out, b)
	}
	return live.Render(ios.Out, b, o.text(ios))
}
