// Package kb is fastpath's knowledge base: facts about CUDA, drivers,
// compilers and packages, kept as embedded JSON data, each table with the
// source it was checked against. Diagnosis reads it; nothing here does I/O
// beyond the embedded files.
package kb

//go:generate go run -tags kbjson ./gentables kb

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/version"
)

// CUDAData is data/cuda.json.
type CUDAData struct {
	DriverMinimums struct {
		Source string `json:"source"`
		Rows   []struct {
			CUDA   string `json:"cuda"`
			Driver string `json:"driver"`
		} `json:"rows"`
	} `json:"driver_minimums"`
	MinorVersionCompat struct {
		Source string `json:"source"`
		Rows   []struct {
			Major  int    `json:"major"`
			Driver string `json:"driver"`
		} `json:"rows"`
	} `json:"minor_version_compat"`
	GCCMax struct {
		Source string `json:"source"`
		Rows   []struct {
			From   string `json:"cuda_from"`
			To     string `json:"cuda_to"`
			GCCMax int    `json:"gcc_max"`
		} `json:"rows"`
	} `json:"gcc_max"`
	PipCompilers struct {
		Source string        `json:"source"`
		Rows   []PipCompiler `json:"rows"`
	} `json:"pip_compilers"`
	Apt struct {
		Source      string            `json:"source"`
		Packages    []string          `json:"packages"`
		RepoDistros map[string]string `json:"repo_distros"`
		Keyring     string            `json:"keyring"`
		// RepoFrom is the oldest CUDA minor each repository (a
		// RepoDistros value) carries; RepoFromSource says how it was read.
		RepoFromSource string            `json:"repo_from_source"`
		RepoFrom       map[string]string `json:"repo_from"`
		// RepoTo is the newest CUDA minor a repository carries where NVIDIA
		// has stopped adding releases to it (the OS was dropped); absent
		// where it still gets new ones. RepoToSource says how it was read.
		RepoToSource string            `json:"repo_to_source"`
		RepoTo       map[string]string `json:"repo_to"`
	} `json:"apt"`
	Conda struct {
		Source   string   `json:"source"`
		Packages []string `json:"packages"`
		Channel  string   `json:"channel"`
	} `json:"conda"`
	DevelImages struct {
		Source  string `json:"source"`
		NVIDIA  string `json:"nvidia"`
		PyTorch string `json:"pytorch"`
		// NVIDIAOlder is the nvidia/cuda tag for releases before
		// NVIDIAFrom, which have no image of NVIDIA's newer OS.
		NVIDIAOlder string `json:"nvidia_older"`
		NVIDIAFrom  string `json:"nvidia_from"`
		// PyTorchFrom is the first torch release the PyTorch tag fits.
		PyTorchFrom       string `json:"pytorch_from"`
		PyTorchFromSource string `json:"pytorch_from_source"`
	} `json:"devel_images"`
	// TorchWheels are the CUDA builds of torch's newest release on
	// download.pytorch.org, newest CUDA first, with their SASS targets.
	TorchWheels struct {
		Source  string `json:"source"`
		Release string `json:"release"`
		Rows    []struct {
			CUDA  string   `json:"cuda"`
			Archs []string `json:"archs"`
		} `json:"rows"`
		// Python is the oldest Python the release has wheels for, and
		// the newest torch release for each older Python (PyPI).
		Python struct {
			Source   string            `json:"source"`
			Requires string            `json:"requires"`
			Newest   map[string]string `json:"newest"`
		} `json:"python"`
	} `json:"torch_wheels"`
	// TorchReleaseCUDA are the CUDA builds of each torch minor release
	// ("2.4") on download.pytorch.org.
	TorchReleaseCUDA struct {
		Source string              `json:"source"`
		Rows   map[string][]string `json:"rows"`
	} `json:"torch_release_cuda"`
	ToolkitFullVersions struct {
		Source string            `json:"source"`
		Rows   map[string]string `json:"rows"`
	} `json:"toolkit_full_versions"`
}

// TorchReleaseCUDAs are the CUDA builds ("12.1") download.pytorch.org has of
// torch version ("2.4.0", "2.4.0+cu121"); known is false for a release the
// table does not list.
func (d *CUDAData) TorchReleaseCUDAs(version string) (cudas []string, known bool) {
	base, _, _ := strings.Cut(version, "+")
	parts := strings.Split(base, ".")
	if len(parts) < 2 {
		return nil, false
	}
	cudas, known = d.TorchReleaseCUDA.Rows[parts[0]+"."+parts[1]]
	return cudas, known
}

