package cli

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/plan"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// PlanOptions are `fastpath plan`'s flags (and fix's, which shows a plan).
type PlanOptions struct {
	Source    SourceFlags
	Models    []string // --model CONFIG|DIR|ORG/NAME (repeatable)
	Offline   bool
	NoIndex   bool
	IndexURLs []string
	FindLinks []string
	Output    // --format text|json, -v, -q (fix: text)
	// githubAPI and timeout let tests point lookups at loopback servers.
	githubAPI string
	timeout   time.Duration
}

func (o *PlanOptions) register(fs *pflag.FlagSet, withJSON bool) {
	o.Source.register(fs, diagnoseFlags)
	fs.StringArrayVar(&o.Models, "model", nil, "also plan for this model's kernel packages: `CONFIG|DIR|ORG/NAME` (repeatable)")
	fs.BoolVar(&o.Offline, "offline", false, "look nothing up: wheel names are given unverified")
	fs.BoolVar(&o.NoIndex, "no-index", false, "pip --no-index: install only from --find-links locations (no GitHub lookups either)")
	fs.StringArrayVar(&o.IndexURLs, "index-url", nil, "a PEP 503/691 package index `URL` to look wheels up in and install from (repeatable)")
	fs.StringArrayVar(&o.FindLinks, "find-links", nil, "a folder or page of wheels, `DIR|URL`, as pip's --find-links (repeatable)")
}

func newPlanCommand(ios *IO) *cobra.Command {
	o := &PlanOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Ordered, concrete steps that fix what doctor finds, best first",
		Long: `plan diagnoses like doctor, then weighs the ways to fix each finding with the
facts: for a missing kernel package (--model) its prebuilt wheel for this exact
torch/CUDA/ABI/Python (looked up in --index-url, --find-links and its GitHub
releases unless --offline), a compiler and a source build, conda, NVIDIA's apt
packages, a devel image, Hugging Face Hub kernels. Each step shows the
preconditions it checked and why it ranks where it does. plan changes nothing;
fix --apply runs the best viable step of each finding.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunPlan(cmd.Context(), o, ios)
		},
	}
	o.register(cmd.Flags(), true)
	addOutputFlags(cmd, &o.Output, allText, "text", "json")
	return cmd
}

// RunPlan runs `fastpath plan`.
func RunPlan(ctx context.Context, o *PlanOptions, ios *IO) error {
	_, _, pl, err := o.make(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		return report.JSON(ios.Out, pl)
	}
	return plan.WriteText(ios.Out, pl, o.text(ios))
}

// make collects, diagnoses and plans.
func (o *PlanOptions) make(ctx context.Context) (*facts.Facts, []finding.Finding, *plan.Plan, error) {
	f, models, findings, err := o.diagnose(ctx, o.Source)
	if err != nil {
		return nil, nil, nil, err
	}
	po := plan.Options{Offline: o.Offline, NoIndex: o.NoIndex, IndexURLs: o.IndexURLs, FindLinks: o.FindLinks,
		GitHubAPI: o.githubAPI, Timeout: o.timeout}
	if f.Source.Live && o.Source.Facts == "" {
		euid := os.Geteuid()
		po.Euid = &euid
		po.DiskFree = diskFree
	}
	pl := plan.Build(ctx, plan.Input{Facts: f, Findings: findings, Models: models}, po)
	return f, findings, pl, nil
}

// diagnose collects with s and runs doctor's checks with the --model flags.
func (o *PlanOptions) diagnose(ctx context.Context, s SourceFlags) (*facts.Facts, []*model.Report, []finding.Finding, error) {
	f, err := s.Load(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	models, err := loadModels(&s, f, o.Models)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, models, diagnose.RunWithModels(f, models), nil
}

// diskFree is the free space of the file system holding path (live host).
func diskFree(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
