package remedy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

// Origin says where a fact came from.
type Origin string

const (
	FromMachine Origin = "machine" // read on the machine fastpath looked at
	FromLog     Origin = "log"     // read in a user's log
	FromFlag    Origin = "flag"    // given by the user on the command line
	FromDefault Origin = "default" // fastpath's own choice where nothing said
)

// Fact is a value and where it came from. The zero Fact is unknown.
type Fact[T comparable] struct {
	Value T
	From  Origin
}

// Known reports whether the fact has a value.
func (f Fact[T]) Known() bool {
	var zero T
	return f.Value != zero
}

// Of makes a fact.
func Of[T comparable](v T, from Origin) Fact[T] {
	var zero T
	if v == zero {
		return Fact[T]{}
	}
	return Fact[T]{Value: v, From: from}
}

// where is the fact's origin in words, for details: " (log)".
func (f Fact[T]) where() string {
	if f.From == "" {
		return ""
	}
	return " (" + string(f.From) + ")"
}

// Build systems a package can use.
const (
	BuildSetuptools = "setuptools" // setup.py with torch.utils.cpp_extension
	BuildCMake      = "cmake"      // CMake, directly or through scikit-build
	BuildUnknown    = ""
)

// Platforms.
const (
	Linux   = "linux"
	Darwin  = "darwin"
	Windows = "windows"
)

// Context is what remedies are made from; see the package doc.
type Context struct {
	TorchVersion Fact[string]
	TorchCUDA    Fact[string]
	GPUs         []Fact[string] // compute capabilities, distinct, ascending
	GPUName      Fact[string]
	NVCC         Fact[string] // major.minor of the nvcc builds use
	GCC          Fact[string] // g++ version
	HostCXX      Fact[string] // g++ path
	Platform     Fact[string]
	WSL          Fact[bool]
	Distro       Fact[string] // "ubuntu 24.04"
	DistroLike   Fact[string] // os-release ID_LIKE: "rhel centos fedora"
	Arch         Fact[string] // x86_64, aarch64
	BuildSystem  Fact[string]
	MemAvail     Fact[int64]
	MemTotal     Fact[int64]
	CPUs         Fact[int]
	Python       Fact[string]
	PythonKind   Fact[string]
	HasPip       bool
	// TorchInstaller is what installed torch (its dist-info INSTALLER:
	// "pip", "uv", "conda").
	TorchInstaller Fact[string]
	// Installed are the environment's distributions (canonical name ->
	// version) where a machine's facts were read; nil unknown.
	Installed    map[string]string
	SitePackages Fact[string]
	Root         *bool
	Conda        bool         // a conda environment exists here
	Driver       Fact[string] // NVIDIA driver version ("580.159.04")
	// Machine: a machine's facts were read (FromFacts), so a value they
	// lack is absent there, not unknown.
	Machine bool
	PipArgs []string
}

// Check is one precondition, checked against the Context.
type Check struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Unknown: the Context cannot tell; it does not count against the remedy.
	Unknown bool `json:"unknown,omitempty"`
}

// Cost is what a remedy takes. Zero fields are unknown; Basis says where the
// figures come from (a measurement, a wheel's size, an estimate).
type Cost struct {
	Seconds  int    `json:"seconds,omitempty"`
	DiskMiB  int    `json:"disk_mib,omitempty"`
	MemMiB   int    `json:"mem_mib,omitempty"`
	Download int    `json:"download_mib,omitempty"`
	Basis    string `json:"basis,omitempty"`
}

// Remedy is one way to fix one thing.
type Remedy struct {
	ID            string   `json:"id"`
	Title         string   `json:"title"`
	Preconditions []Check  `json:"preconditions"`
	Commands      []string `json:"commands"`
	Changes       []string `json:"changes,omitempty"`
	Cost          Cost     `json:"cost"`
	Undo          []string `json:"undo,omitempty"`
	// Manual remedies are never run by fix --apply: they change something
	// else (an image, another machine) or need a value fastpath does not
	// have; FillIn says which.
	Manual bool   `json:"manual,omitempty"`
	FillIn string `json:"fill_in,omitempty"`
	// Reason is why it ranks where it does.
	Reason string `json:"reason,omitempty"`
	// What the remedy leaves behind, for pairing and for checking a plan
	// before it runs: CUDA is the CUDA major.minor of the compiler builds
	// will use (compiler routes; the plan pairs later steps with it),
	// TorchCUDA the CUDA build of torch installed, Installs the
	// distributions installed, HostGCC the g++ major builds will use.
	CUDA      string   `json:"cuda,omitempty"`
	TorchCUDA string   `json:"torch_cuda,omitempty"`
	Installs  []string `json:"installs,omitempty"`
	HostGCC   int      `json:"host_gcc,omitempty"`
}

// Viable reports whether no precondition is known to fail.
func (r Remedy) Viable() bool {
	for _, c := range r.Preconditions {
		if !c.OK && !c.Unknown {
			return false
		}
	}
	return !r.Manual || len(r.Commands) > 0
}

// manual makes r a manual step that needs value filled in: no commands.
func (r Remedy) manual(fillIn string) Remedy {
	r.Manual, r.FillIn, r.Commands = true, fillIn, []string{}
	return r
}

// Quote quotes s for a POSIX shell when it needs it.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:+,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DistName reports whether name is a distribution name (PEP 508, core
// metadata's Name: letters, digits, ".", "_", "-", starting and ending with
// a letter or digit). A name taken from untrusted input (a METADATA in a
// root or image, a log) goes into a command only if it is one: quoting keeps
// "x;touch pwned" from being shell code, but only this keeps
// "--index-url=http://evil/" from being an option of pip.
func DistName(name string) bool { return distNameRe.MatchString(name) }

