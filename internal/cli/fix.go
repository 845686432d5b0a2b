package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/plan"
	"github.com/fastpath-dev/fastpath/internal/render"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// FixOptions are `fastpath fix`'s flags.
type FixOptions struct {
	Plan  PlanOptions
	Apply bool
	Yes   bool
	// stdinIsTerminal is isTerminalReader by default; tests replace it.
	stdinIsTerminal func(io.Reader) bool
	// collectAgain re-collects the live facts just before anything runs
	// (Plan.Source.Load by default); tests replace it.
	collectAgain func(context.Context) (*facts.Facts, error)
}

// maxAnswer caps how much of stdin the confirmation prompt reads: an answer
// is "y" or "yes"; a stdin of /dev/zero must not be read to exhaustion (F11).
const maxAnswer = 256

func newFixCommand(ios *IO) *cobra.Command {
	o := &FixOptions{}
	cmd := &cobra.Command{
		Use:   "fix",
		Short: "Show the plan; with --apply, run the best step of each finding and diagnose again",
		Long: `fix shows the plan (see fastpath plan). With --apply it runs, in order, the best
viable step of each finding (never a manual one, such as rebuilding an image),
streaming their output, after asking for confirmation (--yes skips it; without
a terminal on stdin --yes is required). It stops at the first command that
fails and shows the step and its output. Then it runs doctor again, carrying
the variables the steps exported, and prints which findings went away, remain
or appeared. Nothing is changed without --apply, and never with --root,
--image or --facts: --apply runs only on the live host whose facts made the
plan, and just before running it collects the facts again and refuses if they
changed. Ctrl-C or SIGTERM stops the running command's whole process group.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunFix(cmd.Context(), o, ios)
		},
	}
	o.Plan.register(cmd.Flags(), false)
	addOutputFlags(cmd, &o.Plan.Output, allText, "text")
	cmd.Flags().BoolVar(&o.Apply, "apply", false, "carry out the plan (otherwise it is only shown)")
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "do not ask for confirmation")
	return cmd
}

// RunFix runs `fastpath fix`.
func RunFix(ctx context.Context, o *FixOptions, ios *IO) error {
	// F1: a plan made from an image, a root or saved facts describes some
	// other machine; its commands (an image's venv path, its apt packages)
	// must never run here.
	if o.Apply && (o.Plan.Source.Root != "" || o.Plan.Source.Image != "" || o.Plan.Source.Platform != "" || o.Plan.Source.Facts != "") {
		return usageErrorf("fix --apply changes the live machine only: not with --root, --image or --facts (run `fastpath plan` to see the steps)")
	}
	if o.Yes && !o.Apply {
		return usageErrorf("--yes answers fix --apply's question: give it with --apply, or leave it out")
	}
	planFacts, before, pl, err := o.Plan.make(ctx)
	if err != nil {
		return err
	}
	if o.Apply && (planFacts.Source.Kind != source.KindHost || !planFacts.Source.Live) {
		return usageErrorf("fix --apply changes the live machine only: the plan was made from %s", planFacts.Source.Kind)
	}
	if !o.Apply {
		if err := plan.WriteText(ios.Out, pl, o.Plan.text(ios)); err != nil {
			return err
		}
		if len(pl.Steps) > 0 {
			fmt.Fprintln(ios.Out, "\nNothing was changed. `fastpath fix --apply` runs the first viable step of each finding.")
		}
		return nil
	}
	best := pl.Best()
	// What --apply shows goes through internal/render: prose wraps under a
	// hanging indent, commands stay on one line.
	p := render.NewPrinter(ios.Out, o.Plan.text(ios))
	for _, n := range pl.Notes {
		p.Para("note: ", n)
	}
	if len(best) == 0 {
		if len(pl.Steps) == 0 {
			p.Line("Nothing to fix.")
		} else {
			p.Para("", "No step can be applied here (see `fastpath plan`: every option is manual or has a failing precondition).")
		}
		return p.Err()
	}
	p.Line("fix --apply will run " + render.Count(len(best), "step", "steps") + ":")
	for i, s := range best {
		p.Para(fmt.Sprintf("  %d. ", i+1), "["+string(s.Finding)+"] "+s.Title)
		for _, c := range s.Commands {
			p.Cmd("       ", c)
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	if !o.Yes {
		isTTY := o.stdinIsTerminal
		if isTTY == nil {
			isTTY = isTerminalReader
		}
		if !isTTY(ios.In) {
			return errors.New("refusing to change anything without --yes: stdin is not a terminal to confirm on")
		}
		if !confirm(ios.In, ios.Out) {
			fmt.Fprintln(ios.Out, "Nothing was changed.")
			return nil
		}
	}
	// F1: the machine may have changed while the plan was shown (or while
	// the prompt waited): run only if the facts that chose the steps still
	// hold.
	again := o.collectAgain
	if again == nil {
		again = o.Plan.Source.Load
	}
	now, err := again(ctx)
	if err != nil {
		return fmt.Errorf("collecting the facts again before running: %w", err)
	}
	if a, b := factsFingerprint(planFacts), factsFingerprint(now); a != b {
		return fmt.Errorf("refusing to run: this machine's facts changed since the plan was made (fingerprint %.12s, now %.12s); run `fastpath fix` again", a, b)
	}
	overrides, err := source.ParseEnv(o.Plan.Source.Env)
	if err != nil {
		return &UsageError{Err: err}
	}
	// Ctrl-C or SIGTERM cancels ctx; the runner then kills the running
	// command's process group, and fix stops there.
	runCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &plan.Runner{Env: source.ProcessEnv(overrides).List(), Out: ios.Out}
	res := r.Run(runCtx, best)
	if runCtx.Err() != nil && ctx.Err() == nil {
		stop()
		fmt.Fprintf(ios.Out, "\nINTERRUPTED: the running command's process group was stopped; %d of %d steps completed.\n", len(res.Ran), len(best))
		return errors.New("interrupted by a signal")
	}
	if res.Failed != nil {
		fmt.Fprintf(ios.Out, "\nFAILED: step %q (%s) for %s\n  command: %s\n  error: %v\n  its output (end):\n%s\n",
			res.Failed.Title, res.Failed.ID, res.Failed.Finding, res.Command, res.Err, indent(res.Output, "    "))
	}
	if len(res.Exports) > 0 {
		fmt.Fprintln(ios.Out, "\nThe steps exported these for their own commands and doctor's second look; put them in your shell or profile:")
		for _, e := range res.Exports {
			k, v, _ := strings.Cut(e, "=")
			fmt.Fprintf(ios.Out, "  export %s=%s\n", k, diagnose.ShellQuote(v))
		}
	}
	after := o.Plan.Source
	after.Env = append(append([]string{}, after.Env...), res.Exports...)
	_, _, findings, err := o.Plan.diagnose(ctx, after)
	if err != nil {
		return fmt.Errorf("doctor after the steps: %w", err)
	}
	writeBeforeAfter(ios.Out, before, findings)
	if res.Failed != nil {
		return fmt.Errorf("step %s failed: %v", res.Failed.ID, res.Err)
	}
	for _, fd := range findings {
		if fd.Severity == finding.Error {
			return findingsError{}
		}
	}
	return nil
}

// writeBeforeAfter prints which finding ids went away, remain, appeared.
func writeBeforeAfter(w io.Writer, before, after []finding.Finding) {
	count := func(fs []finding.Finding) map[finding.ID]int {
		m := map[finding.ID]int{}
		for _, f := range fs {
			m[f.ID]++
		}
		return m
	}
	b, a := count(before), count(after)
	var gone, remain, appeared []string
	for id := range b {
		if a[id] == 0 {
			gone = append(gone, string(id))
		} else {
			remain = append(remain, string(id))
		}
	}
	for id := range a {
		if b[id] == 0 {
			appeared = append(appeared, string(id))
		}
	}
	list := func(ids []string) string {
		if len(ids) == 0 {
			return "(none)"
		}
		sort.Strings(ids)
		return strings.Join(ids, ", ")
	}
	fmt.Fprintf(w, "\ndoctor before -> after: %s -> %s\n", render.Count(len(before), "finding", "findings"), render.Count(len(after), "finding", "findings"))
	fmt.Fprintf(w, "  gone:     %s\n  remain:   %s\n  appeared: %s\n", list(gone), list(remain), list(appeared))
}

func indent(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return prefix + "(no output)"
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// confirm asks on out and reads one answer from in: yes for "y" or "yes".
// It reads at most maxAnswer bytes, whatever in is.
func confirm(in io.Reader, out io.Writer) bool {
	fmt.Fprint(out, "Run them? [y/N] ")
	line, _ := bufio.NewReader(io.LimitReader(in, maxAnswer)).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

// isTerminalReader reports whether r is a terminal (render.Terminal: a
// tcgetattr that succeeds, so /dev/null and /dev/zero, which are character
// devices but not terminals, are not; F11).
func isTerminalReader(r io.Reader) bool { return render.Terminal(r) }

// factsFingerprint is a SHA-256 of the facts a plan is made from, leaving
// out what changes on its own from one second to the next (free memory,
// GPU memory in use and the processes holding it, collection warnings, and
// --timings' figures).
func factsFingerprint(f *facts.Facts) string {
	c := *f
	c.OS.MemAvail = 0
	c.Timings = nil
	c.Warnings = nil
	c.Live = nil
	c.GPU.Processes = nil
	c.GPU.Devices = append([]facts.Device(nil), f.GPU.Devices...)
	for i := range c.GPU.Devices {
		c.GPU.Devices[i].MemoryUsedMiB = 0
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
