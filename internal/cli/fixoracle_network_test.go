package cli

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/pep440"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// TestNetworkFixCommandsResolve is the oracle for the install commands
// fastpath prints: every pip / uv pip install that explain prints for the
// ~283 real logs of internal/explain/testdata/corpus (without facts, and with
// the seed container's) and that doctor and plan print for the seed
// container and its variants (fixCommandSources) is read back (name, pin,
// extras, index, --no-build-isolation, --no-deps, --only-binary) and checked
// against PyPI's JSON API (https://pypi.org/pypi/NAME/json and
// /pypi/NAME/VERSION/json, cached in $FASTPATH_TEST_CACHE/pypi-json):
//   - the project exists; a pinned version exists, is not yanked, and has a
//     Linux x86_64 wheel for some CPython 3.9-3.13 or an sdist (a wheel when
//     the command says --only-binary);
//   - where one fix installs torch==X with another package, that package's
//     own Requires-Dist on torch admits X (for an unpinned package, the
//     newest release whose Requires-Dist admits X, which pip's resolver would
//     pick, must exist and install as a wheel or an sdist);
//   - a requirement that would install from an sdist whose setup.py imports
//     torch (read in the real sdist) needs --no-build-isolation.
//
// Requirements whose index is download.pytorch.org cannot be checked here
// (the host is unreachable): their version is checked for shape (no local
// tag, the index's cuXYZ as a CUDA the KB knows, and the KB's torch_wheels
// table for its release) and counted as unchecked online.
func TestNetworkFixCommandsResolve(t *testing.T) {
	cache := filepath.Join(testenv.CacheDir(t), "pypi-json")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	o := &pypiOracle{t: t, dir: cache}
	fixes := fixCommandSources(t)
	var st struct {
		fixes, cmds, reqs, pypi, pinned, paired, torchIndex, paths, sdistChecked, sdistTorch, downloads, importsChecked, urlWheels int
	}
	seen := map[string]bool{}
	for _, fx := range fixes {
		st.fixes++
		// The torch the fix installs, where it pins one.
		torch := ""
		var parsed []pipInstall
		for _, c := range fx.commands {
			p, ok, err := parsePipInstall(c)
			if err != nil {
				t.Errorf("%s: %q: %v", fx.from, c, err)
				continue
			}
			if !ok {
				continue
			}
			parsed = append(parsed, p)
			for _, r := range p.Reqs {
				if canonical(r.Name) == "torch" && r.Pinned() != "" {
					torch = r.Pinned()
				}
			}
		}
		// What the environment has before each command: its own
		// distributions, then what earlier commands of the fix installed.
		have := map[string]string{}
		for d, v := range fx.installed {
			have[d] = v
		}
		haveKey := fmt.Sprint(fx.installed)
		for _, p := range parsed {
			key := fmt.Sprint(torch, "|", p.Cmd, "|", fx.known, "|", haveKey)
			mark := func() {
				if p.Verb == "install" {
					for _, r := range p.Reqs {
						if _, ok := have[canonical(r.Name)]; !ok {
							have[canonical(r.Name)] = "new" // pip installs the newest
						}
						haveKey += "," + canonical(r.Name)
					}
				}
			}
			if seen[key] {
				mark()
				continue
			}
			seen[key] = true
			st.cmds++
			st.paths += len(p.Paths)
			for _, u := range p.Paths {
				if strings.HasPrefix(u, "https://") && strings.HasSuffix(u, ".whl") {
					st.urlWheels++
					if msg := o.checkWheelURL(u, fx.installed["torch"]); msg != "" {
						t.Errorf("%s: %q: %s", fx.from, p.Cmd, msg)
					}
				}
			}
			if p.Verb != "install" {
				st.downloads++
			}
			for _, r := range p.Reqs {
				st.reqs++
				where := fmt.Sprintf("%s: %q", fx.from, p.Cmd)
				if p.NoIndex {
					continue // find-links folders decide
				}
				if p.Index != "" && p.Index != "https://pypi.org/simple" {
					st.torchIndex++
					if msg := checkPyTorchIndexReq(p.Index, r); msg != "" {
						t.Errorf("%s: %s", where, msg)
					}
					continue
				}
				st.pypi++
				if r.Pinned() != "" {
					st.pinned++
				}
				v, msg := o.check(r, p)
				if msg != "" {
					t.Errorf("%s: %s", where, msg)
					continue
				}
				if canonical(r.Name) != "torch" && torch != "" {
					st.paired++
					if msg := o.checkTorchPair(r, v, torch); msg != "" {
						t.Errorf("%s: %s", where, msg)
					}
				}
				if v != "" && (p.NoBinary || !o.hasWheel(r.Name, v)) {
					st.sdistChecked++
					if !o.sdistImportsTorch(r.Name, v) {
						continue
					}
					st.sdistTorch++
					if p.NoBuildIsolation && fx.known {
						st.importsChecked++
						sv := kb.Builds().SetuptoolsVendors
						st, hasST := have["setuptools"]
						vendored := hasST && (st == "new" || !pep440.Less(st, sv.From))
						for _, imp := range o.sdistImports(r.Name, v) {
							d := imp.dist
							if imp.afterSetuptools && vendored && slices.Contains(sv.Modules, d) {
								continue // setuptools' own copy, on sys.path once setuptools is imported
							}
							if _, ok := have[d]; !ok {
								t.Errorf("%s: %s %s's setup.py imports %s, which the environment lacks and the fix does not install before this build without isolation", where, r.Name, v, d)
							}
						}
					}
					if !p.NoBuildIsolation {
						t.Errorf("%s: %s %s installs from an sdist whose setup.py imports torch, without --no-build-isolation (pip's isolated build has no torch)", where, r.Name, v)
					}
				}
			}
			mark()
		}
	}
	t.Logf("oracle: %d fixes, %d distinct pip commands (%d pip download/wheel), %d requirements: %d checked on PyPI (%d pinned, %d paired with a torch pin, %d installs from an sdist read, %d of them import torch in setup.py and need --no-build-isolation; %d of those checked for setup.py's other imports in the environment), %d on download.pytorch.org (shape only, unchecked online), %d paths/URLs (%d wheel URLs checked for shape: release on PyPI, Linux x86_64 CPython 3.9-3.13, torch of the local tag; unchecked online); %d PyPI lookups",
		st.fixes, st.cmds, st.downloads, st.reqs, st.pypi, st.pinned, st.paired, st.sdistChecked, st.sdistTorch, st.importsChecked, st.torchIndex, st.paths, st.urlWheels, o.lookups)
	if st.cmds < 20 || st.pypi < 20 {
		t.Errorf("only %d commands, %d PyPI requirements read: the sources went quiet", st.cmds, st.pypi)
	}
}

