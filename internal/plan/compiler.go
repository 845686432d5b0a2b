package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// route is one way to get a CUDA compiler builds will find.
type route struct {
	kind     string // pip, conda, apt, image, present
	title    string
	commands []string
	checks   []Precondition
	reason   string
	manual   bool
	// cuda is the compiler's CUDA version once the route is taken.
	cuda string
}

// compilerMM is the CUDA M.m to install: torch's, else the newest one the
// data knows a compiler for sm_120 in (12.8).
func (p *planner) compilerMM() string {
	if p.torchCUDA != "" {
		return p.torchCUDA
	}
	return "12.8"
}

// compilerRoutes are the ways to a compiler, in the order: NVIDIA's
// pip wheels (only where they hold an nvcc), conda, NVIDIA's apt packages, a
// devel image.
func (p *planner) compilerRoutes() []route {
	cu := kb.CUDA()
	mm := p.compilerMM()
	var out []route

	// (b) pip: a compiler without a system toolkit.
	pipRoute := route{kind: "pip", cuda: mm,
		reason: "no system toolkit, no root, nothing outside this environment: the smallest change"}
	pc, known := cu.PipCompilerFor(p.torchMajor)
	switch {
	case p.torchCUDA == "":
		pipRoute.title = "Install NVIDIA's CUDA compiler wheels into this environment"
		pipRoute.checks = append(pipRoute.checks, Precondition{Check: "torch's CUDA version", OK: false,
			Detail: "torch is missing or has no CUDA: the wheels must match torch's CUDA major.minor"})
	case !known:
		pipRoute.title = fmt.Sprintf("Install NVIDIA's CUDA %s compiler wheels into this environment", mm)
		pipRoute.checks = append(pipRoute.checks, Precondition{Check: fmt.Sprintf("pip wheels with an nvcc for CUDA %d", p.torchMajor), OK: false,
			Detail: fmt.Sprintf("fastpath knows no NVIDIA pip compiler for CUDA %d", p.torchMajor)})
	case !pc.HasNVCC:
		spec := pc.Packages[0] + "==" + mm + ".*"
		pipRoute.title = fmt.Sprintf("Install NVIDIA's CUDA %s compiler wheels into this environment (%s)", mm, spec)
		pipRoute.checks = append(pipRoute.checks, Precondition{Check: fmt.Sprintf("pip wheels with an nvcc for CUDA %d", p.torchMajor), OK: false,
			Detail: fmt.Sprintf("none exist: %s ships ptxas, the crt headers and libnvvm under site-packages/%s but no bin/nvcc "+
				"(the wheels' file lists); only CUDA 13's nvidia-cuda-nvcc holds an nvcc (nvidia/cu13), and a CUDA 13 nvcc cannot build for a cu%d torch",
				spec, pc.Home, p.torchMajor)})
	default:
		site := diagnose.SitePackages(p.f)
		var specs []string
		for _, pkg := range pc.Packages {
			specs = append(specs, pkg+"=="+mm+".*")
		}
		pipRoute.title = fmt.Sprintf("Install NVIDIA's CUDA %s compiler wheels into this environment (%s)", mm, strings.Join(specs, ", "))
		home := site + "/" + pc.Home
		if site == "" {
			home = "$(" + diagnose.ShellQuote(diagnose.Python(p.f)) + " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/" + pc.Home
			pipRoute.checks = append(pipRoute.checks, Precondition{Check: "site-packages", OK: true, Unknown: true,
				Detail: "not known statically: CUDA_HOME is asked of the interpreter"})
		}
		pipRoute.checks = append(pipRoute.checks, Precondition{Check: fmt.Sprintf("pip wheels with an nvcc for CUDA %d", p.torchMajor), OK: true,
			Detail: fmt.Sprintf("%s holds bin/nvcc; CUDA_HOME=%s", pc.Packages[0], home)})
		pipRoute.commands = append([]string{p.pipInstall(specs...), "export CUDA_HOME=" + diagnose.ShellQuote(home),
			`export PATH="$CUDA_HOME/bin:$PATH"`}, pc.PostInstall...)
	}
	out = append(out, pipRoute)

	// (c) conda's cuda-nvcc, into a conda environment.
	var condaPkgs []string
	for _, c := range cu.Conda.Packages {
		condaPkgs = append(condaPkgs, kb.Expand(c, mm))
	}
	conda := route{kind: "conda", cuda: mm,
		title:    fmt.Sprintf("Install the CUDA %s compiler from NVIDIA's conda channel into the conda environment", mm),
		commands: []string{"conda install -y -c " + kb.Expand(cu.Conda.Channel, cu.ToolkitFull(mm)) + " " + strings.Join(condaPkgs, " "), `export CUDA_HOME="$CONDA_PREFIX"`},
		reason:   "a user-space compiler, but only inside a conda environment"}
	py := p.f.Python.Selected
	isConda := py != nil && py.Kind == "conda"
	kind := "none selected"
	if py != nil {
		kind = py.Kind
	}
	conda.checks = append(conda.checks, Precondition{Check: "the environment is a conda environment", OK: isConda,
		Detail: fmt.Sprintf("the selected environment is %s", kind)})
	out = append(out, conda)

	// (d) NVIDIA's apt packages for the OS: compiler and headers only.
	apt := route{kind: "apt", cuda: mm, reason: "the compiler and headers only (not the 3 GB toolkit), system-wide; needs root"}
	osKey := p.f.OS.ID + " " + p.f.OS.VersionID
	distro, ok := cu.Apt.RepoDistros[osKey]
	apt.title = fmt.Sprintf("Install only the CUDA %s compiler and headers from NVIDIA's apt repository (not the whole toolkit)", mm)
	apt.checks = append(apt.checks, Precondition{Check: "NVIDIA apt repository for the OS", OK: ok,
		Detail: map[bool]string{true: fmt.Sprintf("%s has NVIDIA's repository %s", osKey, distro),
			false: fmt.Sprintf("NVIDIA has no apt repository for %q", strings.TrimSpace(osKey))}[ok]})
	if ok {
		arch := "x86_64"
		if p.f.OS.Arch == "aarch64" {
			arch = "sbsa"
		}
		keyring := strings.NewReplacer("{distro}", distro, "{arch}", arch).Replace(cu.Apt.Keyring)
		var pkgs []string
		for _, pk := range cu.Apt.Packages {
			pkgs = append(pkgs, kb.Expand(pk, mm))
		}
		apt.commands = []string{
			"curl -fsSLO " + keyring,
			"dpkg -i " + keyring[strings.LastIndex(keyring, "/")+1:],
			"apt-get update",
			"apt-get install -y --no-install-recommends " + strings.Join(pkgs, " "),
			"export CUDA_HOME=/usr/local/cuda-" + mm,
			`export PATH="$CUDA_HOME/bin:$PATH"`,
		}
	}
	switch {
	case p.o.Euid == nil:
		apt.checks = append(apt.checks, Precondition{Check: "root (dpkg and apt-get need it)", OK: true, Unknown: true,
			Detail: "unknown: not the live host"})
	case *p.o.Euid == 0:
		apt.checks = append(apt.checks, Precondition{Check: "root (dpkg and apt-get need it)", OK: true, Detail: "running as root"})
	default:
		apt.checks = append(apt.checks, Precondition{Check: "root (dpkg and apt-get need it)", OK: false,
			Detail: fmt.Sprintf("running as uid %d: run the commands with sudo yourself", *p.o.Euid)})
	}
	out = append(out, apt)

	// (e) a devel image.
	img := kb.Expand(strings.ReplaceAll(cu.DevelImages.NVIDIA, "{cuda_full}", cu.ToolkitFull(mm)), mm)
	if p.f.Torch != nil {
		base, _, _ := strings.Cut(p.f.Torch.Version, "+")
		img = strings.ReplaceAll(kb.Expand(cu.DevelImages.PyTorch, mm), "{torch}", base)
	}
	out = append(out, route{kind: "image", cuda: mm, manual: true,
		title:    "Rebuild the image FROM " + img + ", which has nvcc",
		commands: []string{"docker pull " + img},
		reason:   "the most complete, but it changes the image rather than this environment (several GB)"})

	for i := range out {
		out[i].checks = append(out[i].checks, p.compilerChecks(out[i].cuda)...)
	}
	return out
}

