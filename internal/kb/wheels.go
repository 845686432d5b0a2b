package kb

import (
	"fmt"
	"strings"
	"sync"
)

// WheelsData is data/wheels.json: how the kernel packages name the prebuilt
// wheels they publish on their GitHub releases.
type WheelsData struct {
	Source         string `json:"source"`
	NameTemplate   string `json:"name_template"`
	URLTemplate    string `json:"url_template"`
	GitHubAPI      string `json:"github_api"`
	BuildGiBPerJob int    `json:"build_gib_per_job"`
	// Packages are keyed like FamiliesData.Packages (distribution names).
	Packages map[string]WheelScheme `json:"packages"`
}

// WheelScheme is one package's prebuilt-wheel naming.
type WheelScheme struct {
	Repo string `json:"repo"` // owner/name on GitHub
	Dist string `json:"dist"` // the file name's distribution part
	// Platform is the platform tag, "{machine}" standing for uname -m.
	Platform      string `json:"platform"`
	KnownVersion  string `json:"known_version"`
	ForceBuildEnv string `json:"force_build_env"`
	ArchEnv       string `json:"arch_env,omitempty"`
	BuildDiskGiB  int    `json:"build_disk_gib"`
}

// WheelEnv is what a prebuilt wheel's name encodes about the environment.
type WheelEnv struct {
	CUDAMajor int    // torch.version.cuda's major
	TorchMM   string // torch's "M.m"
	CXX11ABI  bool
	PyTag     string // cp312
	Machine   string // x86_64, aarch64
}

var (
	wheelsOnce sync.Once
	wheelsData WheelsData
)

// Wheels returns the parsed data/wheels.json (a build defect if it does not
// parse: the package's tests catch it).
func Wheels() *WheelsData {
	wheelsOnce.Do(func() {
		wheelsData = wheelsTable() // generated into tables_gen.go
	})
	return &wheelsData
}

// WheelName is the file name the package's setup.py would download for env.
func (d *WheelsData) WheelName(s WheelScheme, version string, env WheelEnv) string {
	abi := "FALSE"
	if env.CXX11ABI {
		abi = "TRUE"
	}
	machine := env.Machine
	if machine == "" {
		machine = "x86_64"
	}
	return strings.NewReplacer(
		"{dist}", s.Dist, "{version}", version, "{cuda_major}", fmt.Sprint(env.CUDAMajor),
		"{torch_mm}", env.TorchMM, "{abi}", abi, "{py}", env.PyTag,
		"{platform}", strings.ReplaceAll(s.Platform, "{machine}", machine),
	).Replace(d.NameTemplate)
}

// WheelURL is where the package's GitHub release keeps that wheel.
func (d *WheelsData) WheelURL(s WheelScheme, version, wheel string) string {
	return strings.NewReplacer("{repo}", s.Repo, "{version}", version, "{wheel}", wheel).Replace(d.URLTemplate)
}
