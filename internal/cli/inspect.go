package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/collect/gpu"
	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/inspect"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// InspectOptions are `fastpath inspect`'s flags.
type InspectOptions struct {
	GPUs      []string // --gpu CC (repeatable)
	Output             // --format text|json, -v, -q
	Cuobjdump bool
	All       bool // --all: with --cuobjdump, list relocatable fatbins too (cuobjdump -all)
}

func newInspectCommand(ios *IO) *cobra.Command {
	o := &InspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect FILE|DIR...",
		Short: "List the CUDA code (SASS and PTX targets) inside ELF files, cubins and fatbins",
		Long: `inspect reads the fatbin headers of shared objects, executables, .o files, bare
cubins and .fatbin files (never their payloads) and lists the SASS and PTX targets
each holds. Folders are walked (links to folders are not followed); only files with
CUDA code are listed from them. A file named on the command line is always listed.

With --gpu CC (repeatable: 9.0, sm_120, 90) each file gets a verdict per GPU: native
SASS in every fatbin, some fatbins only through PTX JIT, or fatbins with no code for
the GPU, whose kernels fail with "no kernel image is available for execution on the
device". A file installed by a package that picks its modules and cubins by GPU
(vllm, flashinfer, sgl-kernel, torchao: its dist-info RECORD names the package) that
holds code for other GPUs only is "other-gpu": expected, not an error. Exit status 1
when some file has no kernel image for a GPU.

--cuobjdump prints, per file, exactly what 'cuobjdump --list-elf FILE' and then
'cuobjdump --list-ptx FILE' print (listings on stdout, cuobjdump's messages on stderr).
Like cuobjdump, it lists the executable fatbin (.nv_fatbin, the code the CUDA runtime
loads) and, only where there is none, the relocatable one (__nv_relfatbin); --all lists
both, as 'cuobjdump -all'. Counts, targets and verdicts describe the loaded code; the
JSON's "relocatable" field describes the rest.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunInspect(o, args, ios)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.GPUs, "gpu", nil, "judge each file for a GPU of compute capability `CC` (12.0, sm_120 or 120; repeatable)")
	addOutputFlags(cmd, &o.Output, allText, "text", "json")
	f.BoolVar(&o.Cuobjdump, "cuobjdump", false, "print what cuobjdump --list-elf then --list-ptx print for each file")
	f.BoolVar(&o.All, "all", false, "with --cuobjdump: list relocatable (__nv_relfatbin) code too, as cuobjdump -all does")
	return cmd
}

// RunInspect runs `fastpath inspect PATH...`.
func RunInspect(o *InspectOptions, paths []string, ios *IO) error {
	if o.Cuobjdump && (o.JSON || len(o.GPUs) > 0) {
		return usageErrorf("--cuobjdump prints cuobjdump's listing only: it cannot be combined with --json or --gpu")
	}
	if o.All && !o.Cuobjdump {
		return usageErrorf("--all adds relocatable code to --cuobjdump's listing: give --cuobjdump too")
	}
	var gpus []cudaarch.Capability
	for _, g := range o.GPUs {
		s, err := gpu.ParseCapability(g)
		if err != nil {
			return &UsageError{Err: err}
		}
		cc, err := cudaarch.ParseCapability(s)
		if err != nil {
			return &UsageError{Err: err}
		}
		gpus = append(gpus, cc)
	}
	cwd, _ := os.Getwd()

	rep := inspect.Report{Files: []*inspect.File{}}
	var failed []string
	noKernel := false
	var werr error
	inspect.Walk(paths, func(f *inspect.File) {
		if f.Named && f.Error != "" {
			failed = append(failed, f.Path)
		}
		f.Judge(gpus)
		noKernel = noKernel || f.NoKernelImage()
		if o.Cuobjdump {
			if werr == nil {
				werr = inspect.Cuobjdump(ios.Out, ios.Err, f, cwd, o.All)
			}
			return
		}
		if o.JSON {
			f.ResolveDist() // the JSON's "dist"; text and --cuobjdump do not show it
		}
		f.Fat = nil // verdicts are made; the entries are no longer needed
		rep.Files = append(rep.Files, f)
	})
	if werr != nil {
		return werr
	}
	if !o.Cuobjdump {
		var err error
		if o.JSON {
			err = writeInspectJSON(ios, &rep)
		} else {
			err = writeInspectText(ios, &rep, paths, o.text(ios))
		}
		if err != nil {
			return err
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("could not read %s", strings.Join(failed, ", "))
	case noKernel:
		return findingsError{}
	}
	return nil
}

func writeInspectJSON(ios *IO, rep *inspect.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = ios.Out.Write(append(b, '\n'))
	return err
}

// writeInspectText writes the files table and the verdicts table through
// internal/render (cells measured in terminal columns; the WHY column wraps
// under itself). -q writes only the files that have no kernel for a GPU.
func writeInspectText(ios *IO, rep *inspect.Report, paths []string, o render.Options) error {
	p := render.NewPrinter(ios.Out, o)
	if o.Quiet() {
		for _, f := range rep.Files {
			for _, v := range f.Verdicts {
				if v.Verdict == inspect.VerdictNoKernel {
					p.Line(f.Path + "  " + v.GPU + "  " + verdictWords(v))
				}
			}
		}
		return p.Err()
	}
	if len(rep.Files) == 0 {
		p.Para("", "no CUDA code found in "+strings.Join(paths, ", "))
		return p.Err()
	}
	var rows [][]string
	for _, f := range rep.Files {
		if f.Open != nil || f.NotCUDA {
			rows = append(rows, []string{f.Path, "-", "-", "error: " + f.Error})
			continue
		}
		rows = append(rows, []string{f.Path, fmt.Sprint(f.Fatbins), fmt.Sprint(f.Entries), orDash(f.SASS), orDash(f.PTX)})
		if f.Error != "" {
			rows = append(rows, []string{"", "", "", "error: " + f.Error})
		}
	}
	p.Table([]string{"FILE", "FATBINS", "ENTRIES", "SASS", "PTX"}, rows)
	rows = nil
	for _, f := range rep.Files {
		for _, v := range f.Verdicts {
			rows = append(rows, []string{f.Path, v.GPU, verdictWords(v), v.Detail})
		}
	}
	if len(rows) > 0 {
		p.Blank()
		p.Table([]string{"FILE", "GPU", "VERDICT", "WHY"}, rows)
	}
	return p.Err()
}

func verdictWords(v inspect.Verdict) string {
	switch v.Verdict {
	case inspect.VerdictNative:
		return "runs (native SASS)"
	case inspect.VerdictFamily:
		return "runs (family SASS)"
	case inspect.VerdictPTXJIT:
		return "runs via PTX JIT"
	case inspect.VerdictNoKernel:
		return "NO KERNEL IMAGE"
	case inspect.VerdictOtherGPU:
		return "for other GPUs (expected)"
	}
	return v.Verdict
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, " ")
}
