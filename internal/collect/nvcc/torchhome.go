package nvcc

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// glibcCSPath is confstr(_CS_PATH) on glibc: what Python's shutil.which
// searches when PATH is not set at all.
const glibcCSPath = "/bin:/usr/bin"

// TorchHome replays torch.utils.cpp_extension._find_cuda_home (torch 2.11,
// read in pytorch/pytorch torch/utils/cpp_extension.py):
//
//	cuda_home = os.environ.get('CUDA_HOME') or os.environ.get('CUDA_PATH')
//	if cuda_home is None:
//	    nvcc_path = shutil.which("nvcc")
//	    if nvcc_path is not None: cuda_home = dirname(dirname(nvcc_path))
//	    else: cuda_home = '/usr/local/cuda'; None unless os.path.exists
//
// The paths are kept as torch would hold them: the variable's text
// verbatim, and the nvcc path as which() joins it, with no symbolic link
// resolved. torch only computes this for CUDA builds of itself (a CPU torch
// has CUDA_HOME None); that is left to the reader of Facts.Torch.
func TorchHome(src source.Source, env source.Env) (*facts.CUDAHome, []string) {
	var warns []string
	home, via := "", ""
	if v := env.Get("CUDA_HOME"); v != "" {
		home, via = v, "CUDA_HOME"
	} else if v, set := env.Lookup("CUDA_PATH"); set {
		if v == "" {
			// `'' or ''` is '' in Python: torch ends up with CUDA_HOME = ''
			// and builds fail looking for bin/nvcc in the working directory.
			return nil, []string{"nvcc: CUDA_PATH is set but empty, so torch's CUDA_HOME is '' and no toolkit is used"}
		}
		home, via = v, "CUDA_PATH"
	} else if nvcc, ok := pyWhich(src, env, "nvcc"); ok {
		home, via = pyDirname(pyDirname(nvcc)), "PATH"
	} else if source.Exists(src, "/usr/local/cuda") {
		home, via = "/usr/local/cuda", "/usr/local/cuda"
	} else {
		return nil, nil
	}
	h := &facts.CUDAHome{Path: home, Via: via}
	nvcc := pyJoin(home, "bin", "nvcc")
	if !strings.HasPrefix(nvcc, "/") {
		warns = append(warns, fmt.Sprintf("nvcc: %s=%q is a relative path: torch resolves it against the build's working directory, which is not known here", via, home))
		return h, warns
	}
	if fi, err := src.Stat(nvcc); err == nil && !fi.IsDir() {
		h.NVCC = nvcc
	}
	return h, warns
}

// pyWhich is shutil.which(name) on Linux: the PATH entries in order (the
// first spelling of a repeated entry only), each name joined as os.path.join
// does, the first existing non-folder with an execute bit. Relative entries
// depend on a working directory that is not known here and are skipped.
func pyWhich(src source.Source, env source.Env, name string) (string, bool) {
	pathList, set := env.Lookup("PATH")
	if !set {
		pathList = glibcCSPath
	}
	if pathList == "" {
		return "", false
	}
	seen := map[string]bool{}
	for _, dir := range strings.Split(pathList, ":") {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if !strings.HasPrefix(dir, "/") {
			continue
		}
		p := pyJoin(dir, name)
		fi, err := src.Stat(p)
		if err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// pyJoin is os.path.join for POSIX paths: no cleaning, an absolute part
// restarts the path, and a "/" is added only where missing.
func pyJoin(a string, parts ...string) string {
	for _, b := range parts {
		switch {
		case strings.HasPrefix(b, "/"):
			a = b
		case a == "" || strings.HasSuffix(a, "/"):
			a += b
		default:
			a += "/" + b
		}
	}
	return a
}

// pyDirname is os.path.dirname for POSIX paths: everything before the last
// "/", with trailing slashes dropped unless it is all slashes.
func pyDirname(p string) string {
	head := p[:strings.LastIndex(p, "/")+1]
	if trimmed := strings.TrimRight(head, "/"); trimmed != "" {
		return trimmed
	}
	return head
}
