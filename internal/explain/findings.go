package explain

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ianlancetaylor/demangle"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// Finding is a finding of DESIGN's shape plus where in the log it was seen.
type Finding struct {
	finding.Finding
	// Lines are the log's line numbers that show it (1-based).
	Lines []int `json:"lines"`
	// Signatures are the names of the signatures that matched
	// (kb/data/signatures.json).
	Signatures []string `json:"signatures"`
	// LogFacts are the facts this finding's reading and fixes took from
	// the log ("torch 2.11.0+cu130 (line 2)"); MachineFacts says what was
	// taken from this machine, or why nothing was (another environment).
	LogFacts     []string `json:"log_facts,omitempty"`
	MachineFacts []string `json:"machine_facts,omitempty"`
}

// maxEvidenceLines caps the log lines quoted per finding.
const maxEvidenceLines = 6

// Findings turns a scan into findings, the most likely root cause first.
// f may be nil (no facts): the fixes are then generic.
func Findings(s *Scan, f *facts.Facts) []Finding {
	e := newEnv(f, s)
	type group struct {
		id   finding.ID
		hits []*Hit
		why  string
	}
	var groups []*group
	at := map[finding.ID]*group{}
	for i := range s.Hits {
		h := &s.Hits[i]
		id, why, ok := e.resolve(h)
		if !ok {
			continue
		}
		g := at[id]
		if g == nil {
			g = &group{id: id, why: why}
			at[id] = g
			groups = append(groups, g)
		}
		g.hits = append(g.hits, h)
	}
	rank := precedence()
	sort.SliceStable(groups, func(i, j int) bool {
		ri, rj := rank(groups[i].id), rank(groups[j].id)
		if ri != rj {
			return ri < rj
		}
		return groups[i].hits[0].Line < groups[j].hits[0].Line
	})
	out := make([]Finding, 0, len(groups))
	for _, g := range groups {
		out = append(out, e.build(g.id, g.hits, g.why, s))
	}
	return out
}

// precedence ranks finding ids by the documented chain (signatures.json
// "precedence"); unknown ids rank after all known ones.
func precedence() func(finding.ID) int {
	order := kb.Signatures().Precedence.Order
	return func(id finding.ID) int {
		if i := slices.Index(order, string(id)); i >= 0 {
			return i
		}
		return len(order)
	}
}

// env is what the fixes are made of: the facts and their diagnosis.
type env struct {
	f    *facts.Facts
	py   *facts.PythonEnv
	diag map[finding.ID]finding.Finding
	scan *Scan
	sigs *kb.SignaturesData
	// log is what the log states about its own environment: the seam
	// through which the fix helpers (and remedy's Context, at merge) learn
	// the user's torch, CUDA, GPU, gcc, platform and build system. Fixes
	// take these before this machine's.
	log *LogFacts
	// machine is true when f holds this machine's facts and they belong to
	// the log's environment; when false, f (if not nil) is made from the
	// log's facts alone and notSame says why this machine's were left out.
	machine bool
	notSame string
}

func newEnv(f *facts.Facts, s *Scan) *env {
	e := &env{diag: map[finding.ID]finding.Finding{}, scan: s, sigs: kb.Signatures(), log: &s.Facts}
	same, why := e.log.SameEnvironment(f)
	if same {
		e.f, e.machine = f, true
	} else {
		if f != nil {
			e.notSame = why
		}
		// Fixes from the log's own facts: its torch and CUDA, its GPU.
		// Without a torch in the log the facts stay nil, so that no fix
		// reads "no torch" where the log only does not say.
		if e.log.Torch != nil || e.log.TorchCUDA != nil {
			e.f = e.log.asFacts()
		}
	}
	if e.machine {
		e.py = f.Python.Selected
		for _, fd := range diagnose.Run(f) {
			if _, ok := e.diag[fd.ID]; !ok {
				e.diag[fd.ID] = fd
			}
		}
	}
	return e
}

