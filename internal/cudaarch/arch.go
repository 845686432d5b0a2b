// Package cudaarch models CUDA compilation targets (sm_90, sm_90a, sm_120f,
// compute_90, ...) and the rules that decide whether code built for a target
// runs on a GPU of a given compute capability. The rules follow NVIDIA's CUDA
// C++ Programming Guide ("Binary Compatibility",
// https://docs.nvidia.com/cuda/cuda-c-programming-guide/) and, for the `f`
// family targets, NVIDIA's blog "Blackwell and CUDA 12.9 Introduce
// Family-Specific Architecture Features"; every table entry carries the
// source it was read from.
package cudaarch

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind says whether a target is machine code (SASS, inside a cubin) or PTX.
type Kind uint8

const (
	SASS Kind = iota + 1 // sm_XY: a cubin for one architecture
	PTX                  // compute_XY: virtual ISA the driver JIT-compiles
)

func (k Kind) String() string {
	switch k {
	case SASS:
		return "sass"
	case PTX:
		return "ptx"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Variant is the suffix of a target: none, `a` (arch-specific) or `f` (family).
type Variant uint8

const (
	VariantPlain  Variant = iota // sm_90: forward compatible within the major (SASS) or to all later GPUs (PTX)
	VariantArch                  // sm_90a: arch-specific, only exactly that compute capability
	VariantFamily                // sm_120f: family-specific, that capability and later minors of the same major
)

// Suffix is the letter nvcc spells after the number: "", "a" or "f".
func (v Variant) Suffix() string {
	switch v {
	case VariantArch:
		return "a"
	case VariantFamily:
		return "f"
	}
	return ""
}

func (v Variant) String() string {
	switch v {
	case VariantPlain:
		return "plain"
	case VariantArch:
		return "arch-specific"
	case VariantFamily:
		return "family"
	}
	return "variant(" + strconv.Itoa(int(v)) + ")"
}

// Capability is a GPU's compute capability, e.g. 9.0 for an H100/H200.
type Capability struct {
	Major, Minor int
}

// ParseCapability reads "9.0", "12.1" (what nvidia-smi and torch print).
func ParseCapability(s string) (Capability, error) {
	maj, min, ok := strings.Cut(strings.TrimSpace(s), ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil || a < 1 || a > 99 || b < 0 || b > 9 {
		return Capability{}, fmt.Errorf("cudaarch: %q is not a compute capability like 9.0", s)
	}
	return Capability{a, b}, nil
}

// CapabilityOfSM turns an SM number (90, 100, 121) into 9.0, 10.0, 12.1: the last
// digit is the minor, as in nvcc's naming.
func CapabilityOfSM(sm int) Capability { return Capability{sm / 10, sm % 10} }

// SM is the target number of the capability: 9.0 -> 90, 12.1 -> 121.
func (c Capability) SM() int { return c.Major*10 + c.Minor }

func (c Capability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }

// Target is one compilation target: sm_90a is {SASS, 90, VariantArch}.
type Target struct {
	Kind    Kind
	SM      int
	Variant Variant
}

// ParseTarget reads sm_XY[a|f] and compute_XY[a|f] (case-insensitive).
func ParseTarget(s string) (Target, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	var t Target
	switch {
	case strings.HasPrefix(v, "sm_"):
		t.Kind, v = SASS, v[len("sm_"):]
	case strings.HasPrefix(v, "compute_"):
		t.Kind, v = PTX, v[len("compute_"):]
	default:
		return Target{}, fmt.Errorf("cudaarch: %q is not a target like sm_90 or compute_90", s)
	}
	switch {
	case strings.HasSuffix(v, "a"):
		t.Variant, v = VariantArch, v[:len(v)-1]
	case strings.HasSuffix(v, "f"):
		t.Variant, v = VariantFamily, v[:len(v)-1]
	}
	n, err := strconv.Atoi(v)
	// Two or three digits: sm_20 .. sm_999; a leading sign or zero is not a target name.
	if err != nil || len(v) < 2 || len(v) > 3 || v[0] < '1' || v[0] > '9' {
		return Target{}, fmt.Errorf("cudaarch: %q is not a target like sm_90 or compute_90", s)
	}
	t.SM = n
	return t, nil
}

// MustTarget is ParseTarget for constants in code and tests.
func MustTarget(s string) Target {
	t, err := ParseTarget(s)
	if err != nil {
		panic(err)
	}
	return t
}

func (t Target) String() string {
	prefix := "sm_"
	if t.Kind == PTX {
		prefix = "compute_"
	}
	return prefix + strconv.Itoa(t.SM) + t.Variant.Suffix()
}

// Capability is the compute capability the target was built for.
func (t Target) Capability() Capability { return CapabilityOfSM(t.SM) }

// Compat says how code for a target can run on a GPU.
type Compat uint8

const (
	None   Compat = iota // cannot run
	PTXJIT               // the driver JIT-compiles the PTX (needs a driver that knows its PTX ISA; slow first start)
	Family               // family-specific SASS running on a later member of its family
	Native               // SASS that runs as is
)

func (c Compat) String() string {
	switch c {
	case None:
		return "none"
	case PTXJIT:
		return "ptx-jit"
	case Family:
		return "family"
	case Native:
		return "native"
	}
	return "compat(" + strconv.Itoa(int(c)) + ")"
}

// RunsOn decides whether code for t can run on a GPU of capability cc
// (CUDA Programming Guide, "Binary Compatibility"; NVIDIA blog "Blackwell and CUDA 12.9
// Introduce Family-Specific Architecture Features"):
//   - SASS sm_XY runs on X.Z when Z >= Y, same major only (sm_80 runs on 8.6, not on 9.0).
//   - PTX compute_XY JITs on any capability >= X.Y, across majors.
//   - `a` targets (SASS or PTX) run only on exactly X.Y.
//   - `f` targets run on X.Z with Z >= Y, same major (sm_100f: 10.0 and 10.3; sm_120f: 12.0 and 12.1;
//     sm_110 is a major of its own, so its own family).
//
// Whether the driver knows the PTX's ISA version is a separate question: see DriverCanJIT.
func (t Target) RunsOn(cc Capability) Compat {
	tc := t.Capability()
	exact := cc == tc
	sameMajorNewer := cc.Major == tc.Major && cc.Minor >= tc.Minor
	switch t.Kind {
	case SASS:
		switch t.Variant {
		case VariantPlain:
			if sameMajorNewer {
				return Native
			}
		case VariantArch:
			if exact {
				return Native
			}
		case VariantFamily:
			if exact {
				return Native
			}
			if sameMajorNewer {
				return Family
			}
		}
	case PTX:
		switch t.Variant {
		case VariantPlain:
			if cc.Major > tc.Major || sameMajorNewer {
				return PTXJIT
			}
		case VariantArch:
			if exact {
				return PTXJIT
			}
		case VariantFamily:
			if sameMajorNewer {
				return PTXJIT
			}
		}
	}
	return None
}

// Best is the best way any of targets runs on cc (Native > Family > PTXJIT > None)
// and the target that gives it. Among equals the highest SM wins: it is the closest to
// the GPU (what the CUDA loader picks), e.g. sm_86 over sm_80 on 8.9.
func Best(targets []Target, cc Capability) (Target, Compat) {
	var best Target
	bestC := None
	for _, t := range targets {
		if c := t.RunsOn(cc); c > bestC || (c == bestC && c != None && t.SM > best.SM) {
			best, bestC = t, c
		}
	}
	return best, bestC
}

// ForOtherGPUs says whether a fatbin container whose targets ts have no code for cc
// is code built for other GPUs alone, judged beside the containers of the same file
// that do run (inRunning says whether a target is one of theirs): each of its targets
// is arch- or family-specific SASS (sm_90a, sm_100f: built for those GPUs only), or
// newer than cc (sm_100 or compute_120 on 9.0: kernels for newer GPUs), or a target
// the running containers hold too (a narrower build of the library's own code, such
// as a Turing-only {sm_75} beside {sm_75 ... sm_120}). Real libraries ship kernels
// per GPU so and pick them by capability (cuBLASLt 12.9: {sm_100 sm_103 sm_120
// sm_121} and 1154 {sm_100} containers; cuDNN 9.28 and vllm 0.33.0: {sm_75};
// onnxruntime-gpu 1.31.1: {sm_90a}, {sm_120a}). A container with an older plain
// target that nothing running holds ({sm_75} beside {sm_80 sm_90} on 9.0) is not:
// it reads as a build that left this GPU out. Empty ts is not.
func ForOtherGPUs(ts []Target, cc Capability, inRunning func(Target) bool) bool {
	if len(ts) == 0 {
		return false
	}
	for _, t := range ts {
		tc := t.Capability()
		newer := tc.Major > cc.Major || tc.Major == cc.Major && tc.Minor > cc.Minor
		if !(t.Kind == SASS && t.Variant != VariantPlain) && !newer && !inRunning(t) {
			return false
		}
	}
	return true
}
