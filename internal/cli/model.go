package cli

import (
	"context"
	"fmt"
	"io"
	"path"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/render"
	"github.com/fastpath-dev/fastpath/internal/report"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// ModelOptions are `fastpath model`'s flags.
type ModelOptions struct {
	Source SourceFlags
	Output // --format text|json, -v, -q
}

func newModelCommand(ios *IO) *cobra.Command {
	o := &ModelOptions{}
	cmd := &cobra.Command{
		Use:   "model CONFIG|DIR|ORG/NAME",
		Short: "Which layers of a model run fast kernels, which fall back to torch, and why",
		Long: `model reads a model's config.json (a file, a model folder, or ORG/NAME from the
local Hugging Face cache of the machine or --root: $HF_HUB_CACHE, $HF_HOME/hub,
~/.cache/huggingface/hub; never the network), counts its layers by kind the
way transformers does, and says for the selected environment which kernel
functions transformers will resolve to a package and which to torch.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunModel(cmd.Context(), o, args[0], ios)
		},
	}
	o.Source.register(cmd.Flags(), diagnoseFlags)
	addOutputFlags(cmd, &o.Output, allText, "text", "json")
	return cmd
}

// loadModels locates and judges each --model argument against the facts.
func loadModels(s *SourceFlags, f *facts.Facts, args []string) ([]*model.Report, error) {
	if len(args) == 0 {
		// No --model: nothing to read (a second source and transformers'
		// modeling files cost a doctor run 0.1 ms for nothing).
		return nil, nil
	}
	var src source.Source
	var err error
	if s.Facts != "" {
		src, err = source.Host(source.ProcessEnv(nil))
	} else {
		src, err = s.Source()
	}
	if err != nil {
		return nil, err
	}
	// The installed transformers' modeling files are read through the
	// source (so --root and --image work); saved facts carry no source.
	tc, noCode := (*modelread.TransformersCode)(nil), "diagnosing saved facts (--facts): transformers' source was not read"
	if s.Facts == "" {
		tc, noCode = modelread.TransformersFor(src, f)
	}
	var out []*model.Report
	for _, a := range args {
		loc, c, err := modelread.Load(src, a)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", a, err)
		}
		code, why := modelread.ReadCode(tc, c, noCode) // reading, then judging
		out = append(out, model.AnalyzeWithCode(a, loc, c, f, code, why))
	}
	return out, nil
}

// RunModel runs `fastpath model`.
func RunModel(ctx context.Context, o *ModelOptions, arg string, ios *IO) error {
	f, err := o.Source.Load(ctx)
	if err != nil {
		return err
	}
	reports, err := loadModels(&o.Source, f, []string{arg})
	if err != nil {
		return err
	}
	r := reports[0]
	findings := diagnose.RunWithModels(f, reports)
	if o.JSON {
		if err := report.JSON(ios.Out, r); err != nil {
			return err
		}
	} else if err := writeModelText(ios.Out, r, findings, o.text(ios)); err != nil {
		return err
	}
	for _, fd := range findings {
		if fd.Severity == finding.Error && (fd.ID == finding.FastPathFallback || fd.ID == finding.ModelWillNotLoad) {
			return findingsError{}
		}
	}
	// model answers "does every layer run its fast path?": a layer it could
	// not judge is no yes.
	if !r.Judged {
		return findingsError{}
	}
	return nil
}

// writeModelText writes the model's verdict through internal/render: the
// layers, each kernel function's resolution, the verdict line, then the
// model's findings in doctor's block (-v: whole; default: the first sentence
// and the decisive evidence). -q writes the verdict line and the findings'
// id lines only.
func writeModelText(w io.Writer, r *model.Report, findings []finding.Finding, o render.Options) error {
	p := render.NewPrinter(w, o)
	verdict := "fast path: " + r.NotJudged
	if r.Judged {
		verdict = fmt.Sprintf("fast path: %d of %d layers fall back to torch (judged from %s)", r.FallbackLayers, r.NumLayers, r.JudgedFrom)
	}
	var mine []finding.Finding
	for _, fd := range findings {
		if fd.ID == finding.FastPathFallback || fd.ID == finding.ModelWillNotLoad || fd.ID == finding.ModelNotJudged {
			mine = append(mine, fd)
		}
	}
	if o.Quiet() {
		p.Line(verdict)
		for _, fd := range mine {
			p.FindingQuiet(fd)
		}
		return p.Err()
	}
	p.Para("", p.P.B(fmt.Sprintf("%s: %s, %d layers (%s)", r.Model, model.FormatModelType(r), r.NumLayers, model.FormatLayerKinds(r.LayerKinds, r.NumLayers))))
	if r.Source != "" {
		src := r.Source
		if r.KindsFrom != "" {
			src += " (" + r.KindsFrom + ")"
		}
		p.Para("  config      ", src)
	}
	p.Para("  transformers ", orNotInstalled(r.Transformers)+" ("+r.Mechanism+")")
	if r.Code != nil {
		p.Para("  code        ", fmt.Sprintf("%s (%d kernel gates)", r.Code.File, len(r.Code.Gates)))
	}
	for _, k := range r.Kernels {
		where := ""
		if k.File != "" {
			where = fmt.Sprintf("  [%s:%d]", path.Base(k.File), k.Line)
		}
		p.Para(fmt.Sprintf("  %-34s %-8s ", k.Function, k.Resolves), k.Reason+where)
	}
	for _, k := range r.Kinds {
		for _, d := range k.Dispatch {
			p.Para("  "+k.Kind+" layers: ", d)
		}
	}
	for _, d := range r.CodeVsKB {
		p.Para("  code vs knowledge base: ", d)
	}
	if r.AttnImpl != nil {
		p.Para("  attn_implementation "+r.AttnImpl.Name+": ", r.AttnImpl.Reason)
	}
	p.Para("  hub kernels ", r.HubKernelsReason)
	for _, n := range r.Notes {
		p.Para("  note: ", n)
	}
	p.Line(p.P.B(verdict))
	for _, fd := range mine {
		p.Blank()
		p.Finding(fd, nil)
	}
	return p.Err()
}

func orNotInstalled(s string) string {
	if s == "" {
		return "(not installed)"
	}
	return s
}
