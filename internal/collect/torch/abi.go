package torch

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path"
	"regexp"

	"github.com/fastpath-dev/fastpath/internal/elfdyn"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

const (
	torchConfigCap = 256 << 10
	// libc10.so's .dynstr is a few hundred KB; anything far larger is not it.
	dynstrCap = 16 << 20
)

// cmakeABIFlag is what TorchConfig.cmake sets up to torch 2.6:
// set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0"), configured from the
// very variable the build used. torch 2.7 made every build C++11-ABI and
// later releases dropped the line (torch 2.11.0's TorchConfig.cmake, read
// from its PyPI wheel, has no TORCH_CXX_FLAGS at all).
var cmakeABIFlag = regexp.MustCompile(`-D_GLIBCXX_USE_CXX11_ABI=([01])\b`)

// Mangled-name markers of the two libstdc++ string ABIs. Under the C++11 ABI
// std::string is std::__cxx11::basic_string<...>, mangled with the namespace
// St7__cxx11; under the old ABI it is the abbreviation Ss, so a const
// std::string& parameter is RKSs (S followed by a lowercase letter is one of
// the fixed std abbreviations; substitutions use digits and capitals).
var (
	cxx11Marker    = []byte("St7__cxx11")
	preCXX11Marker = []byte("RKSs")
)

// collectCXX11ABI fills t.CXX11ABI and t.CXX11ABIFrom: from
// torch/share/cmake/Torch/TorchConfig.cmake where it still states the flag,
// else from the dynamic symbol names of torch/lib/libc10.so.
//
// Why libc10.so: it is built by the same CMake run with the same global
// _GLIBCXX_USE_CXX11_ABI as libtorch_cpu.so, its exported API takes
// std::string (c10::Error, c10::detail::torchCheckFail), and its .dynstr is
// a few hundred KB where libtorch_cpu.so's is tens of MB. The marker is
// exact: one mangled std::__cxx11 name proves the new ABI; names taking the
// old std::string (RKSs) with no __cxx11 anywhere prove the old one.
func collectCXX11ABI(src source.Source, t *facts.Torch) []string {
	if t.CMake != "" {
		p := path.Join(t.CMake, "Torch", "TorchConfig.cmake")
		if data, err := source.ReadFile(src, p, torchConfigCap); err == nil {
			if m := cmakeABIFlag.FindSubmatch(data); m != nil {
				v := m[1][0] == '1'
				t.CXX11ABI, t.CXX11ABIFrom = &v, fmt.Sprintf("%s: -D_GLIBCXX_USE_CXX11_ABI=%s", p, m[1])
				return nil
			}
		}
	}
	if t.Lib == "" {
		return nil
	}
	p := path.Join(t.Lib, "libc10.so")
	if !source.Exists(src, p) {
		return nil
	}
	dynstr, err := readDynstr(src, p)
	if err != nil {
		return []string{fmt.Sprintf("torch: %s: %v", p, err)}
	}
	switch {
	case bytes.Contains(dynstr, cxx11Marker):
		v := true
		t.CXX11ABI, t.CXX11ABIFrom = &v, p+": std::__cxx11 in its dynamic symbol names"
	case hasPreCXX11String(dynstr):
		v := false
		t.CXX11ABI, t.CXX11ABIFrom = &v, p+": old-ABI std::string (Ss) in its dynamic symbol names, no std::__cxx11"
	}
	return nil
}

// hasPreCXX11String reports a mangled name (_Z...) taking a const
// std::string& of the old ABI.
func hasPreCXX11String(dynstr []byte) bool {
	for len(dynstr) > 0 {
		name := dynstr
		if i := bytes.IndexByte(dynstr, 0); i >= 0 {
			name, dynstr = dynstr[:i], dynstr[i+1:]
		} else {
			dynstr = nil
		}
		if bytes.HasPrefix(name, []byte("_Z")) && bytes.Contains(name, preCXX11Marker) {
			return true
		}
	}
	return false
}

// readDynstr returns the .dynstr section of the ELF file p, up to dynstrCap.
func readDynstr(src source.Source, p string) ([]byte, error) {
	f, err := src.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := elfdyn.CheckHeader(f, fi.Size()); err != nil { // F3: before debug/elf trusts the counts
		return nil, fmt.Errorf("not a readable ELF file: %v", err)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("not a readable ELF file: %v", err)
	}
	s := ef.Section(".dynstr")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("no .dynstr section")
	}
	if s.Size > dynstrCap {
		return nil, fmt.Errorf(".dynstr is %d bytes, more than the %d read", s.Size, dynstrCap)
	}
	b := make([]byte, s.Size)
	if _, err := io.ReadFull(s.Open(), b); err != nil {
		return nil, fmt.Errorf("reading .dynstr: %v", err)
	}
	return b, nil
}
