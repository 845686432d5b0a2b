package plan

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

// Wheel is a wheel file name taken apart (PEP 427: name-ver[-build]-py-abi-plat.whl).
type Wheel struct {
	File     string
	Name     string // canonical: lower case, runs of -_. as -
	Version  string // as spelled, with any +local part
	Local    string // the part after +, "" if none
	Python   []string
	ABI      []string
	Platform []string
}

// ParseWheel parses a wheel file name; ok is false for anything else.
func ParseWheel(file string) (Wheel, bool) {
	stem, ok := strings.CutSuffix(file, ".whl")
	if !ok || len(file) > 512 {
		return Wheel{}, false
	}
	parts := strings.Split(stem, "-")
	if len(parts) != 5 && len(parts) != 6 {
		return Wheel{}, false
	}
	for _, p := range parts {
		if p == "" {
			return Wheel{}, false
		}
	}
	n := len(parts)
	w := Wheel{File: file, Name: canonical(parts[0]), Version: parts[1],
		Python: strings.Split(parts[n-3], "."), ABI: strings.Split(parts[n-2], "."), Platform: strings.Split(parts[n-1], ".")}
	if _, local, ok := strings.Cut(w.Version, "+"); ok {
		w.Local = local
	}
	return w, true
}

func canonical(n string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(n))
}

// Fit is how well a wheel suits the environment.
type Fit int

const (
	// Unfit: pip would not install it here, or it was built for another
	// CUDA major or C++ ABI.
	Unfit Fit = iota
	// Neighbour: made for another torch minor (same CUDA major, ABI,
	// Python); whether it loads depends on torch's ABI not having changed.
	Neighbour
	// Exact: pip installs it here and, where its name says, it was built
	// for this torch minor, CUDA major and ABI.
	Exact
)

// localTag is the kernel packages' +cu12torch2.11cxx11abiTRUE version part.
var localTag = lazyregexp.New(`^cu(\d+)torch(\d+\.\d+)cxx11abi(TRUE|FALSE)$`)

// FitFor says whether pip would take w for env, and for which torch it says
// it was built.
func (w Wheel) FitFor(env kb.WheelEnv) Fit {
	if !w.tagsFit(env) {
		return Unfit
	}
	if w.Local == "" {
		return Exact
	}
	m := localTag.FindStringSubmatch(w.Local)
	if m == nil {
		// Another local scheme (+cpu, +rocm...): nothing says it suits torch.
		return Unfit
	}
	abi := "FALSE"
	if env.CXX11ABI {
		abi = "TRUE"
	}
	if m[1] != fmt.Sprint(env.CUDAMajor) || m[3] != abi {
		return Unfit
	}
	if m[2] != env.TorchMM {
		return Neighbour
	}
	return Exact
}

// TorchMM is the torch minor the wheel's local version names ("" if none).
func (w Wheel) TorchMM() string {
	if m := localTag.FindStringSubmatch(w.Local); m != nil {
		return m[2]
	}
	return ""
}

// tagsFit: the compatibility tags pip would accept for a CPython of
// env.PyTag on Linux env.Machine.
func (w Wheel) tagsFit(env kb.WheelEnv) bool {
	machine := env.Machine
	if machine == "" {
		machine = "x86_64"
	}
	py := false
	for _, t := range w.Python {
		if t == env.PyTag || t == "py3" || t == "py"+strings.TrimPrefix(env.PyTag, "cp") || t == "py2.py3" {
			py = true
		}
	}
	abi := false
	for _, t := range w.ABI {
		if t == "none" || t == "abi3" || t == env.PyTag {
			abi = true
		}
	}
	plat := false
	for _, t := range w.Platform {
		if t == "any" || t == "linux_"+machine || (strings.HasPrefix(t, "manylinux") && strings.HasSuffix(t, "_"+machine)) {
			plat = true
		}
	}
	return py && abi && plat
}
