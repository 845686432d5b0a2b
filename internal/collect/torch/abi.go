package torch

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path"

	"github.com/fastpath-dev/fastpath/internal/elfdyn"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

const (
	torchConfigCap = 256 << 10
	// libc10.so's .dynstr is a few hundred KB; anything far larger is not it.
	dynstrCap = 16 << 20
)

// cmakeABIFlag finds what TorchConfig.cmake sets up to torch 2.6:
// set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0"), configured from the
// very variable the build used. torch 2.7 made every build C++11-ABI and
// later releases dropped the line (torch 2.11.0's TorchConfig.cmake, read
// from its PyPI wheel, has no TORCH_CXX_FLAGS at all). It is the first
// match of -D_GLIBCXX_USE_CXX11_ABI=([01])\b, found by a scan (a regexp
// compiled on every doctor start cost 20 µs; abi_test.go compares them).
func cmakeABIFlag(data []byte) (byte, bool) {
	const flag = "-D_GLIBCXX_USE_CXX11_ABI="
	for rest := data; ; {
		i := bytes.Index(rest, []byte(flag))
		if i < 0 {
			return 0, false
		}
		rest = rest[i+len(flag):]
		if len(rest) > 0 && (rest[0] == '0' || rest[0] == '1') && (len(rest) == 1 || !isWordByte(rest[1])) {
			return rest[0], true
		}
	}
}

// isWordByte is regexp's \w: an ASCII letter, digit or underscore.
func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// Mangled-name markers of the two libstdc++ string ABIs. Under the C++11 ABI
// std::string is std::__cxx11::basic_string<...>, mangled with the namespace
// St7__cxx11; under the old ABI it is the abbreviation Ss, so a const
// std::string& parameter is RKSs (S followed by a lowercase letter is one of
// the fixed std abbreviations; substitutions use digits and capitals).
var (
	// c10::detail::torchCheckFail(const char*, const char*, uint32_t,
	// const std::string&), exported by libc10.so, as g++ mangles it under
	// each ABI: one lookup each in the library's hash table settles the
	// question for every torch that has it; others fall back to the names.
	c10CXX11Probe    = "_ZN3c106detail14torchCheckFailEPKcS2_jRKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
	c10PreCXX11Probe = "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs"

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
			if flag, ok := cmakeABIFlag(data); ok {
				v := flag == '1'
				t.CXX11ABI, t.CXX11ABIFrom = &v, fmt.Sprintf("%s: -D_GLIBCXX_USE_CXX11_ABI=%c", p, flag)
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
	f, err := src.Open(p)
	if err != nil {
		return []string{fmt.Sprintf("torch: %s: %v", p, err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return []string{fmt.Sprintf("torch: %s: %v", p, err)}
	}
	ef, err := elfdyn.Open(f, st.Size())
	if err != nil {
		return []string{fmt.Sprintf("torch: %s: not a readable ELF file: %v", p, err)}
	}
	// First ask libc10.so's hash table for one function under both
	// spellings: a few KB read instead of the whole string table.
	if h, err := ef.HashTable(); err == nil {
		if found, err := h.Defined([]string{c10CXX11Probe, c10PreCXX11Probe}); err == nil {
			switch {
			case found[0]:
				v := true
				t.CXX11ABI, t.CXX11ABIFrom = &v, p+": std::__cxx11 in its dynamic symbol names"
				return nil
			case found[1]:
				v := false
				t.CXX11ABI, t.CXX11ABIFrom = &v, p+": old-ABI std::string (Ss) in its dynamic symbol names, no std::__cxx11"
				return nil
			}
		}
	}
	dynstr, err := readDynstr(ef, f)
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

// readDynstr returns the .dynstr section of ef (read from r), up to dynstrCap.
func readDynstr(ef *elfdyn.File, r io.ReaderAt) ([]byte, error) {
	sec, ok := ef.Section(".dynstr")
	if !ok || sec.Type == elf.SHT_NOBITS {
		return nil, fmt.Errorf("no .dynstr section")
	}
	if sec.Size > dynstrCap {
		return nil, fmt.Errorf(".dynstr is %d bytes, more than the %d read", sec.Size, dynstrCap)
	}
	b := make([]byte, sec.Size)
	if _, err := r.ReadAt(b, int64(sec.Offset)); err != nil {
		return nil, fmt.Errorf("reading .dynstr: %v", err)
	}
	return b, nil
}
