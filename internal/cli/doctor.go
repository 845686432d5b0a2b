package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/live"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/render"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// DoctorOptions are `fastpath doctor`'s flags.
type DoctorOptions struct {
	Source SourceFlags
	Output          // --format text|json|markdown|prom|nfd (--json, --markdown are aliases), -v, -q
	Models []string // --model CONFIG|DIR|ORG/NAME (repeatable)
	Live   LiveFlags
	// JSONLines: one line of JSON labelled with the node's name (diff.go).
	JSONLines bool
}

func newDoctorCommand(ios *IO) *cobra.Command {
	o := &DoctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Diagnose this machine, a container rootfs, or saved facts",
		Long: `doctor collects the facts of the machine (or --root DIR, or --facts FILE),
judges them against fastpath's knowledge base, and prints the findings with
their evidence and the commands that fix them. Nothing from the inspected
environment is executed; on the live host only nvcc --version, gcc
-dumpfullversion and nvidia-smi are run, each with a timeout. With --live
(live host only) the selected interpreter also runs fastpath's probe, and
wherever its answers differ from the static reading a finding says so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("live-timeout") && !o.Live.Enabled {
				return usageErrorf("--live-timeout limits the probe of --live: give --live too")
			}
			return RunDoctor(cmd.Context(), o, ios)
		},
	}
	o.Source.register(cmd.Flags(), diagnoseFlags)
	addOutputFlags(cmd, &o.Output, allText, "text", "json", "markdown", "prom", "nfd")
	cmd.Flags().StringArrayVar(&o.Models, "model", nil, "also judge this model's layers: `CONFIG|DIR|ORG/NAME` (repeatable)")
	o.Live.register(cmd.Flags())
	cmd.Flags().BoolVar(&o.JSONLines, "json-lines", false, "print the JSON report on one line with the node's name, for many nodes on one stream (srun --label ... | fastpath diff -)")
	cmd.Flags().BoolVar(&o.Source.Timings, "timings", false, "also show each collector's time and the files and bytes it read (JSON: facts.timings; see docs/speed.md)")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown", "format", "json-lines")
	return cmd
}

// RunDoctor runs `fastpath doctor`.
func RunDoctor(ctx context.Context, o *DoctorOptions, ios *IO) error {
	tuneGC()
	format, err := o.format()
	if err != nil {
		return err
	}
	if err := o.Live.check(&o.Source); err != nil {
		return err
	}
	f, err := o.Source.Load(ctx)
	if err != nil {
		return err
	}
	models, err := loadModels(&o.Source, f, o.Models)
	if err != nil {
		return err
	}
	if err := o.Live.probe(ctx, &o.Source, f, models, ios); err != nil {
		return err
	}
	switch format {
	case "prom", "nfd":
		return renderCluster(format, f, models, ios)
	}
	if o.JSONLines {
		return renderDoctorLine(f, models, ios)
	}
	return renderDoctor(f, models, format, o.text(ios), ios)
}

func renderDoctor(f *facts.Facts, models []*model.Report, format string, text render.Options, ios *IO) error {
	findings := diagnose.RunWithModels(f, models)
	if models == nil {
		models = []*model.Report{}
	}
	// The report is written in pieces (a text report in about twenty):
	// gathered here, it leaves in one write per 64 KB instead of a system
	// call each.
	out := bufio.NewWriterSize(ios.Out, 64<<10)
	var err error
	switch {
	case format == "json":
		err = report.JSON(out, report.Doctor{Schema: facts.Schema, Facts: f, Findings: findings, Models: models})
	case format == "markdown":
		err = report.Markdown(out, f, findings)
	default:
		err = report.Text(out, f, findings, text, models...)
		if err == nil && f.Live != nil && !text.Quiet() {
			fmt.Fprintln(out)
			live.RenderProbe(out, f.Live, text)
		}
		if err == nil && f.Timings != nil && !text.Quiet() {
			fmt.Fprintln(out)
			err = report.Timings(out, f.Timings)
		}
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	for _, fd := range findings {
		if fd.Severity == finding.Error {
			return findingsError{}
		}
	}
	return nil
}

// tuneGC: a doctor run lives for tens of milliseconds, so collecting
// garbage at every doubling of a small heap is wasted work (GOGC=400 saved
// about a fifth of its CPU); a soft limit keeps a 5,000-distribution
// environment near 64 MB of RSS instead of 90 (docs/speed.md). GOGC and
// GOMEMLIMIT, when set, win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(48 << 20)
	}
	// More than eight Ps only spin: the work is system calls that wait, and
	// idle Ps look for work between them. On the 16-core H200 eight were
	// faster (37.4 ms against 39.3, medians of 10) and burned 47 ms less CPU
	// (docs/speed.md, "GPU host and startup"). GOMAXPROCS, when set, wins.
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) > maxDoctorProcs {
		runtime.GOMAXPROCS(maxDoctorProcs)
	}
}

// maxDoctorProcs caps the Ps of a doctor run (tuneGC).
const maxDoctorProcs = 8
