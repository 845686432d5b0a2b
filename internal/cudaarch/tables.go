package cudaarch

//go:generate go run -tags kbjson ../kb/gentables cudaarch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Version is a CUDA release or a PTX ISA version: major.minor.
type Version struct {
	Major, Minor int
}

// ParseVersion reads "12.8", "13.0.88", "V12.4.131" (patch levels are dropped).
func ParseVersion(s string) (Version, error) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "V")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return Version{}, fmt.Errorf("cudaarch: %q is not a version like 12.8", s)
	}
	a, err1 := strconv.Atoi(parts[0])
	b, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || a < 0 || b < 0 || a > 999 || b > 999 {
		return Version{}, fmt.Errorf("cudaarch: %q is not a version like 12.8", s)
	}
	return Version{a, b}, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Less orders versions numerically (12.10 after 12.9).
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	return v.Minor < w.Minor
}

// TargetRelease is one row of data/nvcc-targets.json.
type TargetRelease struct {
	CUDA   Version
	Add    []Target
	Remove []Target
	Source string
}

// PTXISARelease is one row of data/ptx-isa.json.
type PTXISARelease struct {
	PTX    Version
	CUDA   Version
	Source string
}

// The tables are built on first use, not at program start: decoding them
// in init cost every command a quarter of a millisecond (docs/speed.md).
// They are Go literals generated from data/*.json (tables_gen.go; go
// generate ./internal/cudaarch), so a run decodes no JSON (issue 17);
// built with -tags kbjson they are decoded from the embedded JSON
// (tables_json.go), and TestGeneratedTablesCurrent keeps the two equal.
var (
	targetReleasesOnce = sync.OnceValue(targetsTable)
	ptxISAReleasesOnce = sync.OnceValue(ptxISATable)
)

// TargetReleases is the targetability table, oldest release first.
func TargetReleases() []TargetRelease { return append([]TargetRelease(nil), targetReleasesOnce()...) }

// PTXISAReleases is the PTX ISA table, oldest first.
func PTXISAReleases() []PTXISARelease { return append([]PTXISARelease(nil), ptxISAReleasesOnce()...) }

// targetsOf is the set of SASS targets nvcc of release cuda accepts: the rows up to
// it applied in order. Releases after the newest row inherit it (targets are only
// removed at major releases, which the table would have to record).
func targetsOf(cuda Version) map[Target]bool {
	set := map[Target]bool{}
	for _, r := range targetReleasesOnce() {
		if cuda.Less(r.CUDA) {
			break
		}
		for _, t := range r.Add {
			set[t] = true
		}
		for _, t := range r.Remove {
			delete(set, t)
		}
	}
	return set
}

// CanTarget says whether nvcc of release cuda can generate code for t
// (compute_XY counts as its sm_XY twin). Releases older than the table (11.0) know nothing.
func CanTarget(cuda Version, t Target) bool {
	t.Kind = SASS
	return targetsOf(cuda)[t]
}

// NewestTarget is the highest plain SASS target nvcc of release cuda accepts
// (12.8 -> sm_120, 11.8 -> sm_90); ok is false before the table starts.
func NewestTarget(cuda Version) (Target, bool) {
	var best Target
	for t := range targetsOf(cuda) {
		if t.Variant == VariantPlain && t.SM > best.SM {
			best = t
		}
	}
	return best, best.SM != 0
}

// PTXISAToCUDA is the CUDA release that introduced PTX ISA isa; ok is false for
// ISAs the table does not list.
func PTXISAToCUDA(isa Version) (Version, bool) {
	for _, r := range ptxISAReleasesOnce() {
		if r.PTX == isa {
			return r.CUDA, true
		}
	}
	return Version{}, false
}

// DriverCanJIT says whether a driver supporting CUDA driverCUDA (nvidia-smi's
// "CUDA Version") can JIT PTX of ISA isa. For an ISA the table does not know, known
// is false and the answer is false.
func DriverCanJIT(isa, driverCUDA Version) (ok, known bool) {
	c, known := PTXISAToCUDA(isa)
	if !known {
		return false, false
	}
	return !driverCUDA.Less(c), true
}

// decodeTargets reads data/nvcc-targets.json.
func decodeTargets(b []byte) []TargetRelease {
	var doc struct {
		About    string `json:"about"`
		Releases []struct {
			CUDA   string   `json:"cuda"`
			Add    []string `json:"add"`
			Remove []string `json:"remove"`
			Source string   `json:"source"`
		} `json:"releases"`
	}
	mustDecode("data/nvcc-targets.json", b, &doc)
	var out []TargetRelease
	for _, r := range doc.Releases {
		tr := TargetRelease{CUDA: mustVersion(r.CUDA), Source: r.Source}
		if tr.Source == "" {
			panic("cudaarch: nvcc-targets.json: release " + r.CUDA + " has no source")
		}
		for _, s := range r.Add {
			tr.Add = append(tr.Add, mustSASS(s))
		}
		for _, s := range r.Remove {
			tr.Remove = append(tr.Remove, mustSASS(s))
		}
		out = append(out, tr)
	}
	if !sort.SliceIsSorted(out, func(i, j int) bool { return out[i].CUDA.Less(out[j].CUDA) }) {
		panic("cudaarch: nvcc-targets.json: releases out of order")
	}
	return out
}

// decodePTXISA reads data/ptx-isa.json.
func decodePTXISA(b []byte) []PTXISARelease {
	var doc struct {
		About string `json:"about"`
		ISA   []struct {
			PTX    string `json:"ptx"`
			CUDA   string `json:"cuda"`
			Source string `json:"source"`
		} `json:"isa"`
	}
	mustDecode("data/ptx-isa.json", b, &doc)
	var out []PTXISARelease
	for _, r := range doc.ISA {
		if r.Source == "" {
			panic("cudaarch: ptx-isa.json: " + r.PTX + " has no source")
		}
		out = append(out, PTXISARelease{PTX: mustVersion(r.PTX), CUDA: mustVersion(r.CUDA), Source: r.Source})
	}
	return out
}

// mustDecode reads the data strictly: a misspelt key is a build-time bug, caught by
// every test run (TestGeneratedTablesCurrent decodes every file).
func mustDecode(name string, b []byte, v any) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		panic(fmt.Sprintf("cudaarch: %s: %v", name, err))
	}
}

func mustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

func mustSASS(s string) Target {
	t := MustTarget(s)
	if t.Kind != SASS {
		panic("cudaarch: targets table lists " + s + "; want sm_ names")
	}
	return t
}
