package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/fleet"
	"github.com/fastpath-dev/fastpath/internal/remote"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// RemoteOptions are `fastpath remote`'s flags.
type RemoteOptions struct {
	Via      string
	Targets  string // --targets FILE
	Parallel int
	Timeout  time.Duration
	Output   // --format text|json|markdown, -v, -q
	All      bool
	Save     string // --save DIR: each target's doctor report
	// Doctor flags passed to doctor on every target.
	Source SourceFlags
	Models []string
}

func newRemoteCommand(ios *IO) *cobra.Command {
	o := &RemoteOptions{}
	cmd := &cobra.Command{
		Use:   "remote --via TEMPLATE TARGET...",
		Short: "Diagnose other machines or containers through ssh, docker exec, kubectl exec...",
		Long: `remote runs fastpath doctor on each TARGET through your own transport and
compares the results. TEMPLATE is the command that reaches a target, with {}
where the target goes; it is split into words like a shell would, and not run
by a shell:

  fastpath remote --via 'ssh {}' gpu-01 gpu-02
  fastpath remote --via 'ssh -p 2222 -o BatchMode=yes {}' --targets hosts.txt
  fastpath remote --via 'docker exec -i {}' trainer-0 trainer-1
  fastpath remote --via 'kubectl exec -i {} --' pod/trainer-0 pod/trainer-1
  fastpath remote --via 'pct exec {} --' 101 102

fastpath runs a small POSIX sh script on the target: when ~/.cache/fastpath
holds no fastpath of this exact build, it sends its own (static) binary
through the transport's standard input, then runs doctor --json there. An
ssh template gets the script as one quoted string (ssh hands it to the login
shell); any other template gets "sh -c SCRIPT" as three arguments. Targets
run --parallel at a time, each within --timeout (its processes are killed
after it); one that fails, refuses or hangs is reported with the end of its
stderr and never stops the others. The report lists every target, then the
facts that differ between those that answered.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunRemote(cmd, o, args, ios)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Via, "via", "", "transport `TEMPLATE` with {} for the target (required)")
	f.StringVar(&o.Targets, "targets", "", "read targets from `FILE`, one per line (# comments)")
	f.IntVar(&o.Parallel, "parallel", 16, "diagnose `N` targets at a time")
	f.DurationVar(&o.Timeout, "timeout", 60*time.Second, "give each target at most `DURATION`, sending the binary included")
	addOutputFlags(cmd, &o.Output, verboseFlag|quietFlag, "text", "json", "markdown")
	f.BoolVar(&o.All, "all", false, "also print the facts every target agrees on")
	f.StringVar(&o.Save, "save", "", "write each target's doctor report to `DIR`/TARGET.json (for fastpath diff)")
	o.Source.register(f, withRoot|withPython|withGPU|withEnv) // passed on to doctor on each target (doctorArgs)
	f.StringArrayVar(&o.Models, "model", nil, "also judge this model on each target: `CONFIG|DIR|ORG/NAME` (repeatable)")
	return cmd
}

// doctorArgs are the doctor flags to pass on to every target.
func (o *RemoteOptions) doctorArgs() []string {
	var args []string
	if o.Source.Root != "" {
		args = append(args, "--root", o.Source.Root)
	}
	if o.Source.Python != "" {
		args = append(args, "--python", o.Source.Python)
	}
	for _, g := range o.Source.GPUs {
		args = append(args, "--gpu", g)
	}
	for _, e := range o.Source.Env {
		args = append(args, "--env", e)
	}
	for _, m := range o.Models {
		args = append(args, "--model", m)
	}
	return args
}

// maxTargets caps the targets of one run (a target list is untrusted input).
const maxTargets = 100_000

// readTargets reads a targets file: one per line, blanks and # comments
// skipped; lines longer than 64 KiB and lists over maxTargets are refused.
func readTargets(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if len(out) >= maxTargets {
			return nil, fmt.Errorf("%s: over %d targets", path, maxTargets)
		}
		line := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

// RunRemote runs `fastpath remote`.
func RunRemote(cmd *cobra.Command, o *RemoteOptions, args []string, ios *IO) error {
	if o.Via == "" {
		return usageErrorf("--via TEMPLATE is required, e.g. --via 'ssh {}'")
	}
	if o.All && o.JSON {
		return usageErrorf("--all is for text and Markdown: the JSON already holds every fact compared")
	}
	tmpl, err := remote.ParseTemplate(o.Via)
	if err != nil {
		return &UsageError{Err: err}
	}
	targets := append([]string(nil), args...)
	if o.Targets != "" {
		more, err := readTargets(o.Targets)
		if err != nil {
			return &UsageError{Err: err}
		}
		targets = append(targets, more...)
	}
	seen := map[string]bool{}
	uniq := targets[:0]
	for _, t := range targets {
		if err := remote.CheckTarget(t); err != nil {
			return &UsageError{Err: err}
		}
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	targets = uniq
	if len(targets) == 0 {
		return usageErrorf("no targets: name them as arguments or with --targets FILE")
	}
	if o.Parallel < 1 {
		return usageErrorf("--parallel %d: at least 1", o.Parallel)
	}
	if o.Timeout <= 0 {
		return usageErrorf("--timeout %s: must be positive", o.Timeout)
	}
	// The running binary is what goes to the targets: read it once, share it.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		return fmt.Errorf("reading fastpath's own binary to send: %w", err)
	}
	cfg := remote.Config{Template: tmpl, Binary: bin, Version: Version, DoctorArgs: o.doctorArgs(), Parallel: o.Parallel, Timeout: o.Timeout}
	progress := isTerminal(ios.Err)
	if progress {
		cfg.Progress = func(done, total int, r *remote.Result) {
			fmt.Fprintf(ios.Err, "\r\x1b[K[%d/%d] %s: %s", done, total, r.Target, r.Status)
		}
	}
	// Memory stays flat however many targets: as each finishes, its report
	// is saved (--save) and spooled to disk (--json), and only a slim copy
	// (what the comparison reads) is kept.
	if o.Save != "" {
		if err := os.MkdirAll(o.Save, 0o755); err != nil {
			return err
		}
	}
	var spool *fleet.Spool
	if o.JSON {
		if spool, err = fleet.NewSpool(); err != nil {
			return err
		}
		defer spool.Remove()
	}
	var keepErr error
	cfg.Finished = func(i int, r *remote.Result) {
		if r.Doctor == nil {
			return
		}
		if o.Save != "" && keepErr == nil {
			keepErr = saveReport(o.Save, r)
		}
		if spool != nil && keepErr == nil {
			keepErr = spool.Put(i, r.Doctor)
		}
		r.Doctor = fleet.Slim(r.Doctor)
	}
	// Ctrl-C, SIGTERM or a lost terminal end the run: remote.Run kills every
	// transport still running (and its children), starts no more, and the
	// report below still lists what each target came to.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	results := remote.Run(ctx, cfg, targets)
	interrupted := ctx.Err() != nil && cmd.Context().Err() == nil
	stop()
	if progress {
		fmt.Fprint(ios.Err, "\r\x1b[K")
	}
	if keepErr != nil {
		return keepErr
	}
	rep := fleet.NewReport(results)
	opts := fleet.Options{All: o.All || o.Verbose, Quiet: o.Quiet}
	switch {
	case o.JSON:
		err = rep.WriteJSON(ios.Out, spool.Get)
	case o.Markdown:
		err = rep.Markdown(ios.Out, opts)
	default:
		err = rep.Text(ios.Out, opts)
	}
	if err != nil {
		return err
	}
	failed, withErrors := 0, 0
	for _, r := range results {
		switch r.Status {
		case remote.StatusFailed, remote.StatusTimeout:
			failed++
		case remote.StatusFindings:
			withErrors++
		}
	}
	if interrupted {
		return fmt.Errorf("interrupted: %d of %d targets could not be diagnosed; their processes were killed", failed, len(results))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d targets could not be diagnosed", failed, len(results))
	}
	if withErrors > 0 {
		return findingsError{}
	}
	return nil
}

// saveReport writes an answered target's doctor report as DIR/NAME.json,
// NAME being the target with path separators replaced.
func saveReport(dir string, r *remote.Result) error {
	name := strings.NewReplacer("/", "_", "\\", "_").Replace(r.Target)
	f, err := os.Create(filepath.Join(dir, name+".json"))
	if err != nil {
		return err
	}
	err = report.JSON(f, r.Doctor)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
