package kb

import (
	"sync"
)

// SignaturesData is data/signatures.json: the error and warning texts that
// `fastpath explain` recognises in build and run logs, each with the finding
// it means and where the text comes from.
type SignaturesData struct {
	Source string `json:"source"`
	// Precedence orders findings root cause first; Why says why.
	Precedence struct {
		Why   string   `json:"why"`
		Order []string `json:"order"`
	} `json:"precedence"`
	Signatures []Signature `json:"signatures"`
	// Context are lines that are no failure themselves but say what a
	// failure was about: the package being built, the traceback's frames.
	Context []Signature `json:"context"`
	// Facts are lines that state a fact of the environment the log comes
	// from (torch's version, the GPU, gcc, the platform, the build system):
	// each named capture, or each entry of Set, is a LogFacts field.
	Facts []Signature `json:"facts,omitempty"`
	// Modules are filled from packages.json on load.
	Modules struct {
		Source string `json:"-"`
		// Dists maps an extension module or import name to its distribution.
		Dists map[string]string `json:"-"`
		// NeedsBuild are distributions installed from source with nvcc.
		NeedsBuild []string `json:"-"`
	} `json:"-"`
}

// Signature is one recognisable message.
type Signature struct {
	Name string `json:"name"`
	// Finding is the finding id the message means; Alternatives are ids a
	// diagnosis of the environment may show to be the better reading.
	Finding      string   `json:"finding,omitempty"`
	Alternatives []string `json:"alternatives,omitempty"`
	Severity     string   `json:"severity,omitempty"`
	// Literals: a line is tried against Pattern only when it contains one
	// of them (a cheap prefilter; Pattern must imply one of them).
	Literals []string `json:"literals"`
	// Pattern is an RE2 regular expression with named captures; Next, when
	// set, is tried on the following line for more captures (messages that
	// span two lines).
	Pattern string `json:"pattern"`
	Next    string `json:"next,omitempty"`
	// Wrap, when set, is tried on up to WrapLines following lines while
	// they match; its capture "more" is appended to the capture Wrap names
	// (a mangled symbol a terminal broke over several lines).
	Wrap *SignatureWrap `json:"wrap,omitempty"`
	// Absorbs names signatures whose hits this one explains: when this one
	// matches anywhere in a log, their hits join its finding (uv's hint
	// explains the bare "No module named 'torch'" before it).
	Absorbs []string `json:"absorbs,omitempty"`
	// Set are fixed values a facts signature records when it matches.
	Set map[string]string `json:"set,omitempty"`
	// Context, when set, requires (or with Negate forbids) one of its
	// literals within the Within lines before the match.
	Context *SignatureContext `json:"context,omitempty"`
	// Title and Detail are templates: {capture} is replaced by the capture.
	Title  string          `json:"title,omitempty"`
	Detail string          `json:"detail,omitempty"`
	Origin SignatureSource `json:"source"`
}

// SignatureWrap continues a capture over the following lines.
type SignatureWrap struct {
	Capture string `json:"capture"`
	Pattern string `json:"pattern"`
	Lines   int    `json:"lines"`
}

// SignatureContext is a condition on the lines before a match.
type SignatureContext struct {
	Any    []string `json:"any"`
	Within int      `json:"within"`
	Negate bool     `json:"negate,omitempty"`
}

// SignatureSource is the real message text and the program that prints it.
type SignatureSource struct {
	Text string `json:"text"`
	From string `json:"from"`
}

// TorchBuild is one CUDA build of torch's wheels and its SASS targets.
type TorchBuild struct {
	CUDA  string   `json:"cuda"`
	Archs []string `json:"archs"`
}

var (
	signaturesOnce sync.Once
	signaturesData SignaturesData
)

// Signatures returns the parsed data/signatures.json. The data is part of
// the binary: failing to parse it is a build defect, caught by the tests.
func Signatures() *SignaturesData {
	signaturesOnce.Do(func() {
		signaturesData = signaturesTable() // generated into tables_gen.go
		// Module names and the packages that need a build come from
		// packages.json, the one package list.
		signaturesData.Modules.Source = "data/packages.json: " + Packages().Source
		signaturesData.Modules.Dists = ModuleDists()
		signaturesData.Modules.NeedsBuild = NativeKernelPackages()
	})
	return &signaturesData
}
