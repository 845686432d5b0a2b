package diagnose

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// checkPythonHeaders: no Python.h for the selected interpreter.
func checkPythonHeaders(c *judgement) []finding.Finding {
	if c.py == nil || c.py.PythonH != "" {
		return nil
	}
	mm := majorMinor(c.py.Version)
	fd := finding.Finding{
		ID:       finding.MissingPythonHeaders,
		Severity: c.buildSeverity(),
		Title:    fmt.Sprintf("No Python.h for Python %s: extensions cannot build", orUnknown(c.py.Version)),
		Detail:   "Every C/C++/CUDA extension includes Python.h; the build stops with \"fatal error: Python.h: No such file or directory\".",
		Evidence: append([]string{fmt.Sprintf("python: %s (%s, base prefix %s)", c.python(), orUnknown(c.py.Version), orUnknown(c.py.BasePrefix))},
			searched(c.py.PythonHSearched)...),
	}
	switch {
	case c.py.Kind == "conda":
		fd.Fixes = []finding.Fix{toFix(remedy.CondaPython(mm))}
	default:
		// apt only where the distro's archive has that Python's headers.
		fd.Fixes = []finding.Fix{toFix(remedy.PythonHeaders(c.remedy(), mm))}
	}
	return []finding.Finding{fd}
}

// checkNinja: builds without ninja are serial and very slow.
func checkNinja(c *judgement) []finding.Finding {
	if c.py == nil || c.f.Toolchain.Ninja != nil {
		return nil
	}
	return []finding.Finding{{
		ID:       finding.MissingNinja,
		Severity: finding.Warning,
		Title:    "ninja is missing: extension builds fall back to slow serial distutils",
		Detail:   "torch's extension builder uses ninja when it can import it; without it a CUDA build compiles one file at a time and ignores MAX_JOBS.",
		Evidence: []string{"no ninja on PATH (" + envValue(c, "PATH") + ")", "no ninja distribution in " + c.py.Prefix},
		Fixes:    []finding.Fix{{Title: "Install ninja into this environment", Commands: []string{c.pipInstall("ninja")}}},
	}}
}

// checkPip: `pip` on PATH installs into another Python than python3.
func checkPip(c *judgement) []finding.Finding {
	pip := c.f.Python.Pip
	if c.py == nil || pip == nil {
		return nil
	}
	// Judged against python3 on PATH (what a user types), not --python's choice;
	// facts without it (older files) fall back to the selected Python.
	python3Prefix := c.py.Prefix
	if pip.PathPythonPrefix != "" {
		if pip.SameAsPathPython {
			return nil
		}
		python3Prefix = pip.PathPythonPrefix
	} else if pip.SameAsPython {
		return nil
	}
	target := pip.Prefix
	if target == "" {
		target = "an environment fastpath could not determine"
	}
	return []finding.Finding{{
		ID:       finding.PipPythonMismatch,
		Severity: finding.Warning,
		Title:    fmt.Sprintf("`pip` on PATH installs into %s, not into %s", target, python3Prefix),
		Detail:   "`pip install X` then succeeds but `python3 -c 'import X'` fails, and `pip list` shows another environment than the one that runs.",
		Evidence: []string{fmt.Sprintf("pip: %s runs %s", pip.Path, orUnknown(pip.Interpreter)), fmt.Sprintf("python3 on PATH: prefix %s", python3Prefix)},
		Fixes:    []finding.Fix{toFix(remedy.OwnPip(c.remedy()))},
	}}
}

// checkGPUBusy: other processes hold GPU memory.
func checkGPUBusy(c *judgement) []finding.Finding {
	procs := c.f.GPU.Processes
	if len(procs) == 0 {
		return nil
	}
	var ev []string
	var total int64
	for _, p := range procs {
		total += p.UsedMiB
		ev = append(ev, fmt.Sprintf("pid %d %s holds %d MiB on %s", p.PID, p.Name, p.UsedMiB, orUnknown(p.GPUUUID)))
	}
	return []finding.Finding{{
		ID:       finding.GPUBusy,
		Severity: finding.Warning,
		Title:    fmt.Sprintf("%s hold %d MiB of GPU memory", plural(len(procs), "process", "processes"), total),
		Detail:   "A job started now shares the GPUs with them: less memory (out-of-memory errors) and slower kernels.",
		Evidence: ev,
		Fixes:    []finding.Fix{toFix(remedy.GPUProcesses())},
	}}
}

func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
