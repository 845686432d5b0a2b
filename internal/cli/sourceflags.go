package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/collect/gpu"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// SourceFlags are the flags shared by every command that looks at a machine.
type SourceFlags struct {
	Root   string   // --root DIR: treat DIR as /
	Python string   // --python PATH
	GPUs   []string // --gpu CC (repeatable)
	Env    []string // --env K=V (repeatable)
	Facts  string   // --facts FILE: diagnose saved facts
	// Image is --image REF|ARCHIVE.tar|OCI_DIR: a container image read
	// layer by layer, never run nor unpacked; Platform picks one from a
	// multi-platform image.
	Image    string
	Platform string
	// Timings is --timings: record each collector's time and reads.
	Timings bool

	// image is the image once opened: reading one costs a pass over its
	// layers, and doctor --model asks for the source twice (facts, models).
	image source.Source
}

// sourceFlagSet names the groups of source flags; a command registers
// only the groups it honours (TestEveryFlagIsRead checks the reads).
type sourceFlagSet uint

const (
	withRoot   sourceFlagSet = 1 << iota // --root DIR
	withImage                            // --image and --platform
	withPython                           // --python PATH
	withGPU                              // --gpu CC: replaces the detected GPUs in the facts
	withEnv                              // --env K=V
	withFacts                            // --facts FILE

	// machineFlags read a machine: the live host, a root or an image.
	machineFlags = withRoot | withImage | withPython | withGPU | withEnv
	// diagnoseFlags also take saved facts instead of a machine.
	diagnoseFlags = machineFlags | withFacts
)

func (s *SourceFlags) register(fs *pflag.FlagSet, groups sourceFlagSet) {
	if groups&withRoot != 0 {
		fs.StringVar(&s.Root, "root", "", "treat `DIR` as / (a container's rootfs or a copy); nothing is run there")
	}
	if groups&withPython != 0 {
		fs.StringVar(&s.Python, "python", "", "the interpreter or environment `PATH` to diagnose (default: python3 on PATH)")
	}
	if groups&withGPU != 0 {
		fs.StringArrayVar(&s.GPUs, "gpu", nil, "diagnose for a GPU of compute capability `CC` (12.0 or sm_120; repeatable; replaces detected GPUs)")
	}
	if groups&withEnv != 0 {
		fs.StringArrayVar(&s.Env, "env", nil, "assume environment variable `K=V` (repeatable)")
	}
	if groups&withImage != 0 {
		fs.StringVar(&s.Image, "image", "", "diagnose the container image `REF|ARCHIVE.tar[:TAG]|OCI_DIR[:TAG|@DIGEST]` (a registry reference, a docker-save archive or an OCI layout folder; anything that looks like a path is one) without a daemon; nothing is run or unpacked")
		fs.StringVar(&s.Platform, "platform", "", "with --image: the `OS/ARCH` to pick from a multi-platform image (default "+imagesource.DefaultPlatform+")")
	}
	if groups&withFacts != 0 {
		fs.StringVar(&s.Facts, "facts", "", "diagnose the facts saved in `FILE` (from `fastpath facts`) instead of a machine")
	}
}

// Source opens the source the flags name: the live host, --root or --image.
func (s *SourceFlags) Source() (source.Source, error) {
	return s.SourceContext(context.Background())
}

// SourceContext is Source with the command's context: an image's registry
// requests and layer reads stop when it is cancelled.
func (s *SourceFlags) SourceContext(ctx context.Context) (source.Source, error) {
	overrides, err := source.ParseEnv(s.Env)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if s.Platform != "" && s.Image == "" {
		return nil, usageErrorf("--platform needs --image")
	}
	if s.Image != "" {
		if s.Root != "" {
			return nil, usageErrorf("--image and --root name two different sources; give one")
		}
		if s.image != nil {
			return s.image, nil
		}
		img, err := imagesource.Open(ctx, s.Image, imagesource.Options{Platform: s.Platform, Env: overrides, Needs: collect.Needs})
		if err != nil {
			return nil, err
		}
		s.image = img
		return img, nil
	}
	if s.Root != "" {
		src, err := source.Root(s.Root, overrides)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		return src, nil
	}
	return source.Host(source.ProcessEnv(overrides))
}

