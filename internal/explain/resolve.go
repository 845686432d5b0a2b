package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/ianlancetaylor/demangle"
)

// Some messages mean different things depending on their own numbers or
// versions: a GPU out-of-memory error is the environment's fault only when
// other processes hold the memory; xformers' "built for" line blames a
// CPU-only torch, another CUDA or another torch release. These readings
// are made here, from the message's own words.

var (
	oomProcess     = lazyregexp.New(`Process [0-9]+ has ([0-9.]+ (?:[KMGT]i?B|bytes)) memory in use`)
	oomThisProcess = lazyregexp.New(`this process has ([0-9.]+ (?:[KMGT]i?B|bytes)) memory in use`)
	oomByPyTorch   = lazyregexp.New(`Of the allocated memory ([0-9.]+ (?:[KMGT]i?B|bytes)) is allocated by PyTorch(?:, and ([0-9.]+ (?:[KMGT]i?B|bytes)) is reserved)?`)
)

// oomOthersShare: other processes must hold at least this share of the
// GPU (and oomOthersMin bytes) before an out-of-memory error is blamed on
// them rather than on the job's own size; a desktop session or a CUDA
// context of another tool holds less.
const (
	oomOthersShare = 0.25
	oomOthersMin   = 1 << 30
)

// extraCaptures adds what a signature's pattern cannot capture: the
// repeated "Process N has X" figures of torch's out-of-memory message.
func extraCaptures(name string, line []byte, caps map[string]string) {
	if name == "loader-undefined-symbol" {
		// The library a versioned symbol belongs to ("version
		// libnvJitLink.so.12"): the one found in an older copy.
		if m := symbolProvider.FindSubmatch(line); m != nil {
			caps["provider"] = string(m[1])
		}
		// A path the pattern took from within a longer word
		// ("~//lib/python3.9/...") is not one a fix can name.
		if so := caps["so"]; so != "" {
			if i := strings.Index(string(line), so); i > 0 && !strings.ContainsRune(" \t'\"(:", rune(line[i-1])) {
				caps["so_cut"] = "1"
			}
		}
		return
	}
	if name != "torch-cuda-oom" {
		return
	}
	for _, k := range []string{"gpu_index", "total", "free"} {
		if caps[k] == "" && caps[k+"2"] != "" {
			caps[k] = caps[k+"2"]
		}
	}
	total, free := parseBytes(caps["total"]), parseBytes(caps["free"])
	if total <= 0 {
		return
	}
	text := string(line)
	var self int64
	switch {
	case caps["reserved2"] != "":
		self = parseBytes(caps["reserved2"])
	case caps["allocated2"] != "":
		self = parseBytes(caps["allocated2"])
	}
	if m := oomThisProcess.FindStringSubmatch(text); m != nil {
		self = parseBytes(m[1])
	}
	var byTorch int64
	if m := oomByPyTorch.FindStringSubmatch(text); m != nil {
		byTorch = parseBytes(m[1]) + parseBytes(m[2])
	}
	if self == 0 {
		// Newer torch names every process, this one included, as
		// "Process N has X": this process is the one that holds at least
		// what PyTorch allocated (the smallest such).
		for _, m := range oomProcess.FindAllStringSubmatch(text, 8) {
			if v := parseBytes(m[1]); v >= byTorch && (self == 0 || v < self) {
				self = v
			}
		}
	}
	self = max(self, byTorch)
	others := total - free - self
	if others < 0 {
		others = 0
	}
	caps["self"] = formatBytes(self)
	caps["others"] = formatBytes(others)
	// When more was free than the allocation asked for, what other
	// processes hold is not what stopped it (fragmentation, the driver's
	// own reservations, a Windows display): no blame on them.
	if want := parseBytes(caps["want"]); want > 0 && free >= want {
		return
	}
	if float64(others) >= oomOthersShare*float64(total) && others >= oomOthersMin {
		caps["others_hold_gpu"] = "yes"
	}
}

// resolveOwn reads the messages whose meaning depends on their own words;
// ok false means the hit is no environment failure at all (dropped).
func (e *env) resolveOwn(h *Hit) (id finding.ID, why string, ok, handled bool) {
	c := h.Captures
	switch h.Signature.Name {
	case "torch-cuda-oom":
		if c["others_hold_gpu"] != "yes" {
			return "", "", false, true
		}
		return finding.GPUBusy, "", true, true
	case "xformers-built-for-other-torch":
		built, have := c["built_torch"], c["have_torch"]
		if e.log != nil && e.log.Platform != nil && e.log.Platform.Value == "macos" {
			// A Mac has no NVIDIA GPU: xformers' CUDA part never loads
			// there and the program runs without it (Vchitect/SEINE#21).
			return "", "", false, true
		}
		switch {
		case strings.HasSuffix(have, "+cpu") || (!strings.Contains(have, "+") && !strings.Contains(built, "+")):
			return finding.TorchCPUOnly, fmt.Sprintf("xformers was built for %s; the torch it found, %s, has no CUDA, so nothing built for CUDA can load.", built, have), true, true
		case sameRelease(built, have):
			return finding.ExtensionCUDAMismatch, fmt.Sprintf("Same torch release, another CUDA build: xformers %s, torch %s.", built, have), true, true
		}
		return finding.ExtensionABIMismatch, "", true, true
	case "loader-undefined-symbol":
		// A symbol of the C++ standard library is libstdc++'s, not
		// torch's: the module was built with a newer compiler than the
		// libstdc++ it loads (VMamba#83: std::__exception_ptr::
		// exception_ptr::_M_addref()). No finding id covers a C++ runtime
		// older than the build's; rebuilding against torch is no cure.
		if cxxRuntimeSymbol(c["symbol"]) {
			return "", "", false, true
		}
	}
	return "", "", false, false
}

// cxxRuntimeSymbol: the mangled symbol demangles to a name of the C++
// standard library or its runtime support (std::, __gnu_cxx::,
// __cxxabiv1::), or to a vtable, typeinfo or guard variable of one. A
// symbol cut short or not C++ (a C function) is none.
func cxxRuntimeSymbol(sym string) bool {
	if !strings.HasPrefix(sym, "_Z") {
		return false
	}
	d, err := demangle.ToString(sym)
	if err != nil {
		return false
	}
	for _, p := range []string{"vtable for ", "typeinfo for ", "typeinfo name for ", "guard variable for ", "VTT for "} {
		d = strings.TrimPrefix(d, p)
	}
	for _, ns := range []string{"std::", "__gnu_cxx::", "__cxxabiv1::"} {
		if strings.HasPrefix(d, ns) {
			return true
		}
	}
	return false
}

func sameRelease(a, b string) bool {
	ab, _, _ := strings.Cut(a, "+")
	bb, _, _ := strings.Cut(b, "+")
	return ab == bb
}

// lineDist names the kernel package whose source file the line itself
// names ("CUDA error (/build/source/flash-attn/flash_fwd_launch_template.h:184)"):
// the file names and paths only a package's own sources print are the KB's
// (packages.json source_markers).
func lineDist(text string) string { return kb.DistOfSourceLine(text) }

// parseBytes reads "14.52 GiB", "565.31 MiB", "0 bytes".
func parseBytes(s string) int64 {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0
	}
	mult := map[string]float64{"bytes": 1, "B": 1, "KiB": 1 << 10, "KB": 1e3, "MiB": 1 << 20, "MB": 1e6, "GiB": 1 << 30, "GB": 1e9, "TiB": 1 << 40, "TB": 1e12}[unit]
	if v*mult > 1<<60 {
		return 0
	}
	return int64(v * mult)
}

func formatBytes(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
