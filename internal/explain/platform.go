package explain

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

// The fix helpers word commands for the Linux machine fastpath runs on.
// A log from macOS, Windows or WSL needs other words: CUDA does not exist
// on macOS; Windows installs CUDA with NVIDIA's installer and builds with
// MSVC; WSL takes the toolkit from NVIDIA's wsl-ubuntu repository and the
// driver from Windows. And a command that depends on a fact nobody knows
// is no command at all: it becomes a manual step that says what is
// missing.

// cudaOnly are the findings about building or running CUDA code.
var cudaOnly = map[finding.ID]bool{
	finding.NoCUDACompiler: true, finding.CUDACompilerNotDiscoverable: true, finding.CUDAHomeInvalid: true,
	finding.NVCCTorchCUDAMismatch: true, finding.NVCCCannotTargetGPU: true, finding.HostCompilerUnsupported: true,
	finding.ExtensionArchUnsupported: true, finding.ExtensionABIMismatch: true, finding.ExtensionCUDAMismatch: true,
	finding.TorchArchUnsupported: true, finding.DriverTooOld: true, finding.GPUBusy: true, finding.TorchCPUOnly: true,
}

// linuxOnly matches commands that only a Linux shell or package manager
// runs: package managers, exports, inline environment assignments.
var linuxOnly = lazyregexp.New(`^(?:apt-get|apt|dnf|yum|zypper|export|unset|sudo)\b|^[A-Z_][A-Z0-9_]*=\S* |/usr/local/cuda|LD_LIBRARY_PATH`)

// platformFixes rewords fixes for the platform the log comes from.
func (e *env) platformFixes(id finding.ID, fixes []finding.Fix) []finding.Fix {
	if e.log == nil || e.log.Platform == nil {
		return fixes
	}
	p := e.log.Platform
	switch p.Value {
	case "macos":
		if cudaOnly[id] || id == finding.BuildOutOfMemory || id == finding.MissingNinja || id == finding.BuildIsolationHidesTorch {
			return []finding.Fix{{
				Title:    fmt.Sprintf("This log comes from macOS (line %d): CUDA does not run on macOS (NVIDIA's last macOS toolkit was CUDA 10.2), so CUDA packages such as causal-conv1d, mamba-ssm and flash-attn cannot be built or used there. Build and run on a Linux (or Windows/WSL) machine with an NVIDIA GPU; on a Mac, use the model's plain PyTorch path (MPS) instead", p.Line),
				Commands: []string{},
			}}
		}
		return manualLinux(fixes, "macOS")
	case "windows":
		out := manualLinux(fixes, "Windows")
		switch id {
		// Not host-compiler-unsupported: on Windows that is an MSVC nvcc
		// refuses, already installed, which its own fix names.
		case finding.NoCUDACompiler, finding.CUDACompilerNotDiscoverable, finding.CUDAHomeInvalid, finding.NVCCTorchCUDAMismatch, finding.NVCCCannotTargetGPU:
			cuda := "torch's CUDA release"
			if e.log.TorchCUDA != nil {
				cuda = "CUDA " + e.log.TorchCUDA.Value
			}
			out = append([]finding.Fix{{
				Title:    fmt.Sprintf("On Windows (line %d): install %s with NVIDIA's Windows installer (it sets CUDA_PATH) and Visual Studio Build Tools with \"Desktop development with C++\" (MSVC); build from an \"x64 Native Tools Command Prompt\" so nvcc finds cl.exe", p.Line, cuda),
				Commands: []string{},
			}}, out...)
		case finding.DriverTooOld:
			out = append([]finding.Fix{{Title: "On Windows: update the NVIDIA driver with NVIDIA's Windows driver installer (or the NVIDIA app)", Commands: []string{}}}, out...)
		}
		return out
	case "wsl":
		var out []finding.Fix
		for _, fx := range fixes {
			if anyContains(fx.Commands, "apt-get") {
				fx.Title += " (on WSL: from NVIDIA's wsl-ubuntu repository, https://developer.download.nvidia.com/compute/cuda/repos/wsl-ubuntu/x86_64/; never install a Linux driver package inside WSL)"
			}
			out = append(out, fx)
		}
		if id == finding.DriverTooOld {
			out = append([]finding.Fix{{Title: "On WSL the driver is the Windows one: update the NVIDIA driver on Windows, not inside WSL", Commands: []string{}}}, out...)
		}
		return out
	}
	return fixes
}

func anyContains(cmds []string, sub string) bool {
	for _, c := range cmds {
		if strings.Contains(c, sub) {
			return true
		}
	}
	return false
}

// manualLinux turns fixes whose commands only a Linux shell runs into
// manual steps for the platform.
func manualLinux(fixes []finding.Fix, platform string) []finding.Fix {
	var out []finding.Fix
	for _, fx := range fixes {
		linux := false
		for _, c := range fx.Commands {
			if linuxOnly.MatchString(c) {
				linux = true
			}
		}
		if linux {
			fx = finding.Fix{Title: fx.Title + " (manual on " + platform + ": the commands fastpath knows for this are Linux ones: " + strings.Join(fx.Commands, "; ") + ")", Commands: []string{}}
		} else if platform == "Windows" {
			// cmd.exe passes single quotes through as part of the word
			// (conda would read "'pytorch=*=cuda*'"); double quotes work in
			// cmd.exe and PowerShell alike.
			cmds := make([]string, len(fx.Commands))
			for i, c := range fx.Commands {
				cmds[i] = singleQuoted.ReplaceAllString(c, `"$1"`)
			}
			fx = finding.Fix{Title: fx.Title, Commands: cmds}
		}
		out = append(out, fx)
	}
	return out
}