var distNameRe = lazyregexp.New(`^(?i:[a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$`)

// Command joins words into one command, quoting each.
func Command(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// Interpreter is the Python commands name when unknown: "python3" on
// Linux and macOS, "python" on Windows, where python.org's installer and
// conda install python.exe and no python3.exe (python3 on a stock Windows
// is the Microsoft Store's alias, which opens the Store).
func (c *Context) Interpreter() string {
	if c.Python.Known() {
		return c.Python.Value
	}
	if c.Platform.Value == Windows && !c.WSL.Value {
		return "python"
	}
	return "python3"
}

// Pip is the one install command for the selected environment: its own
// interpreter's `-m pip install` (never a bare pip, which may be another
// environment's), or `uv pip install --python` for uv environments without
// pip; the user's index options come first.
func (c *Context) Pip(args ...string) string {
	all := append(append([]string{}, c.PipArgs...), args...)
	if c.uvWithoutPip() {
		return Command(append(c.uvPip("install"), all...)...)
	}
	return Command(append([]string{c.Interpreter(), "-m", "pip", "install"}, all...)...)
}

// uvWithoutPip: the environment is uv's and has no pip of its own, so its
// interpreter's -m pip fails.
func (c *Context) uvWithoutPip() bool { return c.PythonKind.Value == "uv" && !c.HasPip }

// uvPip is `uv pip <verb>` for the selected environment: --python names
// its interpreter when that is known; when only a log says uv ran (no
// interpreter known), uv's own choice (the active virtual environment, else
// the project's .venv) is the environment the log's uv used, where
// "--python python3" could be the system's.
func (c *Context) uvPip(verb string) []string {
	if c.Python.Known() {
		return []string{"uv", "pip", verb, "--python", c.Python.Value}
	}
	return []string{"uv", "pip", verb}
}

// PipUninstall is the undo of Pip for the named distributions.
func (c *Context) PipUninstall(dists ...string) string {
	if c.uvWithoutPip() {
		return Command(append(c.uvPip("uninstall"), dists...)...)
	}
	return Command(append([]string{c.Interpreter(), "-m", "pip", "uninstall", "-y"}, dists...)...)
}

// PipDownload fetches a package's sdist through the same indexes into
// dirExpr, a shell expression written as given (a quoted "$VAR"). It is
// the interpreter's pip: a uv environment without pip needs c.Pip("pip")
// first (uv pip has no download).
func (c *Context) PipDownload(dirExpr string, args ...string) string {
	w := Command(c.Interpreter(), "-m", "pip", "download", "--no-deps", "--no-build-isolation", "-d")
	return w + " " + dirExpr + " " + Command(append(append([]string{}, c.PipArgs...), args...)...)
}

// PipWheel builds a wheel of the source tree srcExpr into outExpr (shell
// expressions written as given, e.g. a quoted "$VAR/path") without build
// isolation, so that the build compiles against the installed torch.
func (c *Context) PipWheel(outExpr, srcExpr string) string {
	w := Command(append([]string{c.Interpreter(), "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"}, c.PipArgs...)...)
	return w + " -w " + outExpr + " " + srcExpr
}

// Export is an export line; value is written as given (it may use $VARS):
// a shell expression fastpath wrote. A value taken from the diagnosed
// machine, an image or a log goes through ExportPath.
func Export(name, value string) string { return "export " + name + "=" + value }

// ExportPath is an export line whose value is a plain string (a path found
// in a root, named by a log): quoted, so that "$(...)", ";" or a space in
// it stay text when the line is pasted into a shell or run by fix --apply.
func ExportPath(name, value string) string { return Export(name, Quote(value)) }

// Capabilities are the GPUs' compute capabilities as plain strings.
func (c *Context) Capabilities() []string {
	var out []string
	for _, g := range c.GPUs {
		out = append(out, g.Value)
	}
	return out
}

// SMs are the GPUs' sm numbers (9.0 -> 90), ascending.
func (c *Context) SMs() []int {
	var out []int
	for _, g := range c.GPUs {
		maj, min, ok := strings.Cut(g.Value, ".")
		if !ok {
			continue
		}
		var a, b int
		if _, err := fmt.Sscanf(maj+" "+min, "%d %d", &a, &b); err == nil {
			out = append(out, a*10+b)
		}
	}
	sort.Ints(out)
	return out
}

// gib is one GiB.
const gib = int64(1) << 30

func gibs(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/float64(gib)) }

// WithPipArgs rewrites a pip install command that Pip built for a Context
// without index options (doctor's fixes) so that it uses c's: the user's
// options go right after `install`, and with --no-index an --index-url the
// fix named is dropped (pip would ignore it; the find-links folders decide).
// Other commands are returned as they are.
func (c *Context) WithPipArgs(cmd string) string {
	if len(c.PipArgs) == 0 {
		return cmd
	}
	bare := *c
	bare.PipArgs = nil
	prefix := bare.Pip()
	if !strings.HasPrefix(cmd, prefix+" ") {
		return cmd
	}
	rest := strings.Fields(cmd[len(prefix):])
	noIndex := false
	for _, a := range c.PipArgs {
		if a == "--no-index" {
			noIndex = true
		}
	}
	var kept []string
	for i := 0; i < len(rest); i++ {
		if noIndex && rest[i] == "--index-url" && i+1 < len(rest) {
			i++
			continue
		}
		kept = append(kept, rest[i])
	}
	return c.Pip() + " " + strings.Join(kept, " ")
}
