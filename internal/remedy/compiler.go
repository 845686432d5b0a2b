package remedy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// TorchWheelCUDA is the CUDA build of torch to install here: the newest one
// on download.pytorch.org whose runtime the driver runs and that has code
// for every GPU (Blackwell needs 12.8 or newer). The compiler routes use the
// same choice when torch is not installed yet, so that the plan never pairs
// a cu130 torch with a 12.8 compiler.
func TorchWheelCUDA(c Context) string {
	cu := kb.CUDA()
	needs128 := false
	for _, sm := range c.SMs() {
		if sm >= 100 {
			needs128 = true
		}
	}
	for _, r := range cu.TorchWheels.Rows {
		if needs128 && kb.CompareDotted(r.CUDA, "12.8") < 0 {
			continue
		}
		if c.Driver.Known() {
			if _, floor, ok := cu.DriverMinimum(r.CUDA); ok && kb.CompareDotted(c.Driver.Value, floor) < 0 {
				continue
			}
		}
		return r.CUDA
	}
	return "12.8"
}

// CompilerCUDA is the CUDA major.minor a compiler for this Context must
// have: torch's own, else the torch wheel TorchWheelCUDA would install.
func CompilerCUDA(c Context) (mm string, from Origin) {
	if c.TorchCUDA.Known() {
		return c.TorchCUDA.Value, c.TorchCUDA.From
	}
	return TorchWheelCUDA(c), FromDefault
}

// TorchInstall installs torch built for CUDA cuda ("13.0") from
// download.pytorch.org; version "" takes the newest, force reinstalls.
//
// A release download.pytorch.org has no build of that CUDA for (kb
// torch_release_cuda: torch 2.4.0 has cu118, cu121, cu124) is not pinned:
// `torch==2.4.0 --index-url .../cu128` finds no distribution, so the step
// installs the newest torch built for cuda and its title says so.
func TorchInstall(c Context, version, cuda string, force bool) Remedy {
	if force && c.TorchInstaller.Value == "conda" {
		// conda installed this torch: pip's torch over it would leave two
		// torches' files mixed in one site-packages.
		r := c.condaTorchCUDA()
		r.Title += fmt.Sprintf(" (this torch %s was installed by conda%s: pip's torch over it would mix two torches' files; conda picks a CUDA build the driver runs, not necessarily CUDA %s)",
			c.TorchVersion.Value, c.TorchInstaller.where(), cuda)
		return r
	}
	index := "https://download.pytorch.org/whl/cu" + strings.ReplaceAll(cuda, ".", "")
	unpinned := ""
	if !TorchBuildExists(version, cuda) {
		cudas, _ := kb.CUDA().TorchReleaseCUDAs(version)
		unpinned = fmt.Sprintf(" (torch %s has no CUDA %s build, only %s: the newest torch built for CUDA %s; kernel packages built for torch %s need the release for it)",
			version, cuda, strings.Join(cudas, ", "), cuda, version)
		version = ""
	}
	spec := "torch"
	if version != "" {
		spec = "torch==" + version
	}
	args := []string{spec, "--index-url", index}
	for _, a := range c.PipArgs {
		if a == "--no-index" {
			args = []string{spec} // the user's find-links folders decide
		}
	}
	title := fmt.Sprintf("Install torch built for CUDA %s", cuda)
	if force {
		args = append([]string{"--force-reinstall"}, args...)
		if version != "" {
			title = fmt.Sprintf("Reinstall torch %s built for CUDA %s", version, cuda)
		} else {
			title = fmt.Sprintf("Reinstall torch built for CUDA %s", cuda)
		}
	}
	title += unpinned
	r := Remedy{ID: "torch/cu" + strings.ReplaceAll(cuda, ".", ""), Title: title,
		Commands:  []string{c.Pip(args...)},
		Changes:   []string{"torch and its nvidia-* runtime wheels in " + c.envWords()},
		Cost:      Cost{Seconds: 120, Download: 3000, DiskMiB: 7000, Basis: "torch's CUDA wheels and their NVIDIA runtime wheels are about 3 GB to download, 7 GB installed"},
		Undo:      []string{c.PipUninstall("torch")},
		TorchCUDA: cuda, Installs: []string{"torch"}}
	if version == "" && c.TorchVersion.Known() {
		base, _, _ := strings.Cut(c.TorchVersion.Value, "+")
		r.Undo = []string{c.Pip("--force-reinstall", "torch=="+base)}
	}
	return r
}