// checkPyTorchIndexReq checks a requirement on download.pytorch.org's
// index by shape and against the KB: the index is /whl/cuXYZ or /whl/cpu,
// the pin has no local tag (the index adds it), and for the release the
// KB's torch_wheels table lists, the index's CUDA is one of its rows.
func checkPyTorchIndexReq(index string, r requirement) string {
	m := regexp.MustCompile(`^https://download\.pytorch\.org/whl/(cpu|cu(\d+)|nightly/cu\d+)$`).FindStringSubmatch(index)
	if m == nil {
		return "index " + index + " is not download.pytorch.org/whl/cuXYZ"
	}
	v := r.Pinned()
	if strings.Contains(r.Spec, "+") {
		return r.Text + ": a local tag in the pin (the index's own tag decides)"
	}
	if canonical(r.Name) != "torch" || v == "" || m[2] == "" {
		return ""
	}
	cu := m[2][:len(m[2])-1] + "." + m[2][len(m[2])-1:]
	if tw := kb.CUDA().TorchWheels; v == tw.Release && !slices.ContainsFunc(tw.Rows, func(r struct {
		CUDA  string   `json:"cuda"`
		Archs []string `json:"archs"`
	}) bool {
		return r.CUDA == cu
	}) {
		return fmt.Sprintf("torch %s has no cu%s build in the KB's torch_wheels table", v, m[2])
	}
	if cudas, known := kb.CUDA().TorchReleaseCUDAs(v); known && !slices.Contains(cudas, cu) {
		return fmt.Sprintf("torch %s has no cu%s build (KB torch_release_cuda: %s)", v, m[2], strings.Join(cudas, ", "))
	}
	return ""
}

