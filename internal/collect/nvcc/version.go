package nvcc

import (
	"encoding/json"
	"errors"

	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

// ParseVersionJSON reads a toolkit's version.json (CUDA 11.1 and later):
// cuda_nvcc.version is the compiler's own version; the SDK's "cuda" entry
// stands in when a toolkit lists no nvcc component.
func ParseVersionJSON(data []byte) (string, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", err
	}
	for _, key := range []string{"cuda_nvcc", "cuda"} {
		raw, ok := doc[key]
		if !ok {
			continue
		}
		var comp struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(raw, &comp) == nil && versionRE.MatchString(comp.Version) {
			return comp.Version, nil
		}
	}
	return "", errors.New("no cuda_nvcc or cuda version in version.json")
}

// versionRE is a dotted CUDA version: 12.8, 12.8.93, 11.0.228.
var versionRE = lazyregexp.New(`^\d{1,4}(\.\d{1,6}){1,3}$`)

var versionTxtRE = lazyregexp.New(`CUDA Version (\d{1,4}(?:\.\d{1,6}){1,3})`)

// ParseVersionTxt reads version.txt of toolkits before 11.1:
// "CUDA Version 11.0.228".
func ParseVersionTxt(data []byte) (string, error) {
	m := versionTxtRE.FindSubmatch(data)
	if m == nil {
		return "", errors.New(`no "CUDA Version X.Y" in version.txt`)
	}
	return string(m[1]), nil
}

var (
	nvccFullRE    = lazyregexp.New(`release \d{1,4}\.\d{1,6}, V(\d{1,4}(?:\.\d{1,6}){1,3})`)
	nvccReleaseRE = lazyregexp.New(`release (\d{1,4}\.\d{1,6})`)
)

// ParseNvccVersion reads the output of `nvcc --version`:
// "Cuda compilation tools, release 12.8, V12.8.93" gives 12.8.93, and the
// release alone (12.8) where the V part is missing.
func ParseNvccVersion(out []byte) (string, error) {
	if m := nvccFullRE.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	if m := nvccReleaseRE.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	return "", errors.New(`no "release X.Y" in nvcc --version output`)
}