// TorchBuildExists reports whether download.pytorch.org has torch version
// built for CUDA cuda, as far as the KB knows (true for a release it does
// not list, and for version "").
func TorchBuildExists(version, cuda string) bool {
	cudas, known := kb.CUDA().TorchReleaseCUDAs(version)
	return version == "" || !known || slices.Contains(cudas, cuda)
}

// envWords names the environment commands change.
func (c *Context) envWords() string {
	if c.SitePackages.Known() {
		return c.SitePackages.Value
	}
	return "the selected Python environment"
}

// CompilerRoutes are the ways to a CUDA compiler that builds for this torch,
// best first: NVIDIA's pip wheels (only where they hold an nvcc), conda,
// NVIDIA's apt packages, a devel image. Each checks its preconditions; on
// macOS and Windows the platform decides.
func CompilerRoutes(c Context) []Remedy {
	mm, mmFrom := CompilerCUDA(c)
	switch {
	case c.Platform.Value == Darwin:
		return []Remedy{{ID: "compiler/macos", Title: "CUDA extensions do not build on macOS",
			Preconditions: []Check{{Check: "a platform NVIDIA's CUDA compiler supports", OK: false,
				Detail: "macOS" + c.Platform.where() + ": NVIDIA ships no CUDA toolkit for macOS since CUDA 10.2, and torch's macOS wheels have no CUDA"}},
			Commands: []string{}, Manual: true,
			FillIn: "build on a Linux machine (or a Linux container) with an NVIDIA GPU",
			Reason: "nothing installable on macOS builds CUDA code"}}
	case c.Platform.Value == Windows && !c.WSL.Value:
		return []Remedy{{ID: "compiler/windows", CUDA: mm,
			Title: fmt.Sprintf("Install NVIDIA's CUDA %s toolkit for Windows and Visual Studio's C++ build tools (MSVC)", mm),
			Preconditions: []Check{{Check: "Windows" + c.Platform.where(), OK: true,
				Detail: "torch's extension builder on Windows needs nvcc from NVIDIA's Windows installer and cl.exe from Visual Studio, run from an x64 Native Tools prompt"}},
			Commands: []string{}, Manual: true,
			FillIn:  fmt.Sprintf("run NVIDIA's CUDA %s installer (developer.nvidia.com/cuda-downloads, Windows) and the Visual Studio Build Tools installer with the \"Desktop development with C++\" workload; then build from an \"x64 Native Tools Command Prompt\"", cudaFullOf(mm)),
			Changes: []string{"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v" + mm, "Visual Studio Build Tools"},
			Cost:    Cost{Seconds: 1800, Download: 3500, DiskMiB: 10000, Basis: "NVIDIA's Windows installer is about 3 GB, Visual Studio's C++ tools several GB"},
			Reason:  "the only supported way to build CUDA extensions on Windows outside WSL"}}
	}
	var out []Remedy
	out = append(out, pipCompiler(c, mm, mmFrom))
	out = append(out, condaCompiler(c, mm))
	out = append(out, aptCompiler(c, mm))
	out = append(out, develImage(c, mm))
	for i := range out {
		out[i].Preconditions = append(out[i].Preconditions, CompilerChecks(c, out[i].CUDA)...)
	}
	return out
}

// cudaFullOf is the newest release of CUDA mm that the KB lists, or mm
// itself when it lists none (never an invented "mm.0").
func cudaFullOf(mm string) string {
	if v, ok := kb.CUDA().ToolkitFull(mm); ok {
		return v
	}
	return mm
}

