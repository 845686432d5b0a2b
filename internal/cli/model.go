package cli

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/report"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// ModelOptions are `fastpath model`'s flags.
type ModelOptions struct {
	Source SourceFlags
	JSON   bool
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
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON (the model report of docs/model.md, with per-function verdicts)")
	return cmd
}

// loadModels locates and judges each --model argument against the facts.
func loadModels(s *SourceFlags, f *facts.Facts, args []string) ([]*model.Report, error) {
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
	} else {
		writeModelText(ios.Out, r, findings)
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

func writeModelText(w io.Writer, r *model.Report, findings []finding.Finding) {
	fmt.Fprintf(w, "%s: %s, %d layers (%s)\n", r.Model, r.ModelType, r.NumLayers, model.FormatLayerKinds(r.LayerKinds, r.NumLayers))
	if r.Source != "" {
		fmt.Fprintf(w, "  config      %s (%s)\n", r.Source, r.KindsFrom)
	}
	fmt.Fprintf(w, "  transformers %s (%s)\n", orNotInstalled(r.Transformers), r.Mechanism)
	if r.Code != nil {
		fmt.Fprintf(w, "  code        %s (%d kernel gates)\n", r.Code.File, len(r.Code.Gates))
	}
	for _, k := range r.Kernels {
		where := ""
		if k.File != "" {
			where = fmt.Sprintf("  [%s:%d]", path.Base(k.File), k.Line)
		}
		fmt.Fprintf(w, "  %-34s %-8s %s%s\n", k.Function, k.Resolves, k.Reason, where)
	}
	for _, k := range r.Kinds {
		for _, d := range k.Dispatch {
			fmt.Fprintf(w, "  %s layers: %s\n", k.Kind, d)
		}
	}
	for _, d := range r.CodeVsKB {
		fmt.Fprintf(w, "  code vs knowledge base: %s\n", d)
	}
	if r.AttnImpl != nil {
		fmt.Fprintf(w, "  attn_implementation %s: %s\n", r.AttnImpl.Name, r.AttnImpl.Reason)
	}
	fmt.Fprintf(w, "  hub kernels %s\n", r.HubKernelsReason)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	if r.Judged {
		fmt.Fprintf(w, "fast path: %d of %d layers fall back to torch (judged from %s)\n", r.FallbackLayers, r.NumLayers, r.JudgedFrom)
	} else {
		fmt.Fprintf(w, "fast path: %s\n", r.NotJudged)
	}
	for _, fd := range findings {
		if fd.ID != finding.FastPathFallback && fd.ID != finding.ModelWillNotLoad && fd.ID != finding.ModelNotJudged {
			continue
		}
		fmt.Fprintf(w, "%s  %s  [%s]\n  %s\n", strings.ToUpper(string(fd.Severity)), fd.Title, fd.ID, fd.Detail)
		for _, fx := range fd.Fixes {
			fmt.Fprintf(w, "  fix: %s\n", fx.Title)
			for _, c := range fx.Commands {
				fmt.Fprintf(w, "    $ %s\n", c)
			}
		}
	}
}

func orNotInstalled(s string) string {
	if s == "" {
		return "(not installed)"
	}
	return s
}