// checkWheelURL checks a wheel named by URL (a GitHub release asset,
// unreachable here) by its file name: the project's release exists on PyPI
// (the same version, its local tag aside), the tags install on Linux x86_64
// under CPython 3.9-3.13, and a local tag naming a torch (torch2.11) names
// the environment's torch major.minor where that is known.
func (o *pypiOracle) checkWheelURL(u, torch string) string {
	file, err := url.PathUnescape(u[strings.LastIndex(u, "/")+1:])
	if err != nil {
		return err.Error()
	}
	parts := strings.Split(strings.TrimSuffix(file, ".whl"), "-")
	if len(parts) < 5 || !linuxWheel(file) {
		return file + " is no Linux x86_64 wheel for CPython 3.9-3.13"
	}
	version, local, _ := strings.Cut(parts[1], "+")
	if p := o.project(parts[0]); p != nil {
		if _, ok := p.Releases[version]; !ok {
			return fmt.Sprintf("%s: PyPI has no %s %s", file, parts[0], version)
		}
	}
	if m := regexp.MustCompile(`torch(\d+\.\d+)`).FindStringSubmatch(local); m != nil && torch != "" {
		if mm, _, _, ok := kb.MajorMinor(torch); ok && mm != m[1] {
			return fmt.Sprintf("%s is built for torch %s; the environment has torch %s", file, m[1], torch)
		}
	}
	return ""
}

// pypiOracle answers from PyPI's JSON API, caching each answer on disk.
type pypiOracle struct {
	t       *testing.T
	dir     string
	lookups int
	proj    map[string]*pypiProject
	setups  map[string]setupPy
}

type pypiFile struct {
	Filename    string            `json:"filename"`
	PackageType string            `json:"packagetype"`
	Yanked      bool              `json:"yanked"`
	Digests     map[string]string `json:"digests"`
	URL         string            `json:"url"`
	Size        int64             `json:"size"`
}

type pypiProject struct {
	Info struct {
		Name         string   `json:"name"`
		RequiresDist []string `json:"requires_dist"`
	} `json:"info"`
	Releases map[string][]pypiFile `json:"releases"`
	URLs     []pypiFile            `json:"urls"`
}

// get reads path (below https://pypi.org/pypi/) into v through the cache;
// false when PyPI has no such page.
func (o *pypiOracle) get(path string, v any) bool {
	o.t.Helper()
	file := filepath.Join(o.dir, strings.ReplaceAll(path, "/", "@")+".json")
	b, err := os.ReadFile(file)
	if err != nil || time.Since(fileTime(file)) > 7*24*time.Hour {
		o.lookups++
		c := &http.Client{Timeout: 60 * time.Second}
		resp, err := c.Get("https://pypi.org/pypi/" + path + "/json")
		if err != nil {
			o.t.Fatalf("PyPI: %v", err)
		}
		b, err = io.ReadAll(io.LimitReader(resp.Body, 256<<20))
		resp.Body.Close()
		if err != nil {
			o.t.Fatalf("PyPI %s: %v", path, err)
		}
		switch resp.StatusCode {
		case 200:
		case 404:
			b = []byte("null")
		default:
			o.t.Fatalf("PyPI %s: %s", path, resp.Status)
		}
		if err := os.WriteFile(file, b, 0o644); err != nil {
			o.t.Fatal(err)
		}
	}
	if string(b) == "null" {
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		o.t.Fatalf("PyPI %s: %v", path, err)
	}
	return true
}

func fileTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

func (o *pypiOracle) project(name string) *pypiProject {
	if o.proj == nil {
		o.proj = map[string]*pypiProject{}
	}
	n := canonical(name)
	if p, ok := o.proj[n]; ok {
		return p
	}
	p := &pypiProject{}
	if !o.get(n, p) {
		p = nil
	}
	o.proj[n] = p
	return p
}

// requiresDist is the Requires-Dist of one release, read from the
// METADATA of one of its Linux wheels (zip members fetched with HTTP range
// requests from files.pythonhosted.org; PyPI's per-release JSON is not
// served here) and cached; nil for a release with no such wheel.
func (o *pypiOracle) requiresDist(name, v string) []string {
	o.t.Helper()
	file := filepath.Join(o.dir, canonical(name)+"@"+v+".requires.json")
	var out []string
	if b, err := os.ReadFile(file); err == nil && json.Unmarshal(b, &out) == nil {
		return out
	}
	p := o.project(name)
	if p == nil {
		return nil
	}
	var whl *pypiFile
	for _, f := range p.live(v) {
		if linuxWheel(f.Filename) {
			f := f
			whl = &f
			break
		}
	}
	if whl == nil {
		return nil
	}
	url := whl.URL
	if rest, ok := strings.CutPrefix(url, "../../packages/packages/"); ok {
		url = "https://files.pythonhosted.org/packages/" + rest
	}
	o.lookups++
	ra := &httpRange{url: url, c: &http.Client{Timeout: 60 * time.Second}}
	zr, err := zip.NewReader(ra, whl.Size)
	if err != nil {
		o.t.Fatalf("%s: %v", url, err)
	}
	out = []string{}
	for _, zf := range zr.File {
		if parts := strings.Split(zf.Name, "/"); len(parts) == 2 && strings.HasSuffix(parts[0], ".dist-info") && parts[1] == "METADATA" {
			rc, err := zf.Open()
			if err != nil {
				o.t.Fatalf("%s: %v", url, err)
			}
			b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
			rc.Close()
			if err != nil {
				o.t.Fatalf("%s: %v", url, err)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if r, ok := strings.CutPrefix(line, "Requires-Dist:"); ok {
					out = append(out, strings.TrimSpace(r))
				}
			}
			break
		}
	}
	b, _ := json.Marshal(out)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		o.t.Fatal(err)
	}
	return out
}