// pipCompiler: NVIDIA's compiler wheels into this environment.
func pipCompiler(c Context, mm string, mmFrom Origin) Remedy {
	cu := kb.CUDA()
	_, major, _, _ := kb.MajorMinor(mm)
	r := Remedy{ID: "compiler/pip", CUDA: mm,
		Reason: "no system toolkit, no root, nothing outside this environment: the smallest change"}
	pc, known := cu.PipCompilerFor(major)
	switch {
	case !c.TorchCUDA.Known():
		r.Title = fmt.Sprintf("Install NVIDIA's CUDA %s compiler wheels into this environment", mm)
		r.Preconditions = append(r.Preconditions, Check{Check: "torch's CUDA version", OK: false,
			Detail: "torch is missing or has no CUDA: the wheels must match torch's CUDA major.minor, so install torch first"})
		return r.manual("install a CUDA build of torch first")
	case !known:
		r.Title = fmt.Sprintf("Install NVIDIA's CUDA %s compiler wheels into this environment", mm)
		r.Preconditions = append(r.Preconditions, Check{Check: fmt.Sprintf("pip wheels with an nvcc for CUDA %d", major), OK: false,
			Detail: fmt.Sprintf("fastpath knows no NVIDIA pip compiler for CUDA %d", major)})
		return r.manual(fmt.Sprintf("a CUDA %d compiler from another route", major))
	case !pc.HasNVCC:
		spec := pc.Packages[0] + "==" + mm + ".*"
		r.Title = fmt.Sprintf("Install NVIDIA's CUDA %s compiler wheels into this environment (%s)", mm, spec)
		r.Preconditions = append(r.Preconditions, Check{Check: fmt.Sprintf("pip wheels with an nvcc for CUDA %d", major), OK: false,
			Detail: fmt.Sprintf("none exist: %s ships ptxas, the crt headers and libnvvm under site-packages/%s but no bin/nvcc "+
				"(the wheels' file lists); only CUDA 13's nvidia-cuda-nvcc holds an nvcc (nvidia/cu13), and a CUDA 13 nvcc cannot build for a cu%d torch",
				spec, pc.Home, major)})
		return r.manual(fmt.Sprintf("a CUDA %s compiler from another route", mm))
	}
	var specs []string
	for _, pkg := range pc.Packages {
		specs = append(specs, pkg+"=="+mm+".*")
	}
	r.Title = fmt.Sprintf("Install NVIDIA's CUDA %s compiler wheels into this environment (%s)", mm, strings.Join(specs, ", "))
	home := "$(" + Quote(c.Interpreter()) + " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/" + pc.Home
	if c.SitePackages.Known() {
		home = Quote(c.SitePackages.Value + "/" + pc.Home)
	} else {
		r.Preconditions = append(r.Preconditions, Check{Check: "site-packages", OK: true, Unknown: true,
			Detail: "not known statically: CUDA_HOME is asked of the interpreter"})
	}
	r.Preconditions = append(r.Preconditions, Check{Check: fmt.Sprintf("pip wheels with an nvcc for CUDA %d", major), OK: true,
		Detail: fmt.Sprintf("%s holds bin/nvcc; with %s it compiles torch extensions (CUDA %s from torch%s)",
			pc.Packages[0], strings.Join(pc.Packages[1:], ", "), mm, c.TorchCUDA.where())})
	r.Commands = append([]string{c.Pip(specs...), Export("CUDA_HOME", home), Export("PATH", `"$CUDA_HOME/bin:$PATH"`)}, pc.PostInstall...)
	r.Changes = []string{"adds " + strings.Join(pc.Packages, ", ") + " to " + c.envWords(), "CUDA_HOME and PATH for this shell",
		"links lib64 -> lib and libcudart.so -> libcudart.so." + fmt.Sprint(major) + " in " + pc.Home}
	r.Cost = Cost{Seconds: 30, Download: pc.DownloadMiB, DiskMiB: pc.DiskMiB, Basis: pc.SizeSource}
	undo := []string{c.PipUninstall(pc.Packages...)}
	r.Undo = append(undo, "unset CUDA_HOME", "(remove $CUDA_HOME/bin from PATH in your shell)")
	return r
}

// condaPrefix is the prefix of the selected conda environment (the folder
// above its interpreter's bin/), "" when it is not a conda environment or
// its interpreter is not known.
func (c *Context) condaPrefix() string {
	if c.PythonKind.Value != "conda" || !c.Python.Known() {
		return ""
	}
	bin := path.Dir(c.Python.Value)
	if path.Base(bin) != "bin" || !path.IsAbs(bin) {
		return ""
	}
	return path.Dir(bin)
}

