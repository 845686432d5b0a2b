// Package finding defines what diagnosis produces: a verdict with its
// evidence and the concrete fixes. IDs are a public contract (README,
// scripts, the JSON output): add new ones, never rename.
package finding

import "strings"

// ID names a kind of finding; stable across releases.
type ID string

// The finding ids of DESIGN.md.
const (
	NoCUDACompiler              ID = "no-cuda-compiler"
	CUDACompilerNotDiscoverable ID = "cuda-compiler-not-discoverable"
	CUDAHomeInvalid             ID = "cuda-home-invalid"
	NVCCTorchCUDAMismatch       ID = "nvcc-torch-cuda-mismatch"
	NVCCCannotTargetGPU         ID = "nvcc-cannot-target-gpu"
	HostCompilerUnsupported     ID = "host-compiler-unsupported"
	MissingPythonHeaders        ID = "missing-python-headers"
	MissingNinja                ID = "missing-ninja"
	BuildIsolationHidesTorch    ID = "build-isolation-hides-torch"
	BuildOutOfMemory            ID = "build-out-of-memory"
	TorchMissing                ID = "torch-missing"
	TorchCPUOnly                ID = "torch-cpu-only"
	TorchArchUnsupported        ID = "torch-arch-unsupported"
	DriverTooOld                ID = "driver-too-old"
	GPUBusy                     ID = "gpu-busy"
	FastPathFallback            ID = "fast-path-fallback"
	ExtensionArchUnsupported    ID = "extension-arch-unsupported"
	ExtensionABIMismatch        ID = "extension-abi-mismatch"
	ExtensionCUDAMismatch       ID = "extension-cuda-mismatch"
	PipPythonMismatch           ID = "pip-python-mismatch"
	TorchLibrariesMissing       ID = "torch-libraries-missing"
	// ModelWillNotLoad: the model raises when loaded or on its first forward
	// (jamba/zamba without mamba-ssm, flash_attention_2 without flash-attn).
	ModelWillNotLoad ID = "model-will-not-load"
	// StaticLiveDisagree: the static reading and what the interpreter
	// answered (`doctor --live`) differ; one of them is wrong.
	StaticLiveDisagree ID = "static-live-disagree"
	// ModelNotJudged: some layers of a model could not be tied to code or
	// to the knowledge base; nothing is claimed about them.
	ModelNotJudged ID = "model-not-judged"
	// ModelCodeKBDisagree: the installed transformers' modeling file binds
	// other kernel functions than the knowledge base lists.
	ModelCodeKBDisagree ID = "model-code-kb-disagree"
)

// Severity orders findings: errors make `doctor` exit 1.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rank orders severities, most severe first.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Finding is one verdict. Every verdict cites evidence a user can check by
// hand (a path, a version, a symbol).
type Finding struct {
	ID       ID       `json:"id"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`
	Detail   string   `json:"detail"`
	Evidence []string `json:"evidence"`
	Fixes    []Fix    `json:"fixes"`
	// Decisive indexes the Evidence lines that decide the verdict: the
	// ones a text report shows by default (docs/output.md). Empty means
	// "the first lines that are not searched places".
	Decisive []int `json:"decisive,omitempty"`
}

// SearchedPrefix starts an evidence line that names a place looked at
// (found or not), not a fact that decides the verdict: "searched: PATH:
// /usr/bin/nvcc (absent)". A text report counts these by default and lists
// them with -v; JSON keeps them in evidence.
const SearchedPrefix = "searched: "

// SearchedPlace returns the place an evidence line names, and whether the
// line is a searched place at all.
func SearchedPlace(line string) (string, bool) {
	return strings.CutPrefix(line, SearchedPrefix)
}

// Fix is one way out, with the exact commands for this environment.
type Fix struct {
	Title    string   `json:"title"`
	Commands []string `json:"commands"`
}