// httpRange reads a remote file with HTTP range requests.
type httpRange struct {
	url string
	c   *http.Client
}

func (h *httpRange) ReadAt(p []byte, off int64) (int, error) {
	req, err := http.NewRequest("GET", h.url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+int64(len(p))-1))
	resp, err := h.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent {
		return 0, fmt.Errorf("range request: %s", resp.Status)
	}
	n, err := io.ReadFull(resp.Body, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// live are a release's files that are not yanked.
func (p *pypiProject) live(v string) []pypiFile {
	var out []pypiFile
	for _, f := range p.Releases[v] {
		if !f.Yanked {
			out = append(out, f)
		}
	}
	return out
}

// linuxWheel: a wheel file that installs on Linux x86_64 under some CPython
// 3.9-3.13.
func linuxWheel(file string) bool {
	if !strings.HasSuffix(file, ".whl") {
		return false
	}
	parts := strings.Split(strings.TrimSuffix(file, ".whl"), "-")
	if len(parts) < 5 {
		return false
	}
	py, abi, plat := parts[len(parts)-3], parts[len(parts)-2], parts[len(parts)-1]
	platOK := false
	for _, pl := range strings.Split(plat, ".") {
		if pl == "any" || pl == "linux_x86_64" || strings.HasPrefix(pl, "manylinux") && strings.HasSuffix(pl, "_x86_64") {
			platOK = true
		}
	}
	if !platOK {
		return false
	}
	for _, tag := range strings.Split(py, ".") {
		switch {
		case tag == "py3" || tag == "py2":
			if tag == "py3" {
				return true
			}
		case strings.HasPrefix(tag, "py3"):
			var minor int
			if _, err := fmt.Sscanf(tag[3:], "%d", &minor); err == nil && minor <= 13 {
				return true
			}
		case strings.HasPrefix(tag, "cp3"):
			var minor int
			if _, err := fmt.Sscanf(tag[3:], "%d", &minor); err != nil {
				continue
			}
			if minor >= 9 && minor <= 13 || strings.Contains(abi, "abi3") && minor <= 13 {
				return true
			}
		}
	}
	return false
}

func (o *pypiOracle) hasWheel(name, v string) bool {
	p := o.project(name)
	if p == nil {
		return false
	}
	for _, f := range p.live(v) {
		if linuxWheel(f.Filename) {
			return true
		}
	}
	return false
}

func (o *pypiOracle) sdist(name, v string) *pypiFile {
	p := o.project(name)
	if p == nil {
		return nil
	}
	for _, f := range p.live(v) {
		if f.PackageType == "sdist" {
			f := f
			return &f
		}
	}
	return nil
}

// installable: pip finds a file for Linux x86_64 CPython 3.9-3.13.
func (o *pypiOracle) installable(name, v string, onlyBinary bool) bool {
	return o.hasWheel(name, v) || !onlyBinary && o.sdist(name, v) != nil
}

// installableBy: as installable, an sdist with --no-binary.
func (o *pypiOracle) installableBy(name, v string, p pipInstall) bool {
	if p.NoBinary {
		return o.sdist(name, v) != nil
	}
	return o.installable(name, v, p.OnlyBinary)
}

// check checks r on PyPI and returns the version pip would install ("" for
// none) or why it would not.
func (o *pypiOracle) check(r requirement, p pipInstall) (string, string) {
	proj := o.project(r.Name)
	if proj == nil {
		return "", fmt.Sprintf("PyPI has no project %q", r.Name)
	}
	if v := r.Pinned(); v != "" {
		files, ok := proj.Releases[v]
		if !ok {
			return "", fmt.Sprintf("PyPI has no %s %s", r.Name, v)
		}
		if len(files) > 0 && len(proj.live(v)) == 0 {
			return "", fmt.Sprintf("%s %s is yanked on PyPI", r.Name, v)
		}
		if !o.installableBy(r.Name, v, p) {
			return "", fmt.Sprintf("%s %s has no %s on PyPI", r.Name, v, map[bool]string{false: "Linux x86_64 wheel for CPython 3.9-3.13 and no sdist", true: "sdist (--no-binary)"}[p.NoBinary])
		}
		return v, ""
	}
	for _, v := range newestFirst(proj) {
		if matchSpec(v, r.Spec) && len(proj.live(v)) > 0 {
			if !o.installableBy(r.Name, v, p) {
				return "", fmt.Sprintf("%s: the newest release pip would pick, %s, has no Linux x86_64 file for CPython 3.9-3.13 (an sdist with --no-binary)", r.Text, v)
			}
			return v, ""
		}
	}
	return "", fmt.Sprintf("PyPI has no release of %s matching %q", r.Name, r.Spec)
}

// newestFirst are a project's releases, newest first, pre-releases left out.
func newestFirst(p *pypiProject) []string {
	var vs []string
	for v := range p.Releases {
		if _, err := pep440.Parse(v); err == nil && !isPre(v) {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return pep440.Less(vs[j], vs[i]) })
	return vs
}

func isPre(v string) bool {
	n, _, _ := strings.Cut(pep440.Normalize(v), "+")
	return strings.ContainsAny(strings.ReplaceAll(n, "post", ""), "abcd") || strings.Contains(n, "rc")
}

// matchSpec reports whether version v satisfies spec (PEP 440 clauses,
// comma-separated; "" matches all).
func matchSpec(v, spec string) bool {
	if spec == "" {
		return true
	}
	base, _, _ := strings.Cut(v, "+")
	for _, clause := range strings.Split(spec, ",") {
		op, want, err := splitSpec(clause)
		if err != nil {
			return false
		}
		if strings.HasSuffix(want, ".*") {
			prefix := pep440.Normalize(strings.TrimSuffix(want, ".*"))
			n := pep440.Normalize(base)
			in := n == prefix || strings.HasPrefix(n, prefix+".")
			if in != (op == "==") {
				return false
			}
			continue
		}
		if op == "~=" {
			i := strings.LastIndex(want, ".")
			if pep440.Less(base, want) || !matchSpec(v, "=="+want[:i]+".*") {
				return false
			}
			continue
		}
		cmpTo := v
		if !strings.Contains(want, "+") {
			cmpTo = base
		}
		c := 0
		if pep440.Less(cmpTo, want) {
			c = -1
		} else if pep440.Less(want, cmpTo) {
			c = 1
		}
		ok := map[string]bool{"==": c == 0, "===": cmpTo == want, "!=": c != 0, ">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0}[op]
		if !ok {
			return false
		}
	}
	return true
}

// torchClause is the specifier a Requires-Dist line puts on torch, ok false
// when the line is about another project or only for an extra.
func torchClause(line string) (spec string, ok bool) {
	req, marker, _ := strings.Cut(line, ";")
	if strings.Contains(marker, "extra") {
		return "", false
	}
	req = strings.NewReplacer("(", "", ")", "", " ", "").Replace(req)
	r, err := parseRequirement(req)
	if err != nil || canonical(r.Name) != "torch" {
		return "", false
	}
	return r.Spec, true
}

// checkTorchPair: the release v of r (a pin, or the release pip would pick)
// must admit torch==torch in its own Requires-Dist. For an unpinned r, the
// newest release that admits it is what pip settles on; there must be one.
func (o *pypiOracle) checkTorchPair(r requirement, v, torch string) string {
	admits := func(v string) (bool, string) {
		for _, line := range o.requiresDist(r.Name, v) {
			if spec, ok := torchClause(line); ok {
				return matchSpec(torch, spec), spec
			}
		}
		return true, ""
	}
	if r.Pinned() != "" {
		if ok, spec := admits(v); !ok {
			return fmt.Sprintf("%s %s requires torch%s (its Requires-Dist), and the same fix installs torch==%s", r.Name, v, spec, torch)
		}
		return ""
	}
	proj := o.project(r.Name)
	tried := 0
	for _, cand := range newestFirst(proj) {
		if !matchSpec(cand, r.Spec) || len(proj.live(cand)) == 0 {
			continue
		}
		if tried++; tried > 60 {
			break
		}
		if ok, _ := admits(cand); ok {
			if !o.installable(r.Name, cand, false) {
				return fmt.Sprintf("%s: the release that admits torch==%s, %s, has no Linux x86_64 file", r.Name, torch, cand)
			}
			o.t.Logf("%s with torch==%s: pip settles on %s %s (newest %s)", r.Name, torch, r.Name, cand, v)
			return ""
		}
	}
	return fmt.Sprintf("no release of %s among the newest %d admits torch==%s: pip's resolver cannot satisfy the fix", r.Name, tried-1, torch)
}

// stdlib are the standard-library modules the profiled setup.py files
// import.
var stdlib = map[string]bool{"os": true, "sys": true, "re": true, "ast": true, "glob": true, "shutil": true,
	"subprocess": true, "warnings": true, "platform": true, "pathlib": true, "urllib": true, "typing": true,
	"time": true, "datetime": true, "json": true, "functools": true, "itertools": true, "stat": true,
	"sysconfig": true, "tarfile": true, "importlib": true, "shlex": true, "io": true, "collections": true,
	"copy": true, "math": true, "logging": true, "tempfile": true, "textwrap": true, "contextlib": true,
	"dataclasses": true, "enum": true, "argparse": true, "hashlib": true, "zipfile": true, "pprint": true,
	"__future__": true, "filecmp": true, "multiprocessing": true}

// sdistImports are the distributions the sdist's setup.py imports at its
// top level, other than torch, the standard library and the sdist's own
// modules (distutils is setuptools' since Python 3.12).
func (o *pypiOracle) sdistImports(name, v string) []sdistImport {
	setup, local := o.sdistSetup(name, v)
	var out []sdistImport
	seen := map[string]bool{}
	after := false // setuptools was imported above
	for _, m := range regexp.MustCompile(`(?m)^(?:import|from)\s+([A-Za-z_]\w*)`).FindAllStringSubmatch(setup, -1) {
		mod := m[1]
		if mod == "torch" || stdlib[mod] || local[mod] {
			continue
		}
		if mod == "distutils" || mod == "pkg_resources" {
			mod = "setuptools"
		}
		if d := canonical(mod); !seen[d] {
			seen[d] = true
			out = append(out, sdistImport{d, after})
		}
		if mod == "setuptools" {
			after = true
		}
	}
	return out
}

// sdistImport is a distribution a setup.py imports, and whether setuptools
// was imported before it.
type sdistImport struct {
	dist            string
	afterSetuptools bool
}

// sdistImportsTorch reads the real sdist's setup.py (downloaded by sha256
// into the test cache) for an import of torch.
func (o *pypiOracle) sdistImportsTorch(name, v string) bool {
	setup, _ := o.sdistSetup(name, v)
	return regexp.MustCompile(`(?m)^\s*(import torch\b|from torch[ .])`).MatchString(setup)
}

// sdistSetup is the setup.py at the root of the real sdist (downloaded by
// sha256 into the test cache) and the names at that root (its own modules).
func (o *pypiOracle) sdistSetup(name, v string) (string, map[string]bool) {
	key := canonical(name) + "@" + v
	if s, ok := o.setups[key]; ok {
		return s.text, s.local
	}
	text, local := o.readSetup(name, v)
	if o.setups == nil {
		o.setups = map[string]setupPy{}
	}
	o.setups[key] = setupPy{text, local}
	return text, local
}

type setupPy struct {
	text  string
	local map[string]bool
}

func (o *pypiOracle) readSetup(name, v string) (string, map[string]bool) {
	local := map[string]bool{}
	f := o.sdist(name, v)
	if f == nil || !strings.HasSuffix(f.Filename, ".tar.gz") {
		return "", local
	}
	path := testenv.Sdist(o.t, canonical(name), f.Filename, f.Digests["sha256"])
	fh, err := os.Open(path)
	if err != nil {
		o.t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		o.t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	setup := ""
	for {
		h, err := tr.Next()
		if err != nil {
			return setup, local
		}
		parts := strings.Split(h.Name, "/")
		if len(parts) >= 2 && parts[1] != "" {
			local[strings.TrimSuffix(parts[1], ".py")] = true
		}
		if len(parts) == 2 && parts[1] == "setup.py" {
			b, err := io.ReadAll(io.LimitReader(tr, 4<<20))
			if err != nil {
				o.t.Fatal(err)
			}
			setup = string(b)
		}
	}
}