// condaCompiler: NVIDIA's conda channel, into a conda environment.
func condaCompiler(c Context, mm string) Remedy {
	cu := kb.CUDA()
	var pkgs []string
	for _, p := range cu.Conda.Packages {
		pkgs = append(pkgs, kb.Expand(p, mm))
	}
	full, fullKnown := cu.ToolkitFull(mm)
	channel := kb.Expand(cu.Conda.Channel, full)
	// The diagnosed environment by its prefix where it is known: a bare
	// conda install goes into whichever environment is active, which need
	// not be the one --python named.
	target, home, where := []string{}, `"$CONDA_PREFIX"`, "the active conda environment ($CONDA_PREFIX)"
	if p := c.condaPrefix(); p != "" {
		target, home, where = []string{"-p", p}, Quote(p), "the conda environment "+p
	}
	r := Remedy{ID: "compiler/conda", CUDA: mm,
		Title:    fmt.Sprintf("Install the CUDA %s compiler from NVIDIA's conda channel into the conda environment", mm),
		Commands: []string{Command(append(append([]string{"conda", "install", "-y"}, target...), append([]string{"-c", channel}, pkgs...)...)...), Export("CUDA_HOME", home)},
		Changes:  []string{"adds " + strings.Join(pkgs, " ") + " to " + where},
		Cost:     Cost{Seconds: 120, Download: 500, DiskMiB: 1500, Basis: "fastpath's estimate of cuda-nvcc with the cudart and math-library dev packages"},
		Undo:     []string{Command(append(append([]string{"conda", "remove", "-y"}, target...), condaNames(pkgs)...)...)},
		Reason:   "a user-space compiler, but only inside a conda environment"}
	kind := c.PythonKind.Value
	if kind == "" {
		kind = "unknown"
	}
	r.Preconditions = append(r.Preconditions, Check{Check: "the environment is a conda environment", OK: c.PythonKind.Value == "conda",
		Detail: fmt.Sprintf("the selected environment is %s%s", kind, c.PythonKind.where())})
	if !fullKnown {
		// The channel label names a full release (cuda-12.8.1); the KB
		// lists none for this minor, so no label is guessed.
		r.Preconditions = append(r.Preconditions, Check{Check: "a CUDA " + mm + " release in fastpath's knowledge base", OK: false,
			Detail: "unknown: fastpath's knowledge base lists no full release of CUDA " + mm + ", so it cannot name the conda channel label"})
		return r.manual("install cuda-nvcc and cuda-cudart-dev from the nvidia/label/cuda-" + mm + ".<update> channel (anaconda.org/nvidia)")
	}
	return r
}

func condaNames(specs []string) []string {
	var out []string
	for _, s := range specs {
		n, _, _ := strings.Cut(s, "=")
		out = append(out, n)
	}
	return out
}