// resolve picks the finding id a hit stands for, and why when there was a
// choice to make; ok is false for a hit that shows no environment failure
// after all (a job too big for its GPU).
func (e *env) resolve(h *Hit) (finding.ID, string, bool) {
	sig := h.Signature
	id := finding.ID(sig.Finding)
	if by := e.scan.Absorbed[sig.Name]; by != "" {
		for _, o := range e.sigs.Signatures {
			if o.Name == by {
				return finding.ID(o.Finding), "", true
			}
		}
	}
	if rid, why, ok, handled := e.resolveOwn(h); handled {
		return rid, why, ok
	}
	switch sig.Name {
	case "cuda-no-kernel-image":
		id, why := e.noKernelImage(h)
		return id, why, true
	case "loader-undefined-symbol":
		sym := h.Captures["symbol"]
		switch {
		case strings.HasPrefix(sym, "cuda") || strings.HasPrefix(sym, "__cuda"):
			return finding.ExtensionCUDAMismatch, "", true
		case driverAPISymbol(sym):
			// cuXxx is the driver API (libcuda.so.1, which the driver
			// installs), not torch's: sgl-kernel calling
			// cuGreenCtxStreamCreate on a driver older than CUDA 12.5
			// (sgl-project/sglang#8131, #8432).
			return finding.DriverTooOld, "", true
		case strings.HasPrefix(sym, "iJIT_"):
			// Intel's ITT API, which conda's torch takes from a
			// dynamically linked MKL: MKL 2024.1 dropped it
			// (open-mmlab/mmpretrain#1900).
			return finding.TorchLibrariesMissing, "", true
		case torchCUDALibrary(h.Captures["so"], h.Frames):
			// torch's libcusparse.so.12 needing nvJitLink 12.4 symbols
			// from an older libnvJitLink.so.12 found first
			// (pytorch/pytorch#131312): no extension is involved.
			return finding.TorchLibrariesMissing, "", true
		}
	}
	if _, fired := e.diag[id]; fired {
		return id, "", true
	}
	for _, alt := range sig.Alternatives {
		if fd, fired := e.diag[finding.ID(alt)]; fired {
			return fd.ID, fmt.Sprintf("This environment's diagnosis says %s: %s.", alt, fd.Title), true
		}
	}
	return id, "", true
}

// kernelWrapperMessage is a kernel library's own wording of a CUDA error
// ("RMSNorm failed with error code no kernel image is available ...").
var kernelWrapperMessage = lazyregexp.New(`\b[A-Z][A-Za-z0-9]+ failed with error code `)

// driverAPISymbol: a CUDA driver API function (cuInit, cuGreenCtxCreate,
// cuTensorMapEncodeTiled): "cu" and a capital. The runtime's are cuda*,
// the libraries' cublas*, cudnn*, cufft*.
func driverAPISymbol(sym string) bool {
	return len(sym) > 2 && strings.HasPrefix(sym, "cu") && sym[2] >= 'A' && sym[2] <= 'Z'
}

