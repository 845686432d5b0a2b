package explain

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// A run-time build is torch compiling an extension while the program runs
// (torch.utils.cpp_extension.load and load_inline, and what is built on
// them: DeepSpeed's ops, stylegan's and others' custom ops, optimum-quanto's
// kernels). No package is being installed, so pip has nothing to rebuild:
// once the prerequisite is fixed, the retry is running the program again,
// and torch first has to be kept from reusing what the failed build left
// in its build folder. kb.Builds().RunTime holds where that folder is and
// how DeepSpeed builds its ops at install instead.

// runTimeRetryTitle starts the retry step of a run-time build.
const runTimeRetryTitle = "Then run the program again"

// runTimeBuild reports whether the log shows torch building an extension
// at run time (the "torch-jit" build system of the log's facts), or
// Triton its launcher ("triton-jit").
func (e *env) runTimeBuild() bool {
	return e.log != nil && e.log.BuildSystem != nil && (e.log.BuildSystem.Value == "torch-jit" || e.log.BuildSystem.Value == "triton-jit" || e.log.BuildSystem.Value == "flashinfer-jit")
}

// jitOp is the extension's name as torch prints it ("" when the log names
// none). The facts signatures capture only Python identifiers.
func (e *env) jitOp() string {
	lf := e.log
	if lf == nil {
		return ""
	}
	if lf.JITOp != nil && len(lf.JITOp.Value) <= 64 {
		return lf.JITOp.Value
	}
	if lf.JITBuilder != nil && lf.JITBuilder.Value == "deepspeed" && lf.JITSource != nil {
		// A DeepSpeed log cut before the op's name: the source it
		// compiled names the op (kb: each op's sources).
		src := strings.ReplaceAll(lf.JITSource.Value, "\\", "/")
		if _, rel, ok := strings.Cut(src, "deepspeed/ops/"); ok {
			return kb.Builds().RunTime.DeepSpeed.Sources[rel]
		}
	}
	return ""
}

// jitFolder is the op's build folder as the log names it, and the line
// that names it: the folder torch emitted build.ninja into, else the
// folder of a source compiled inside the extensions tree, else the
// extensions root joined with the op. It is "" when the log names none
// that is safe to delete (see deletableFolder).
func (e *env) jitFolder(op string) (string, int) {
	lf := e.log
	if lf == nil {
		return "", 0
	}
	if lf.JITDir != nil && deletableFolder(lf.JITDir.Value, op) {
		return lf.JITDir.Value, lf.JITDir.Line
	}
	if lf.JITSource != nil {
		if dir := path.Dir(lf.JITSource.Value); deletableFolder(dir, op) && underExtensions(dir) {
			return dir, lf.JITSource.Line
		}
	}
	if lf.JITRoot != nil && op != "" {
		if dir := lf.JITRoot.Value + "/" + op; deletableFolder(dir, op) {
			return dir, lf.JITRoot.Line
		}
	}
	return "", 0
}