// compilerChecks: can nvcc cuda build for the GPUs here, with the gcc here?
func (p *planner) compilerChecks(cuda string) []Precondition {
	var out []Precondition
	v, err := cudaarch.ParseVersion(cuda)
	caps := p.capabilities()
	switch {
	case err != nil:
	case len(caps) == 0:
		out = append(out, Precondition{Check: "nvcc " + cuda + " can target the GPUs", OK: true, Unknown: true,
			Detail: "no GPU known (give one with --gpu)"})
	default:
		var bad []string
		for _, c := range caps {
			cc, err := cudaarch.ParseCapability(c)
			if err != nil {
				continue
			}
			if !cudaarch.CanTarget(v, cudaarch.Target{SM: cc.SM()}) {
				bad = append(bad, fmt.Sprintf("sm_%d", cc.SM()))
			}
		}
		pc := Precondition{Check: "nvcc " + cuda + " can target the GPUs", OK: len(bad) == 0}
		if len(bad) == 0 {
			pc.Detail = fmt.Sprintf("CUDA %s targets compute capability %s", cuda, strings.Join(caps, ", "))
		} else {
			pc.Detail = fmt.Sprintf("CUDA %s cannot generate code for %s (sm_120 needs nvcc >= 12.8)", cuda, strings.Join(bad, ", "))
		}
		out = append(out, pc)
	}
	if max, ok := kb.CUDA().GCCMaxFor(cuda); ok {
		host := p.f.Toolchain.GXX
		if p.f.Toolchain.CUDAHostCXX != nil {
			host = p.f.Toolchain.CUDAHostCXX
		}
		switch {
		case host == nil:
			out = append(out, Precondition{Check: fmt.Sprintf("g++ within nvcc %s's limit (%d)", cuda, max), OK: false,
				Detail: "no g++ found (see host-compiler-unsupported)"})
		default:
			major := leadingInt(host.Version)
			out = append(out, Precondition{Check: fmt.Sprintf("g++ within nvcc %s's limit (%d)", cuda, max), OK: major > 0 && major <= max,
				Detail: fmt.Sprintf("%s is %s", host.Path, host.Version)})
		}
	}
	return out
}

// capabilities are the GPUs' compute capabilities, sorted, unique.
func (p *planner) capabilities() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range p.f.GPU.Devices {
		if d.Capability != "" && !seen[d.Capability] {
			seen[d.Capability] = true
			out = append(out, d.Capability)
		}
	}
	sort.Slice(out, func(i, j int) bool { return kb.CompareDotted(out[i], out[j]) < 0 })
	return out
}

// compilerSteps are the options for no-cuda-compiler.
func (p *planner) compilerSteps(id finding.ID) []Step {
	var out []Step
	for _, r := range p.compilerRoutes() {
		s := Step{ID: fmt.Sprintf("%s/%s", id, r.kind), Title: r.title, Finding: id, Commands: r.commands,
			Preconditions: r.checks, RankReason: r.reason, Verified: true, Manual: r.manual}
		if r.kind == "pip" && len(r.commands) > 0 {
			s.Verification = "package names from NVIDIA's published wheels; pip resolves the version"
		}
		out = append(out, s)
	}
	return out
}

func leadingInt(v string) int {
	n := 0
	for _, r := range v {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
		if n > 1<<20 {
			return 0
		}
	}
	return n
}