// aptCompiler: NVIDIA's apt repository, compiler and headers only. Under
// WSL NVIDIA's wsl-ubuntu repository, which has no driver packages (the
// driver comes from Windows).
func aptCompiler(c Context, mm string) Remedy {
	cu := kb.CUDA()
	r := Remedy{ID: "compiler/apt", CUDA: mm,
		Title:  fmt.Sprintf("Install only the CUDA %s compiler and headers from NVIDIA's apt repository (not the whole toolkit)", mm),
		Reason: "the compiler and headers only (not the 3 GB toolkit), system-wide; needs root"}
	distro, ok := cu.Apt.RepoDistros[c.Distro.Value]
	if c.WSL.Value && strings.HasPrefix(c.Distro.Value, "ubuntu ") {
		distro, ok = "wsl-ubuntu", true
		r.Title = fmt.Sprintf("Install only the CUDA %s compiler and headers from NVIDIA's WSL-Ubuntu apt repository (no driver: WSL uses Windows')", mm)
	}
	if !ok && !c.Distro.Known() && !c.Machine {
		// A log that names no OS: the route is a step by hand, not a
		// route that is closed.
		r.Preconditions = append(r.Preconditions, Check{Check: "NVIDIA apt repository for the OS", OK: true, Unknown: true,
			Detail: "unknown: the OS is not known"})
		r.Title = fmt.Sprintf("Install the CUDA %s compiler (the OS is not known, so fastpath names no command)", mm)
		return r.manual(fmt.Sprintf("NVIDIA's CUDA %s compiler for your OS: on Debian or Ubuntu the apt package %s from NVIDIA's repository (developer.nvidia.com/cuda-downloads, the keyring for your release); elsewhere NVIDIA's installer for CUDA %s (developer.nvidia.com/cuda-toolkit-archive) with the toolkit only; then export CUDA_HOME=/usr/local/cuda-%s",
			mm, kb.Expand(cu.Apt.Packages[0], mm), cudaFullOf(mm), mm))
	}
	if ok {
		r.Preconditions = append(r.Preconditions, Check{Check: "NVIDIA apt repository for the OS", OK: true,
			Detail: fmt.Sprintf("%s%s has NVIDIA's repository %s", c.Distro.Value, c.Distro.where(), distro)})
	} else {
		r.Preconditions = append(r.Preconditions, Check{Check: "NVIDIA apt repository for the OS", OK: false,
			Detail: fmt.Sprintf("NVIDIA has no apt repository for %q%s", c.Distro.Value, c.Distro.where())})
	}
	switch {
	case c.Root == nil:
		r.Preconditions = append(r.Preconditions, Check{Check: "root (dpkg and apt-get need it)", OK: true, Unknown: true, Detail: "unknown: not the live host"})
	case *c.Root:
		r.Preconditions = append(r.Preconditions, Check{Check: "root (dpkg and apt-get need it)", OK: true, Detail: "running as root"})
	default:
		r.Preconditions = append(r.Preconditions, Check{Check: "root (dpkg and apt-get need it)", OK: false,
			Detail: "not running as root: run the commands with sudo yourself"})
	}
	if !ok {
		return r.manual("NVIDIA's install instructions for your OS (developer.nvidia.com/cuda-downloads)")
	}
	// A repository carries only the releases that support its OS: CUDA
	// 11.1 is not in debian12, and apt-get install cuda-nvcc-11-1 fails
	// there.
	if from, known := cu.Apt.RepoFrom[distro]; known && kb.CompareDotted(mm, from) < 0 {
		r.Preconditions = append(r.Preconditions, Check{Check: "CUDA " + mm + " in NVIDIA's " + distro + " repository", OK: false,
			Detail: fmt.Sprintf("%s carries CUDA %s and newer only (the releases that support %s)", distro, from, c.Distro.Value)})
		return r.manual(fmt.Sprintf("CUDA %s from NVIDIA's runfile installer instead (developer.nvidia.com/cuda-toolkit-archive, CUDA %s, Linux, runfile (local); run it with --silent --toolkit --toolkitpath=/usr/local/cuda-%s, no driver), then export CUDA_HOME=/usr/local/cuda-%s; or one of the other routes (conda, a devel image)",
			mm, cudaFullOf(mm), mm, mm))
	}
	// ...and stops where NVIDIA dropped the OS: CUDA 13.0 is not in
	// ubuntu2004, and apt-get install cuda-nvcc-13-0 fails there.
	if to, known := cu.Apt.RepoTo[distro]; known && kb.CompareDotted(mm, to) > 0 {
		r.Preconditions = append(r.Preconditions, Check{Check: "CUDA " + mm + " in NVIDIA's " + distro + " repository", OK: false,
			Detail: fmt.Sprintf("%s ends at CUDA %s: CUDA %s does not support %s", distro, to, mm, c.Distro.Value)})
		return r.manual(fmt.Sprintf("CUDA %s by another route: NVIDIA's pip wheels or conda packages (no root, no OS package), or a devel image of an OS CUDA %s supports; "+
			"NVIDIA's runfile (developer.nvidia.com/cuda-toolkit-archive, CUDA %s, Linux, runfile (local), --silent --toolkit --toolkitpath=/usr/local/cuda-%s) still installs there, on an OS that release does not support",
			mm, mm, cudaFullOf(mm), mm))
	}
	arch := "x86_64"
	if c.Arch.Value == "aarch64" {
		arch = "sbsa"
	}
	keyring := strings.NewReplacer("{distro}", distro, "{arch}", arch).Replace(cu.Apt.Keyring)
	var pkgs []string
	for _, pk := range cu.Apt.Packages {
		pkgs = append(pkgs, kb.Expand(pk, mm))
	}
	deb := keyring[strings.LastIndex(keyring, "/")+1:]
	r.Commands = []string{
		Command("curl", "-fsSLO", keyring),
		Command("dpkg", "-i", deb),
		"apt-get update",
		Command(append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, pkgs...)...),
		ExportPath("CUDA_HOME", "/usr/local/cuda-"+mm),
		Export("PATH", `"$CUDA_HOME/bin:$PATH"`),
	}
	r.Changes = []string{"adds NVIDIA's apt repository and its key (cuda-keyring)", "installs " + strings.Join(pkgs, " ") + " under /usr/local/cuda-" + mm}
	r.Cost = Cost{Seconds: 180, Download: 1500, DiskMiB: 4000, Basis: "fastpath's estimate: nvcc and the cudart, cuBLAS, cuSPARSE and cuSOLVER dev packages"}
	r.Undo = []string{Command(append([]string{"apt-get", "remove", "-y"}, pkgs...)...), "dpkg -r cuda-keyring"}
	return r
}