// deletableFolder: a log is untrusted, so the folder a fix deletes must be
// one torch builds an op in: an absolute, clean POSIX path inside an
// extensions tree (a caller's own build_directory there), or ending in the
// op's name (torch's root/name) at least three levels deep, so that an op
// named like a user (/home/alice, /root/alice) never makes a home folder a
// build folder. Anything else (a home directory, "/", a relative or Windows
// path) is named in words, never in a command.
func deletableFolder(dir, op string) bool {
	if !strings.HasPrefix(dir, "/") || path.Clean(dir) != dir || strings.ContainsAny(dir, "\\\x00\n\r\t") {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	if len(parts) < 2 || slices.Contains(parts, "..") {
		return false
	}
	return (op != "" && parts[len(parts)-1] == op && len(parts) >= 3) || underExtensions(dir)
}

// underExtensions: dir is below (not at) a torch_extensions folder.
func underExtensions(dir string) bool {
	parts := strings.Split(dir, "/")
	for i, p := range parts {
		if strings.Contains(p, "torch_extensions") && i < len(parts)-1 {
			return true
		}
	}
	return false
}

// tritonBuild reports whether the log shows Triton compiling its C
// launcher while the program runs (triton/runtime/build.py).
func (e *env) tritonBuild() bool {
	return e.log != nil && e.log.BuildSystem != nil && e.log.BuildSystem.Value == "triton-jit"
}

// runTimeRetry is the step after a prerequisite's fix for a run-time
// build: delete the op's build folder, then run the program again.
func (e *env) runTimeRetry() finding.Fix {
	if e.tritonBuild() {
		// Triton builds in a temporary folder and caches only what
		// built: there is nothing to clear.
		return manual(runTimeRetryTitle + ": Triton compiles its C launcher against Python's headers and the CUDA driver while the program runs (triton/runtime/build.py), so there is no package for pip to rebuild")
	}
	if e.log.BuildSystem.Value == "flashinfer-jit" {
		// FlashInfer builds with its own ninja into its cache, keyed by
		// its version and the GPU's architecture.
		return manual(runTimeRetryTitle + ": FlashInfer compiles its kernels while the program runs (its JIT, into ~/.cache/flashinfer/<version>/<arch>, FLASHINFER_WORKSPACE_BASE when set), so there is no package for pip to rebuild; delete the failed build's folder under cached_ops there first")
	}
	rt := kb.Builds().RunTime
	op := e.jitOp()
	what := "the extension"
	if op != "" {
		what = op
	}
	why := fmt.Sprintf("%s: torch builds %s while the program runs (torch.utils.cpp_extension.load), so there is no package for pip to rebuild", runTimeRetryTitle, what)
	if dir, line := e.jitFolder(op); dir != "" {
		return finding.Fix{
			Title:    fmt.Sprintf("%s; first delete its build folder (line %d), or the next run reuses what the failed build left there", why, line),
			Commands: []string{"rm -rf " + remedy.Quote(dir)},
		}
	}
	name := op
	if name == "" {
		name = "<name>"
	}
	where := fmt.Sprintf("$%s/%s when %s is set, else %s/%s/%s (%s/%s with an old torch 1.x)", rt.RootEnv, name, rt.RootEnv, rt.DefaultRoot, e.jitSubfolder(rt.Subfolder), name, rt.OldDefaultRoot, name)
	if lf := e.log; lf != nil && lf.JITDir != nil {
		where = lf.JITDir.Value + fmt.Sprintf(" (line %d)", lf.JITDir.Line)
	} else if lf != nil && lf.JITRoot != nil {
		where = fmt.Sprintf("%s under %s (line %d)", name, lf.JITRoot.Value, lf.JITRoot.Line)
	}
	return manual(fmt.Sprintf("%s; first delete its build folder, %s, or the next run reuses what the failed build left there", why, where))
}

// jitSubfolder is the folder of one Python and CUDA under the default
// extensions root: the pattern, with what the log states filled in
// (py312_cu<cuda>, py310_cu121).
func (e *env) jitSubfolder(pattern string) string {
	lf := e.log
	if lf == nil {
		return pattern
	}
	out := pattern
	if lf.Python != nil {
		if py, _, _, ok := kb.MajorMinor(lf.Python.Value); ok {
			out = strings.Replace(out, "<major><minor>", strings.ReplaceAll(py, ".", ""), 1)
		}
	}
	if lf.TorchCUDA != nil {
		if cu, _, _, ok := kb.MajorMinor(lf.TorchCUDA.Value); ok {
			out = strings.Replace(out, "<cuda>", strings.ReplaceAll(cu, ".", ""), 1)
		}
	}
	return out
}

// aheadOfTime is DeepSpeed's alternative to its run-time build: its
// install builds the op (DS_BUILD_<OP>=1, or every op with DS_BUILD_OPS=1)
// against the installed torch.
func (e *env) aheadOfTime() (finding.Fix, bool) {
	if e.log == nil || e.log.JITBuilder == nil || e.log.JITBuilder.Value != "deepspeed" {
		return finding.Fix{}, false
	}
	ds := kb.Builds().RunTime.DeepSpeed
	op := e.jitOp()
	env, what := ds.Ops[op], op
	if env == "" {
		env, what = ds.AllOpsEnv, "its ops"
	}
	return finding.Fix{
		Title:    fmt.Sprintf("Or have DeepSpeed's install build %s ahead of time (%s=1) instead of at run time; `%s` lists the ops this machine can build, and the install needs the same compiler fixes", what, env, ds.Report),
		Commands: e.noIsolation("deepspeed", env+"=1 "+e.pip("--no-build-isolation", "--no-cache-dir", "--force-reinstall", "--no-deps", "deepspeed")),
	}, true
}

// runTimeFixes adds DeepSpeed's ahead-of-time build after the retry step
// of a run-time build, and the retry itself after ninja's install: torch
// checks for ninja before it builds, so nothing is left to clear.
func (e *env) runTimeFixes(id finding.ID, fixes []finding.Fix) []finding.Fix {
	if !e.runTimeBuild() {
		return fixes
	}
	i := slices.IndexFunc(fixes, func(f finding.Fix) bool { return strings.HasPrefix(f.Title, runTimeRetryTitle+":") })
	if i < 0 && id == finding.MissingNinja && !e.tritonBuild() {
		what := "the extension"
		if op := e.jitOp(); op != "" {
			what = op
		}
		fixes = append(fixes, manual(fmt.Sprintf("%s: torch builds %s while the program runs (torch.utils.cpp_extension.load), so there is no package to reinstall; it checks for ninja before it compiles anything", runTimeRetryTitle, what)))
		i = len(fixes) - 1
	}
	if i < 0 {
		return fixes
	}
	if aot, ok := e.aheadOfTime(); ok {
		fixes = slices.Insert(fixes, i+1, aot)
	}
	return fixes
}