// noKernelImage decides between torch and an extension lacking code for
// the GPU, and says why.
func (e *env) noKernelImage(h *Hit) (finding.ID, string) {
	_, torchFired := e.diag[finding.TorchArchUnsupported]
	extFd, extFired := e.diag[finding.ExtensionArchUnsupported]
	switch {
	case extFired && !torchFired:
		return finding.ExtensionArchUnsupported, "An installed extension is likelier than torch: this environment's diagnosis finds " + extFd.Title + ", and torch's own code runs on the GPU."
	case torchFired && !extFired:
		return finding.TorchArchUnsupported, "torch itself is likelier than an extension: this environment's diagnosis finds torch without code for the GPU."
	}
	for _, o := range e.scan.Hits {
		if o.Signature.Name == "torch-capability-not-compatible" {
			return finding.TorchArchUnsupported, fmt.Sprintf("torch itself is likelier than an extension: torch warned at line %d that it has no code for sm_%s.", o.Line, o.Captures["sm"])
		}
	}
	if dist := lineDist(h.Text); dist != "" {
		return finding.ExtensionArchUnsupported, fmt.Sprintf("An extension is likelier than torch: the message comes from %s's own source (%s), and torch printed no warning about the GPU.", dist, h.Text)
	}
	if src := kb.VendoredSource(h.Text); src != "" {
		// A copy another package builds into itself (xformers'
		// third_party/flash-attention, ali-vilab/UniAnimate#65): an
		// extension's kernel, but not that project's distribution.
		proj := src
		if _, rest, ok := strings.Cut(src, "/"); ok {
			proj, _, _ = strings.Cut(rest, "/")
		}
		return finding.ExtensionArchUnsupported, fmt.Sprintf("An extension is likelier than torch: the message comes from %s, a copy of %s vendored into another package's build (so not the %s distribution's own kernel), and torch printed no warning about the GPU.", src, proj, proj)
	}
	if m := kernelWrapperMessage.FindString(h.Text); m != "" {
		// FlashInfer's kernel wrappers (and sgl-kernel's copies of them)
		// word a CUDA error "RMSNorm failed with error code <error>";
		// torch never does (sgl-project/sglang#7249, #831).
		return finding.ExtensionArchUnsupported, fmt.Sprintf("An extension is likelier than torch: %q is a kernel library's wording (FlashInfer's kernel wrappers and sgl-kernel's copies of them print \"<kernel> failed with error code <CUDA error>\"), not torch's, and torch printed no warning about the GPU.", strings.TrimSpace(m))
	}
	// The same failure repeated by a caller ("RMSNorm failed with error code no
	// kernel image ...", flashinfer-ai/flashinfer#920) is the package's whose
	// source another no-kernel-image line of the log names.
	for _, o := range e.scan.Hits {
		if o.Signature.Name == h.Signature.Name && o.Line != h.Line {
			if dist := lineDist(o.Text); dist != "" {
				return finding.ExtensionArchUnsupported, fmt.Sprintf("An extension is likelier than torch: line %d names %s's own source for the same error, and torch printed no warning about the GPU.", o.Line, dist)
			}
		}
	}
	for i := len(h.Frames) - 1; i >= 0; i-- {
		if dist := e.frameDist(h.Frames[i]); dist != "" {
			return finding.ExtensionArchUnsupported, fmt.Sprintf("An extension is likelier than torch: the failing call came from %s (%s), and torch printed no warning about the GPU.", dist, h.Frames[i])
		}
	}
	// A native stack (c10's "Exception raised from ... (most recent call
	// first)") names the extension module whose kernel failed
	// (flash_attn_2_cuda.cp312-win_amd64.pyd!PyInit_flash_attn_2_cuda:
	// numz/ComfyUI-SeedVR2_VideoUpscaler#127).
	if e.log != nil && e.log.NativeModule != nil {
		if dist := e.sigs.Modules.Dists[e.log.NativeModule.Value]; dist != "" {
			return finding.ExtensionArchUnsupported, fmt.Sprintf("An extension is likelier than torch: the native stack at line %d runs in %s's %s, and torch printed no warning about the GPU.", e.log.NativeModule.Line, dist, e.log.NativeModule.Value)
		}
	}
	if e.log != nil && e.log.Jetson != nil {
		// A Jetson's torch is NVIDIA's JetPack build, made for the
		// board's GPU; the package built or installed for another GPU
		// (flash-attn's wheels and setup.py target sm_80 and up, not
		// sm_87: Dao-AILab/flash-attention#1146) is what lacks the code.
		return finding.ExtensionArchUnsupported, fmt.Sprintf("An extension is likelier than torch: the log comes from a Jetson (line %d), whose torch (NVIDIA's JetPack build) has code for its GPU, so the kernel without code is a package's built for other GPUs.", e.log.Jetson.Line)
	}
	return finding.TorchArchUnsupported, "torch is the likelier: no frame of the traceback points at a kernel package, so the failing kernel is torch's own."
}

// frameDist is the kernel distribution a traceback frame's file belongs to,
// or the package whose compiled-op wrapper it is (kb op_frames: vllm's
// vllm/_custom_ops.py; its other frames name no culprit, since every vLLM
// traceback passes through them).
func (e *env) frameDist(file string) string {
	if d := kb.DistOfOpFrame(file); d != "" {
		return d
	}
	for _, marker := range []string{"site-packages/", "dist-packages/"} {
		if i := strings.LastIndex(file, marker); i >= 0 {
			top, _, _ := strings.Cut(file[i+len(marker):], "/")
			top, _, _ = strings.Cut(top, ".")
			return e.sigs.Modules.Dists[top]
		}
	}
	return ""
}