// singleQuoted is a POSIX single-quoted word without quotes or $ inside
// (remedy.Quote's form), which means the same double-quoted on Windows.
var singleQuoted = lazyregexp.New(`'([^'"$%\\]*)'`)

// unknownFact finds the placeholders the fix helpers put where a fact is
// unknown: the package being built, the GPU's capability.
var unknownFact = []struct {
	re   *lazyregexp.Regexp
	what string
}{
	{lazyregexp.New(`\bPACKAGE\b`), "which package was being built"},
	{lazyregexp.New(`"X\.Y"|\bX\.Y\b`), "the GPU's compute capability"},
	{lazyregexp.New(`(?:^|[\s=])\?(?:$|\s)`), "a version"},
	{lazyregexp.New(`CUDA_HOME=['"]?[^/$'"\s]`), "the environment's site-packages folder"},
}

// manualWhereUnknown makes a fix whose command depends on an unknown fact
// a manual step that names the fact: a command is never run with a
// placeholder in it.
func manualWhereUnknown(fixes []finding.Fix) []finding.Fix {
	out := make([]finding.Fix, 0, len(fixes))
	for _, fx := range fixes {
		var missing []string
		for _, c := range fx.Commands {
			for _, u := range unknownFact {
				if u.re.MatchString(c) && !contains(missing, u.what) {
					missing = append(missing, u.what)
				}
			}
		}
		if len(missing) > 0 {
			tmpl := strings.NewReplacer("PACKAGE", "<package>", `"X.Y"`, "<capability>", "X.Y", "<capability>").Replace(strings.Join(fx.Commands, "; "))
			fx = finding.Fix{
				Title:    fmt.Sprintf("%s (manual: the log does not say %s; once known: %s)", fx.Title, strings.Join(missing, " or "), tmpl),
				Commands: []string{},
			}
		}
		out = append(out, fx)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// notebookFixes: a log from a Jupyter kernel. `python3 -m pip` in a
// notebook's shell (`!python3 -m pip`) may install into another Python
// than the kernel's; the %pip magic installs into the kernel's own
// (IPython's documentation, "Built-in magic commands": %pip). A package
// the kernel already imported stays loaded until the kernel restarts.
func (e *env) notebookFixes(fixes []finding.Fix) []finding.Fix {
	if e.log == nil || e.log.Notebook == nil {
		return fixes
	}
	prefix := e.pip() + " "
	rewrote := false
	out := make([]finding.Fix, 0, len(fixes)+1)
	for _, f := range fixes {
		g := finding.Fix{Title: f.Title, Commands: make([]string, 0, len(f.Commands))}
		for _, c := range f.Commands {
			if rest, ok := strings.CutPrefix(c, prefix); ok {
				c, rewrote = "%pip install "+rest, true
			}
			g.Commands = append(g.Commands, c)
		}
		out = append(out, g)
	}
	if rewrote {
		out = append(out, finding.Fix{Title: fmt.Sprintf("The log comes from a Jupyter notebook (line %d): run the %%pip lines in a cell (the magic installs into the kernel's Python), then restart the kernel so it imports the new packages", e.log.Notebook.Line), Commands: []string{}})
	}
	return out
}

// jetsonFixes: a log from an NVIDIA Jetson. Its torch is NVIDIA's JetPack
// build (developer.download.nvidia.com/compute/redist/jp/, or
// jetson-containers); the CUDA wheels of download.pytorch.org and PyPI are
// built for x86-64 and server ARM (sbsa) GPUs and do not run there. A
// package without code for the board's GPU is built on the board for it:
// compute capability 8.7 (Orin), 7.2 (Xavier), 6.2 (TX2), 5.3 (Nano), as
// NVIDIA's CUDA GPUs list (developer.nvidia.com/cuda-gpus) gives them.
func (e *env) jetsonFixes(id finding.ID, fixes []finding.Fix) []finding.Fix {
	if e.log == nil || e.log.Jetson == nil {
		return fixes
	}
	var out []finding.Fix
	if id == finding.ExtensionArchUnsupported {
		out = append(out, finding.Fix{Title: fmt.Sprintf("The log comes from a Jetson (line %d): build the package on the board for its GPU against JetPack's torch, with TORCH_CUDA_ARCH_LIST set to its compute capability (8.7 Orin, 7.2 Xavier, 6.2 TX2, 5.3 Nano) and pip's --no-build-isolation; prebuilt CUDA wheels from PyPI target other GPUs", e.log.Jetson.Line), Commands: []string{}})
	}
	dropped := false
	for _, f := range fixes {
		if strings.Contains(f.Title+" "+strings.Join(f.Commands, " "), "download.pytorch.org") {
			dropped = true
			continue
		}
		out = append(out, f)
	}
	if dropped {
		out = append(out, finding.Fix{Title: "On a Jetson, torch comes from NVIDIA's JetPack builds (developer.download.nvidia.com/compute/redist/jp/ for the JetPack release, or the jetson-containers images), not from download.pytorch.org or PyPI", Commands: []string{}})
	}
	return out
}