// develImage: rebuild the image from a devel base that has nvcc.
func develImage(c Context, mm string) Remedy {
	cu := kb.CUDA()
	// nvidia/cuda tags name a full release; the KB's, never a guessed "mm.0".
	nv := ""
	if full, ok := cu.ToolkitFull(mm); ok {
		tag := cu.DevelImages.NVIDIA
		if from := cu.DevelImages.NVIDIAFrom; from != "" && kb.CompareDotted(mm, from) < 0 {
			tag = cu.DevelImages.NVIDIAOlder
		}
		nv = kb.Expand(strings.ReplaceAll(tag, "{cuda_full}", full), mm)
	}
	img, title := nv, "Rebuild the image FROM "+nv+", which has nvcc"
	base, _, _ := strings.Cut(c.TorchVersion.Value, "+")
	// pytorch/pytorch's tag names cuDNN: before PyTorchFrom it was not
	// cudnn9, and not every CUDA had an image.
	oldTorch := c.TorchVersion.Known() && cu.DevelImages.PyTorchFrom != "" && kb.CompareDotted(base, cu.DevelImages.PyTorchFrom) < 0
	// pytorch/pytorch publishes a release's images for its own CUDA builds
	// only: no 2.4.0-cuda13.0 (kb torch_release_cuda).
	noBuild := c.TorchVersion.Known() && !TorchBuildExists(base, mm)
	switch {
	case noBuild && nv == "":
		cudas, _ := cu.TorchReleaseCUDAs(base)
		r := Remedy{ID: "compiler/image", CUDA: mm,
			Title:   "Rebuild the image FROM an nvidia/cuda CUDA " + mm + " devel image, which has nvcc",
			Changes: []string{"the image, not this environment"},
			Cost:    Cost{Download: 8000, DiskMiB: 15000, Basis: "CUDA devel images are several GB"},
			Reason:  "the most complete, but it changes the image rather than this environment (several GB)"}
		r.Preconditions = append(r.Preconditions, Check{Check: "a pytorch/pytorch image of torch " + base + " for CUDA " + mm, OK: false,
			Detail: "torch " + base + " was built for CUDA " + strings.Join(cudas, ", ") + " only, and fastpath's knowledge base lists no full release of CUDA " + mm})
		return r.manual("an nvidia/cuda:" + mm + ".<update>-devel-<os> tag from Docker Hub")
	case noBuild:
		// the nvidia/cuda image: pytorch/pytorch has none for this pair
	case oldTorch && nv == "":
		r := Remedy{ID: "compiler/image", CUDA: mm,
			Title:   "Rebuild the image FROM a pytorch/pytorch " + base + " CUDA " + mm + " devel image, which has nvcc",
			Changes: []string{"the image, not this environment"},
			Cost:    Cost{Download: 8000, DiskMiB: 15000, Basis: "CUDA devel images are several GB"},
			Reason:  "the most complete, but it changes the image rather than this environment (several GB)"}
		r.Preconditions = append(r.Preconditions, Check{Check: "a pytorch/pytorch tag fastpath knows for torch " + base, OK: false,
			Detail: "torch before " + cu.DevelImages.PyTorchFrom + " was tagged with cudnn8 or cudnn7, and not for every CUDA, so fastpath names no tag"})
		return r.manual("a pytorch/pytorch:" + base + "-cuda" + mm + "-cudnn<N>-devel tag from Docker Hub, if one was published")
	case oldTorch:
		// the nvidia/cuda image, as without torch
	case c.TorchVersion.Known():
		img = strings.ReplaceAll(kb.Expand(cu.DevelImages.PyTorch, mm), "{torch}", base)
		title = "Rebuild the image FROM " + img + ", which has nvcc"
		if nv != "" {
			title += " (or FROM " + nv + ")"
		}
	case nv == "":
		r := Remedy{ID: "compiler/image", CUDA: mm,
			Title:   "Rebuild the image FROM an nvidia/cuda CUDA " + mm + " devel image, which has nvcc",
			Changes: []string{"the image, not this environment"},
			Cost:    Cost{Download: 8000, DiskMiB: 15000, Basis: "CUDA devel images are several GB"},
			Reason:  "the most complete, but it changes the image rather than this environment (several GB)"}
		r.Preconditions = append(r.Preconditions, Check{Check: "a CUDA " + mm + " release in fastpath's knowledge base", OK: false,
			Detail: "unknown: fastpath's knowledge base lists no full release of CUDA " + mm + ", so it names no image tag"})
		return r.manual("an nvidia/cuda:" + mm + ".<update>-devel-<os> tag from Docker Hub")
	}
	return Remedy{ID: "compiler/image", CUDA: mm, Manual: true,
		Title:    title,
		Commands: []string{Command("docker", "pull", img)},
		Changes:  []string{"the image, not this environment"},
		Cost:     Cost{Download: 8000, DiskMiB: 15000, Basis: "CUDA devel images are several GB"},
		Reason:   "the most complete, but it changes the image rather than this environment (several GB)"}
}