// moduleDist names the distribution of an extension module path.
func (e *env) moduleDist(so string) string {
	if so == "" {
		return ""
	}
	if e.py != nil {
		for _, d := range e.py.Distributions {
			for _, x := range d.Extensions {
				if strings.HasSuffix(so, "/"+x) {
					return d.Name
				}
			}
		}
	}
	if d := e.frameDist(so); d != "" {
		return d
	}
	base, _, _ := strings.Cut(path.Base(so), ".")
	if d := e.sigs.Modules.Dists[base]; d != "" {
		return d
	}
	return folderDist(so)
}

// folderDist names the package an extension lies in by its folder: the
// top folder under site-packages, else the file's own folder (a source
// checkout, /home/u/vllm/vllm/_C.abi3.so), when it is a package the KB
// lists (vllm's _C.abi3.so, sgl-kernel's sgl_kernel/sm100/common_ops.abi3.so).
// torch's own libraries (torch/lib/libtorch_cpu.so) are torch's, not an
// extension's, and are left alone.
func folderDist(so string) string {
	so = strings.ReplaceAll(so, "\\", "/")
	dirs := []string{path.Base(path.Dir(so))}
	for _, marker := range []string{"site-packages/", "dist-packages/"} {
		if i := strings.LastIndex(so, marker); i >= 0 {
			top, _, _ := strings.Cut(so[i+len(marker):], "/")
			dirs = []string{top}
		}
	}
	for _, dir := range dirs {
		if d := kb.PackageNamed(dir); d != "" && d != "torch" {
			return d
		}
	}
	return ""
}