// Load returns the facts, read from --facts or collected from the source,
// completed with today's KB judgements (diagnose.Complete) for the commands
// that judge them.
func (s *SourceFlags) Load(ctx context.Context) (*facts.Facts, error) {
	f, err := s.Observe(ctx)
	if err == nil {
		diagnose.Complete(f)
	}
	return f, err
}

// Observe returns the facts as observed: what `fastpath facts` prints and a
// saved facts file holds, with no KB verdict in them.
func (s *SourceFlags) Observe(ctx context.Context) (*facts.Facts, error) {
	if s.Facts != "" {
		if s.Root != "" || s.Image != "" || s.Python != "" || len(s.Env) > 0 {
			return nil, usageErrorf("--facts cannot be combined with --root, --image, --python or --env")
		}
		if s.Timings {
			return nil, usageErrorf("--timings measures collecting the facts: --facts reads saved ones, nothing is collected")
		}
		f, err := readFacts(s.Facts, s.GPUs)
		if err == nil {
			f.ClearJudgements() // an older fastpath saved its KB's verdicts
		}
		return f, err
	}
	for _, g := range s.GPUs {
		if _, err := gpu.ParseCapability(g); err != nil {
			return nil, &UsageError{Err: err}
		}
	}
	src, err := s.SourceContext(ctx)
	if err != nil {
		return nil, err
	}
	o := collect.Options{Python: s.Python, GPUs: s.GPUs, ToolVersion: Version, Timings: s.Timings}
	if os.Getenv("FASTPATH_TRACE") != "" {
		o.Trace = os.Stderr
	}
	f := collect.Collect(ctx, src, o)
	if img, ok := src.(*imagesource.Source); ok && o.Trace != nil {
		st := img.Stats()
		fmt.Fprintf(o.Trace, "fastpath: image: %d layer passes (%d for reads the first pass did not keep), %d MiB streamed, %d MiB kept, %d reads served from it\n",
			st.LayerPasses, st.Rereads, st.StreamBytes>>20, st.KeptBytes>>20, st.KeptReads)
	}
	if w, ok := src.(interface{ Warnings() []string }); ok {
		// An image's rejected entries come first: they may explain what
		// the collectors then could not find.
		f.Warnings = append(append([]string{}, w.Warnings()...), f.Warnings...)
	}
	return f, nil
}

// Caps on a --facts file (SECURITY.md): it may come from another machine.
// Real facts files are tens to hundreds of KB; a few MB of JSON already
// decodes to a hundred MB of strings.
const (
	maxFactsBytes    = 8 << 20 // the file is read up to this, and refused past it
	maxFactsWarnings = 1000    // warnings past this are counted, not kept
)

func readFacts(path string, gpus []string) (*facts.Facts, error) {
	fh, err := os.Open(path) // a FIFO is allowed: --facts <(ssh host fastpath facts)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxFactsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFactsBytes {
		return nil, fmt.Errorf("--facts %s: larger than %d MiB, more than any facts file", path, maxFactsBytes>>20)
	}
	var f facts.Facts
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("--facts %s: %w", path, err)
	}
	if f.Schema != facts.Schema {
		return nil, fmt.Errorf("--facts %s: schema %q, want %q", path, f.Schema, facts.Schema)
	}
	if n := len(f.Warnings); n > maxFactsWarnings {
		f.Warnings = append(f.Warnings[:maxFactsWarnings:maxFactsWarnings], fmt.Sprintf("(%d more warnings in %s not shown)", n-maxFactsWarnings, path))
	}
	if len(gpus) > 0 {
		devs, err := gpu.OverrideDevices(gpus)
		if err != nil {
			return nil, &UsageError{Err: err}
		}
		f.GPU.Devices, f.GPU.Overridden = devs, true
	}
	return &f, nil
}