// CompilerChecks: can nvcc cuda build for the GPUs here, with the g++ here?
func CompilerChecks(c Context, cuda string) []Check {
	var out []Check
	v, err := cudaarch.ParseVersion(cuda)
	switch {
	case err != nil:
	case len(c.GPUs) == 0:
		out = append(out, Check{Check: "nvcc " + cuda + " can target the GPUs", OK: true, Unknown: true,
			Detail: "no GPU known (give one with --gpu)"})
	default:
		var bad []string
		for _, sm := range c.SMs() {
			if !cudaarch.CanTarget(v, cudaarch.Target{SM: sm}) {
				bad = append(bad, fmt.Sprintf("sm_%d", sm))
			}
		}
		pc := Check{Check: "nvcc " + cuda + " can target the GPUs", OK: len(bad) == 0}
		if len(bad) == 0 {
			pc.Detail = fmt.Sprintf("CUDA %s targets compute capability %s", cuda, strings.Join(c.Capabilities(), ", "))
		} else {
			pc.Detail = fmt.Sprintf("CUDA %s cannot generate code for %s (sm_120 needs nvcc >= 12.8)", cuda, strings.Join(bad, ", "))
		}
		out = append(out, pc)
	}
	if max, ok := kb.CUDA().GCCMaxFor(cuda); ok {
		name := fmt.Sprintf("g++ within nvcc %s's limit (%d)", cuda, max)
		switch {
		case !c.GCC.Known() && !c.Machine:
			out = append(out, Check{Check: name, OK: true, Unknown: true, Detail: "g++'s version is not known"})
		case !c.GCC.Known():
			out = append(out, Check{Check: name, OK: false, Detail: "no g++ found (see host-compiler-unsupported)"})
		default:
			major := leadingInt(c.GCC.Value)
			out = append(out, Check{Check: name, OK: major > 0 && major <= max,
				Detail: fmt.Sprintf("%s is %s%s", orWord(c.HostCXX.Value, "g++"), c.GCC.Value, c.GCC.where())})
		}
	}
	return out
}

// ExportHome points builds at an nvcc that exists. An nvcc from NVIDIA's pip wheels
// (home ends in the kb's nvidia/cuXX) also needs the wheels' post-install links: the
// wheels ship lib/ only, while nvcc.profile and torch's builder link from lib64/, and
// -lcudart needs libcudart.so (nvidia-cuda-nvcc 13.0.88 as pip installs it); the links
// are idempotent (ln -sf).
func ExportHome(home, version string) Remedy {
	if version == "" {
		version = "(version unknown)"
	}
	r := Remedy{ID: "compiler/export-home", Title: "Point builds at nvcc " + version,
		Commands: []string{Export("CUDA_HOME", Quote(home)), Export("PATH", `"$CUDA_HOME/bin:$PATH"`)},
		Changes:  []string{"CUDA_HOME and PATH for this shell"}, Undo: []string{"unset CUDA_HOME"}}
	if major := leadingInt(version); major > 0 {
		if pc, ok := kb.CUDA().PipCompilerFor(major); ok && pc.HasNVCC && strings.HasSuffix(strings.TrimSuffix(home, "/"), "/"+pc.Home) {
			r.Commands = append(r.Commands, pc.PostInstall...)
			r.Changes = append(r.Changes, "links lib64 -> lib and libcudart.so -> libcudart.so."+fmt.Sprint(major)+" in "+pc.Home)
		}
	}
	return r
}

func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

// leadingInt returns the integer a version starts with ("13.3.0" -> 13).
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