func (e *env) build(id finding.ID, hits []*Hit, why string, s *Scan) Finding {
	// The finding speaks with the first hit whose own meaning is the id
	// (uv's hint, not the bare "No module named 'torch'" it explains).
	first := hits[0]
	for _, h := range hits {
		if finding.ID(h.Signature.Finding) == id {
			first = h
			break
		}
	}
	caps := map[string]string{}
	for _, h := range hits {
		for k, v := range h.Captures {
			if _, ok := caps[k]; !ok {
				caps[k] = v
			}
		}
	}
	pkg := ""
	for _, h := range hits {
		if !tracksPackage(id) {
			break
		}
		if p := h.Captures["package"]; p != "" && h.Signature.Name == "setup-nvcc-not-found" {
			pkg = p
		}
	}
	for _, h := range hits {
		if pkg == "" && h.Package != "" && tracksPackage(id) {
			pkg = h.Package
		}
	}
	if pkg == "" && tracksPackage(id) {
		pkg = caps["package"]
	}
	if pkg != "" && !remedy.DistName(pkg) {
		// A log names the package: "--break-system-packages was requested,
		// but nvcc was not found" must not put an option on pip's command
		// line. A distribution name starts and ends with a letter or digit.
		pkg = ""
	}
	if pkg != "" {
		pkg = canonicalDist(pkg)
		caps["package"], caps["pkg"] = pkg, pkg
	}
	e.logCaptures(caps)
	e.derive(caps, hits)

	fd := Finding{Finding: finding.Finding{
		ID:       id,
		Severity: finding.Severity(first.Signature.Severity),
		Evidence: []string{},
		Fixes:    []finding.Fix{},
	}}
	if fd.Severity == "" {
		fd.Severity = finding.Error
	}
	// A signature whose own finding is not the id it resolved to (an
	// alternative) borrows the title of that id's diagnosis.
	fd.Title = fill(first.Signature.Title, caps)
	fd.Detail = fill(first.Signature.Detail, caps)
	if id != finding.ID(first.Signature.Finding) {
		if d, ok := e.diag[id]; ok {
			fd.Title, fd.Detail = d.Title, d.Detail
		}
	}
	// The other signatures of the group each add what they mean (the
	// NameError's note that it is a consequence of the missing nvcc).
	added := map[string]bool{first.Signature.Name: true}
	for _, h := range hits {
		if !added[h.Signature.Name] && id == finding.ID(h.Signature.Finding) {
			added[h.Signature.Name] = true
			if d := fill(h.Signature.Detail, caps); d != "" && !strings.Contains(fd.Detail, d) {
				fd.Detail += " " + d
			}
		}
	}
	if m := caps["module"]; id == finding.ExtensionABIMismatch && (strings.HasPrefix(m, "libtorch") || strings.HasPrefix(m, "libc10")) {
		// torch's own library: not an extension built for another torch,
		// but torch and the CUDA libraries it pins out of step.
		fd.Title = fmt.Sprintf("torch's %s needs %s, which the libraries it loads do not define", m, caps["demangled"])
		fd.Detail = "torch's own libraries and the CUDA libraries it depends on (nvidia-* wheels) do not match: one of them was upgraded or downgraded on its own."
	}
	if first.Signature.Name == "loader-undefined-symbol" {
		switch id {
		case finding.DriverTooOld:
			fd.Title = fmt.Sprintf("%s calls the CUDA driver function %s, which this NVIDIA driver does not have", caps["module"], caps["symbol"])
			fd.Detail = "Functions named cu... are the CUDA driver API, exported by libcuda.so.1, which the NVIDIA driver installs (not torch, not the CUDA toolkit): the extension was built with a CUDA release newer than the driver supports, so the driver is too old for it."
		case finding.TorchLibrariesMissing:
			if strings.HasPrefix(caps["symbol"], "iJIT_") {
				fd.Title = fmt.Sprintf("torch's %s needs %s, which the MKL it loads does not define", path.Base(caps["so"]), caps["symbol"])
				fd.Detail = "iJIT_* is Intel's ITT profiling API. conda's torch builds link MKL dynamically and take it from MKL, which dropped it in MKL 2024.1; pip's torch wheels link MKL statically and do not need it."
				break
			}
			lib := path.Base(caps["so"])
			if p := caps["provider"]; p != "" {
				fd.Title = fmt.Sprintf("torch's %s needs %s from %s, and the %s loaded first is older", lib, caps["symbol"], p, p)
			} else {
				fd.Title = fmt.Sprintf("torch's %s needs %s, which the CUDA libraries loaded with it do not define", lib, caps["symbol"])
			}
			fd.Detail = "torch's CUDA libraries come from NVIDIA's nvidia-* wheels, each built with the others of its CUDA release. " + lib + " was resolved against another, older copy of a library it needs, found first: a CUDA toolkit's lib64 or a conda environment's lib on LD_LIBRARY_PATH, or an nvidia-* wheel older than the one that needs it. No extension is involved: rebuilding one does not help."
		}
	}
	if id == finding.NVCCCannotTargetGPU && first.Signature.Finding == string(id) {
		// An nvcc too new for an old target fails with the same words as
		// one too old for a new target.
		if sm, err := strconv.Atoi(caps["sm"]); err == nil {
			if removed, last, tooNew, either := droppedTarget(sm, caps["nvcc"]); either {
				fd.Detail = fmt.Sprintf("The nvcc this build ran cannot target %s: either it is older than the first release that targets sm_%d, or it is CUDA %s or newer, which removed it (nvcc %s was the last to have it); the log does not say which nvcc ran. The targets come from the build's list (TORCH_CUDA_ARCH_LIST for torch extensions, CMAKE_CUDA_ARCHITECTURES for CMake) or the visible GPUs.", caps["target"], sm, removed, last)
			} else if tooNew {
				fd.Detail = fmt.Sprintf("The nvcc this build ran is too new for %s: ", caps["target"])
				if removed != "" {
					fd.Detail += fmt.Sprintf("CUDA %s removed sm_%d, ", removed, sm)
				} else {
					fd.Detail += fmt.Sprintf("sm_%d is older than every target of CUDA 11.0 and later, ", sm)
				}
				fd.Detail += "so the build's target list asks for a GPU the compiler no longer builds for."
			}
		}
	}
	if why != "" {
		fd.Detail += " " + why
	}
	seen := map[string]bool{}
	quoted := 0
	for _, h := range hits {
		fd.Lines = append(fd.Lines, h.Line)
		if !slices.Contains(fd.Signatures, h.Signature.Name) {
			fd.Signatures = append(fd.Signatures, h.Signature.Name)
		}
		if seen[h.Text] {
			continue
		}
		seen[h.Text] = true
		if quoted < maxEvidenceLines {
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("line %d: %s", h.Line, h.Text))
			quoted++
		}
	}
	more := 0
	for _, name := range fd.Signatures {
		more += s.Counts[name]
	}
	if more -= quoted; more > 0 {
		fd.Evidence = append(fd.Evidence, fmt.Sprintf("... and %d more matching lines", more))
	}
	if pkg != "" {
		fd.Evidence = append(fd.Evidence, "package being installed: "+pkg)
	}
	for _, nf := range e.log.relevant(string(id)) {
		fd.LogFacts = append(fd.LogFacts, fmt.Sprintf("%s %s (line %d)", nf.name, nf.f.Value, nf.f.Line))
	}
	if len(fd.LogFacts) > 0 {
		fd.Evidence = append(fd.Evidence, "from the log: "+strings.Join(fd.LogFacts, ", "))
	}
	if e.machine {
		mf := e.factsEvidence(id, caps)
		fd.Evidence = append(fd.Evidence, mf...)
		fd.MachineFacts = append(fd.MachineFacts, mf...)
	} else if e.notSame != "" {
		note := "this machine's facts were not used: " + e.notSame
		fd.Evidence = append(fd.Evidence, note)
		fd.MachineFacts = append(fd.MachineFacts, note)
	} else if e.scan.TorchVersion != "" && isBuildID(id) {
		fd.Evidence = append(fd.Evidence, "the build saw torch "+e.scan.TorchVersion)
	}
	if d, ok := e.diag[id]; ok && len(d.Fixes) > 0 {
		fd.Evidence = append(fd.Evidence, "this environment's diagnosis agrees: "+d.Title)
		fd.Fixes = append(fd.Fixes, d.Fixes...)
		fd.Fixes = append(fd.Fixes, e.followUp(id, caps)...)
	} else {
		fd.Fixes = append(fd.Fixes, e.fixes(id, caps)...)
	}
	if len(fd.Fixes) == 0 {
		fd.Fixes = e.missingCaseFixes(id, caps)
	}
	fd.Fixes = e.runTimeFixes(id, fd.Fixes)
	fd.Fixes = e.platformFixes(id, fd.Fixes)
	fd.Fixes = e.notebookFixes(fd.Fixes)
	fd.Fixes = e.jetsonFixes(id, fd.Fixes)
	fd.Fixes = manualWhereUnknown(fd.Fixes)
	return fd
}