// PipCompiler is how NVIDIA's pip wheels ship a CUDA compiler for a major.
type PipCompiler struct {
	Major    int      `json:"major"`
	HasNVCC  bool     `json:"has_nvcc"`
	Packages []string `json:"packages"`
	Home     string   `json:"home"` // below site-packages
	// PostInstall are shell commands to run once CUDA_HOME is exported.
	PostInstall []string `json:"post_install"`
	// DownloadMiB and DiskMiB are what the wheels take (SizeSource says
	// which wheels were measured).
	DownloadMiB int    `json:"download_mib,omitempty"`
	DiskMiB     int    `json:"disk_mib,omitempty"`
	SizeSource  string `json:"size_source,omitempty"`
}

var (
	cudaOnce sync.Once
	cudaData CUDAData
)

// CUDA returns data/cuda.json, as tables_gen.go holds it (generated from
// the JSON: a run decodes no JSON; TestGeneratedTablesCurrent keeps the
// two the same).
func CUDA() *CUDAData {
	cudaOnce.Do(func() { cudaData = cudaTable() })
	return &cudaData
}

// CompareDotted compares dotted numeric versions ("570.26" < "580.159.04",
// "12.8" < "12.10"; missing parts count as 0). It is version.Compare, kept
// for the KB's callers; new code calls version.Compare.
func CompareDotted(a, b string) int { return version.Compare(a, b) }

// MajorMinor returns the "M.m" of a version ("12.8.93" -> "12.8") and the
// two numbers; ok is false when v does not start with M.m.
func MajorMinor(v string) (mm string, major, minor int, ok bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return "", 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return fmt.Sprintf("%d.%d", major, minor), major, minor, true
}

// DriverMinimum is the oldest driver a CUDA M.m runtime needs for full
// compatibility (the release-notes table), and the minor-version-
// compatibility floor of its major. ok is false for unknown versions.
func (d *CUDAData) DriverMinimum(cuda string) (full, floor string, ok bool) {
	mm, major, _, ok := MajorMinor(cuda)
	if !ok {
		return "", "", false
	}
	for _, r := range d.DriverMinimums.Rows {
		if CompareDotted(r.CUDA, mm) <= 0 {
			full = r.Driver
		}
	}
	for _, r := range d.MinorVersionCompat.Rows {
		if r.Major == major {
			floor = r.Driver
		}
	}
	return full, floor, full != "" && floor != ""
}

// GCCMaxFor is the newest gcc major nvcc of version cuda accepts.
func (d *CUDAData) GCCMaxFor(cuda string) (int, bool) {
	mm, _, _, ok := MajorMinor(cuda)
	if !ok {
		return 0, false
	}
	for _, r := range d.GCCMax.Rows {
		if CompareDotted(mm, r.From) >= 0 && CompareDotted(mm, r.To) <= 0 {
			return r.GCCMax, true
		}
	}
	return 0, false
}

// PipCompilerFor is the pip wheel layout for a CUDA major.
func (d *CUDAData) PipCompilerFor(major int) (PipCompiler, bool) {
	for _, r := range d.PipCompilers.Rows {
		if r.Major == major {
			return r, true
		}
	}
	return PipCompiler{}, false
}

// TorchWheelArchs are the SASS targets of torch's wheel built for CUDA
// cuda ("12.8"), nil for a build the table does not list.
func (d *CUDAData) TorchWheelArchs(cuda string) []string {
	for _, r := range d.TorchWheels.Rows {
		if r.CUDA == cuda {
			return r.Archs
		}
	}
	return nil
}

// ToolkitFull is the newest full release of a CUDA minor ("12.8" ->
// "12.8.1"), read from toolkit_full_versions; ok is false for a minor the
// table does not list. Nothing is guessed: an "M.m.0" that NVIDIA never
// released would name a conda label or an image tag that does not exist.
func (d *CUDAData) ToolkitFull(mm string) (string, bool) {
	v, ok := d.ToolkitFullVersions.Rows[mm]
	return v, ok
}

// Expand fills {M}, {m}, {p} placeholders with a CUDA version's parts.
// A scan, not a strings.Replacer: building a Replacer per call was a
// measurable part of a doctor run (issue 17); TestExpandIsTheReplacer
// compares the two.
func Expand(tmpl, cuda string) string {
	parts := append(strings.Split(cuda, "."), "0", "0")
	if !strings.Contains(tmpl, "{") {
		return tmpl
	}
	var b strings.Builder
	b.Grow(len(tmpl) + len(cuda))
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '{' && i+2 < len(tmpl) && tmpl[i+2] == '}' {
			if k := strings.IndexByte("Mmp", tmpl[i+1]); k >= 0 {
				b.WriteString(parts[k])
				i += 2
				continue
			}
		}
		b.WriteByte(tmpl[i])
	}
	return b.String()
}