// logCaptures fills the captures a title or detail may name from what the
// log states elsewhere (apex's message names torch's CUDA, not nvcc's; the
// nvcc release is in `nvcc --version` printed above it).
func (e *env) logCaptures(caps map[string]string) {
	lf := e.log
	if lf == nil {
		return
	}
	if caps["nvcc"] == "" && lf.NVCC != nil {
		caps["nvcc"] = lf.NVCC.Value
	}
	if caps["torch"] == "" && lf.TorchCUDA != nil {
		caps["torch"] = lf.TorchCUDA.Value
	}
	if caps["torch_version"] == "" && lf.Torch != nil {
		caps["torch_version"] = lf.Torch.Value
	}
	if caps["driver_cuda"] == "" && lf.DriverCUDA != nil {
		caps["driver_cuda"] = lf.DriverCUDA.Value
	}
	if caps["sm"] == "" && lf.Capability != nil {
		if c, err := strconv.ParseFloat(lf.Capability.Value, 64); err == nil && c > 0 {
			caps["sm"] = strconv.Itoa(int(c*10 + 0.5))
		}
	}
}

// derive adds captures computed from others: the demangled symbol, the
// module and distribution of an extension, the driver's CUDA version.
func (e *env) derive(caps map[string]string, hits []*Hit) {
	if sym := strings.TrimRight(caps["symbol"], "."); sym != "" {
		// A sentence's full stop is no part of the symbol.
		caps["symbol"] = sym
		caps["demangled"] = demangle.Filter(sym)
	}
	if so := caps["so"]; so != "" {
		caps["module"] = path.Base(so)
		if d := e.moduleDist(so); d != "" {
			caps["dist"] = d
			caps["module"] = d + " (" + path.Base(so) + ")"
		}
	} else if _, ok := caps["symbol"]; ok {
		caps["module"] = "an extension"
	}
	// A kernel package's own message names it ("CUDA error
	// (/build/source/flash-attn/flash_fwd_launch_template.h:184)").
	// The extension's own file name is no such message: a module fastpath
	// does not know (VMamba's selective_scan_cuda_oflex) is not mamba-ssm
	// because its name has "selective_scan" in it.
	for _, h := range hits {
		text := h.Text
		if so := caps["so"]; so != "" {
			text = strings.ReplaceAll(text, so, "")
		}
		if d := lineDist(text); caps["dist"] == "" && d != "" {
			caps["dist"] = d
		}
	}
	for _, h := range hits {
		if h.Signature.Name == "xformers-built-for-other-torch" && caps["dist"] == "" {
			caps["dist"] = "xformers" // its own load-time check names it
		}
		if h.Signature.Name == "cuda-invalid-kernel-image" {
			// The driver refused a binary's code, not torch's runtime:
			// the fixes name the binary's package, not torch's CUDA.
			caps["invalid_image"] = "yes"
			// flash-attn's CUDA extension (flash_attn_interface calls it),
			// not its Triton kernels (flash_attn/ops/triton), which
			// Triton compiles for the driver at hand.
			for _, f := range h.Frames {
				if strings.Contains(f, "flash_attn_interface") {
					caps["flash_attn_ext"] = "yes"
				}
			}
		}
	}
	if caps["dist"] == "" && e.log != nil && e.log.NativeModule != nil {
		// The extension a native stack runs in (numz/ComfyUI-SeedVR2_VideoUpscaler#127).
		if d := e.sigs.Modules.Dists[e.log.NativeModule.Value]; d != "" {
			caps["dist"] = d
		}
	}
	// Where DeepSpeed stopped, from the traceback: its report tool (the
	// console script's frame), its installed package (an import or its
	// launcher), or its setup.py (an install).
	for _, h := range hits {
		for _, f := range h.Frames {
			f = strings.ReplaceAll(f, "\\", "/")
			switch {
			case strings.HasSuffix(f, "/bin/ds_report"):
				caps["ds_report"] = "ds_report"
			case strings.Contains(f, "-packages/deepspeed/"):
				caps["ds_import"] = "deepspeed"
			case strings.Contains(f, "/deepspeed") && strings.HasSuffix(f, "/setup.py"):
				caps["ds_setup"] = "deepspeed"
			}
		}
	}
	// Without a module path, the traceback's innermost frame in a kernel
	// package names the distribution.
	for _, h := range hits {
		for i := len(h.Frames) - 1; i >= 0 && caps["dist"] == ""; i-- {
			if d := e.frameDist(h.Frames[i]); d != "" {
				caps["dist"] = d
				if caps["module"] == "an extension" {
					caps["module"] = d
				}
			}
		}
	}
	for _, k := range []string{"cudnn_built", "cudnn_found"} {
		if v := caps[k]; v != "" {
			caps[k] = cudnnVersion(v)
		}
	}
	if caps["module"] == "an extension" && caps["dist"] == "" && e.log != nil && e.log.ExtDist != nil {
		// A message without the module's path (sgl-project/sglang#8432:
		// "undefined symbol: cuGreenCtxDestroy" and an environment listing
		// "sgl_kernel: 0.2.7"): the one extension the log names is it.
		caps["dist"] = e.log.ExtDist.Value
		caps["module"] = e.log.ExtDist.Value
	}
	if found := caps["found"]; found != "" {
		if n, err := strconv.Atoi(found); err == nil && n >= 1000 {
			caps["driver_cuda"] = fmt.Sprintf("%d.%d", n/1000, n%1000/10)
		}
	}
	if caps["driver_cuda"] == "" && e.f != nil && e.f.GPU.Driver != nil && e.f.GPU.Driver.CUDA != "" {
		caps["driver_cuda"] = e.f.GPU.Driver.CUDA
	}
	if caps["driver_cuda"] == "" {
		caps["driver_cuda"] = "an older release"
	}
	if caps["package"] == "" {
		caps["package"] = "the package"
	}
	var funcs, dists []string
	add := func(list *[]string, v string) {
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, h := range hits {
		switch h.Signature.Name {
		case "transformers-kernel-fallback":
			add(&funcs, h.Captures["function"])
			add(&dists, canonicalDist(h.Captures["package"]))
		case "transformers-fast-path-legacy":
			for _, fn := range strings.Split(h.Captures["functions"], ",") {
				fn = strings.TrimSpace(fn)
				add(&funcs, fn)
				add(&dists, kb.DistOfFunction(fn))
			}
			for _, d := range kb.DistsOfRepoLinks(h.Text) {
				add(&dists, d)
			}
		}
	}
	if len(funcs) > 0 {
		caps["functions"] = strings.Join(funcs, ", ")
	}
	if len(dists) > 0 {
		caps["fallback_dists"] = strings.Join(dists, " ")
	}
}

// tracksPackage: findings about a build name the package being built.
func tracksPackage(id finding.ID) bool {
	switch id {
	case finding.FastPathFallback, finding.TorchMissing, finding.DriverTooOld, finding.TorchArchUnsupported:
		return false
	}
	return true
}

var (
	placeholder = lazyregexp.New(`\{[a-z_]+\}`)
	optional    = lazyregexp.New(`\[\[(.*?)\]\]`)
)

// fill replaces {name} with captures. A [[segment]] is kept only when
// every name in it is known ("nvcc is CUDA 11.8[[ but torch was built
// with CUDA {torch}]]"); elsewhere an unknown name reads "?".
func fill(tmpl string, caps map[string]string) string {
	known := func(p string) (string, bool) {
		v, ok := caps[p[1:len(p)-1]]
		return v, ok && v != ""
	}
	tmpl = optional.ReplaceAllStringFunc(tmpl, func(seg string) string {
		seg = seg[2 : len(seg)-2]
		for _, p := range placeholder.FindAllString(seg, -1) {
			if _, ok := known(p); !ok {
				return ""
			}
		}
		return seg
	})
	return placeholder.ReplaceAllStringFunc(tmpl, func(p string) string {
		if v, ok := known(p); ok {
			return v
		}
		return "?"
	})
}

// canonicalDist names a distribution as pip would install it
// (causal_conv1d -> causal-conv1d), mapping import names to distributions.

func canonicalDist(name string) string {
	if d, ok := kb.Signatures().Modules.Dists[name]; ok {
		return d
	}
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(name))
}

// cudnnVersion writes a cuDNN version as torch printed it, "(8, 7, 0)"'s
// "8, 7, 0" or torch 1.0-1.4's integer "7102", as 8.7.0 / 7.1.2. The
// integer is torch._C._cudnn_version(), cuDNN's CUDNN_VERSION macro:
// MAJOR*1000 + MINOR*100 + PATCHLEVEL in cuDNN 7 and 8 (cudnn.h,
// cudnn_version.h), MAJOR*10000 + MINOR*100 + PATCHLEVEL from cuDNN 9
// (cudnn_version.h), so 90100 is 9.1.0 and 8907 is 8.9.7.
func cudnnVersion(v string) string {
	if strings.Contains(v, ",") {
		parts := strings.Split(v, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return strings.Join(parts, ".")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1000 {
		return v
	}
	if n >= 90000 {
		return fmt.Sprintf("%d.%d.%d", n/10000, n%10000/100, n%100)
	}
	return fmt.Sprintf("%d.%d.%d", n/1000, n%1000/100, n%100)
}
