package pyenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// candidate is one metadata folder (or egg-info file) found on sys.path.
type candidate struct {
	loc string // the sys.path entry, or an egg-link's target
	dir string // the .dist-info / .egg-info / EGG-INFO path
	// listedDir: the listing of loc says dir is a folder (not a link to
	// one), so readDist needs no stat to know it.
	listedDir bool

	dist     facts.Distribution
	ok       bool   // metadata read and has a Name
	hasDURL  bool   // a valid direct_url.json was read (pip then never looks for egg-links)
	durlEdit string // its editable project folder, when editable
}

// isSharedObject reports whether a RECORD path names a shared object as
// \.so(\.[0-9]+)*$ does (libfoo.so, libfoo.so.1.2): a scan, run on every
// RECORD line (names_test.go compares it with the regexp).
func isSharedObject(p []byte) bool {
	for {
		if bytes.HasSuffix(p, []byte(".so")) {
			return true
		}
		i := bytes.LastIndexByte(p, '.')
		if i < 0 || !allDigits(p[i+1:]) {
			return false
		}
		p = p[:i]
	}
}

// canonicalize is packaging.utils.canonicalize_name:
// re.sub(r"[-_.]+", "-", name).lower().
func canonicalize(name string) string {
	return replaceRuns(name, isNameSep, '-', true)
}

// lookupKey is importlib.metadata's grouping key for a metadata folder name.
func lookupKey(low string) string {
	if i := strings.LastIndexByte(low, '.'); i >= 0 {
		low = low[:i]
	}
	low, _, _ = strings.Cut(low, "-")
	return replaceRuns(low, isNameSep, '_', true)
}

// eggLinkName is pip's egg_link_name stem: re.sub("[^A-Za-z0-9.]+", "-", name).
func eggLinkName(name string) string {
	return replaceRuns(name, func(c byte) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.')
	}, '-', false)
}

func isNameSep(c byte) bool { return c == '-' || c == '_' || c == '.' }

// replaceRuns replaces each run of bytes in the class with sep and, with
// lower, lowercases the result as strings.ToLower does. The classes are
// ASCII: a byte of a multi-byte character is in one only where every byte
// of it is (eggLinkName's "not alphanumeric"), so a run of characters is
// a run of bytes, as the regular expressions it replaces saw them.
// name is returned as it is when nothing changes.
func replaceRuns(name string, in func(byte) bool, sep byte, lower bool) string {
	changed, ascii := false, true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if in(c) {
			if c != sep || i+1 < len(name) && in(name[i+1]) {
				changed = true
			}
		} else if lower && 'A' <= c && c <= 'Z' {
			changed = true
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	out := name
	if changed {
		b := make([]byte, 0, len(name))
		for i := 0; i < len(name); i++ {
			c := name[i]
			switch {
			case in(c):
				if i == 0 || !in(name[i-1]) { // a run's first byte
					b = append(b, sep)
				}
			case lower && 'A' <= c && c <= 'Z':
				b = append(b, c+'a'-'A')
			default:
				b = append(b, c)
			}
		}
		out = string(b)
	}
	if lower && !ascii {
		out = strings.ToLower(out)
	}
	return out
}

// pathlibNorm spells p as str(pathlib.Path(p)) does: "." parts and repeated
// or trailing slashes dropped, ".." kept.
func pathlibNorm(p string) string {
	if isPathlibNorm(p) {
		return p // most are: a folder joined with a listed name
	}
	abs := strings.HasPrefix(p, "/")
	var parts []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	s := strings.Join(parts, "/")
	if abs {
		return "/" + s
	}
	if s == "" {
		return "."
	}
	return s
}

// isPathlibNorm reports whether pathlibNorm(p) is p: no empty or "."
// component, no trailing slash.
func isPathlibNorm(p string) bool {
	if p == "/" {
		return true
	}
	start := 0
	if strings.HasPrefix(p, "/") {
		start = 1
	}
	for i := start; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if c := p[start:i]; c == "" || c == "." {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// scan lists the metadata folders in one sys.path entry in importlib's
// order: grouped by normalised name in listing order; inside an .egg folder
// its EGG-INFO.
func (c *collector) scan(loc string, ents []fs.DirEntry) []*candidate {
	var order []string
	groups := map[string][]*candidate{}
	var eggs []*candidate
	baseIsEgg := strings.HasSuffix(strings.ToLower(path.Base(loc)), ".egg")
	isMetadata := func(low string) bool {
		return strings.HasSuffix(low, ".dist-info") || strings.HasSuffix(low, ".egg-info") || baseIsEgg && low == "egg-info"
	}
	// The candidates are made in one slab: one allocation, not thousands.
	count := 0
	for _, ent := range ents {
		if isMetadata(strings.ToLower(ent.Name())) {
			count++
		}
	}
	slab := make([]candidate, 0, count)
	add := func(n string, ent fs.DirEntry) *candidate {
		slab = append(slab, candidate{loc: loc, dir: pathlibNorm(loc + "/" + n), listedDir: ent.Type().IsDir()})
		return &slab[len(slab)-1]
	}
	for _, ent := range ents {
		n := ent.Name()
		low := strings.ToLower(n)
		switch {
		case strings.HasSuffix(low, ".dist-info") || strings.HasSuffix(low, ".egg-info"):
			k := lookupKey(low)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], add(n, ent))
		case baseIsEgg && low == "egg-info":
			eggs = append(eggs, add(n, ent))
		}
	}
	var out []*candidate
	for _, k := range order {
		out = append(out, groups[k]...)
	}
	return append(out, eggs...)
}

// linked follows the .egg-link files of loc (legacy `setup.py develop`):
// the first non-empty line names the project folder, searched like a
// sys.path entry.
func (c *collector) linked(loc string, ents []fs.DirEntry) []*candidate {
	var out []*candidate
	for _, ent := range ents {
		n := ent.Name()
		if !strings.HasSuffix(n, ".egg-link") || n == ".egg-link" {
			continue
		}
		p := path.Join(loc, n)
		text, err := source.ReadFile(c.src, p, maxSmall)
		if err != nil {
			c.warn("%s: %v", p, err)
			continue
		}
		var target string
		for _, line := range strings.Split(universalNewlines(string(text)), "\n") {
			if t := strings.TrimSpace(line); t != "" {
				target = t
				break
			}
		}
		if target == "" {
			continue
		}
		if !strings.HasPrefix(target, "/") {
			target = loc + "/" + target
		}
		target = pathlibNorm(target)
		tents, err := c.src.ReadDir(path.Clean(target))
		if err != nil {
			c.warn("%s: target %s: %v", p, target, err)
			continue
		}
		out = append(out, c.scan(target, tents)...)
	}
	return out
}

// collectDists finds every distribution on e.SitePath in pip's order,
// marking the ones an earlier entry shadows.
func (c *collector) collectDists(e *env) {
	var cands []*candidate
	eggLinks := map[string]bool{} // "dir/name.egg-link" files on sys.path
	scanned := map[string]bool{}
	for _, loc := range e.SitePath {
		real, err := c.src.Resolve(loc)
		if err != nil {
			c.warn("%s: %v", loc, err)
			continue
		}
		if scanned[real] {
			continue // the same folder under another name (lib64 -> lib)
		}
		scanned[real] = true
		ents, err := c.src.ReadDir(loc)
		if err != nil {
			c.warn("%s: %v", loc, err)
			continue
		}
		for _, ent := range ents {
			if strings.HasSuffix(ent.Name(), ".egg-link") {
				eggLinks[path.Join(loc, ent.Name())] = true
			}
		}
		cands = append(cands, c.scan(loc, ents)...)
		cands = append(cands, c.linked(loc, ents)...)
	}
	c.readAll(cands)
	ok := 0
	for _, cd := range cands {
		if cd.ok {
			ok++
		}
	}
	if ok > 0 { // none stays nil (JSON null), as before
		// One allocation, not one per doubling: a Distribution is large
		// and there may be thousands.
		e.Distributions = slices.Grow(e.Distributions, ok)
	}
	seen := make(map[string]bool, ok)
	for _, cd := range cands {
		if !cd.ok {
			continue
		}
		d := cd.dist
		key := canonicalize(d.Name)
		if seen[key] {
			d.Shadowed = true
		}
		seen[key] = true
		if cd.hasDURL {
			if cd.durlEdit != "" {
				d.Editable, d.EditableLocation = true, cd.durlEdit
			}
		} else if !d.Shadowed && len(eggLinks) > 0 {
			// pip: no direct_url.json, so look for NAME.egg-link on sys.path.
			link := eggLinkName(d.Name) + ".egg-link"
			for _, loc := range e.SitePath {
				if eggLinks[path.Join(loc, link)] && isFile(c.src, path.Join(loc, link)) {
					d.Editable, d.EditableLocation = true, path.Dir(d.MetadataDir)
					break
				}
			}
		}
		e.Distributions = append(e.Distributions, d)
	}
	e.NumDists = len(e.Distributions)
}

// readAll reads the candidates' metadata concurrently.
func (c *collector) readAll(cands []*candidate) {
	work := make(chan *candidate)
	var wg sync.WaitGroup
	n := min(runtime.GOMAXPROCS(0)*2, len(cands))
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for cd := range work {
				source.AcquireReader() // the descriptor budget (source/readers.go)
				c.readDist(cd)
				source.ReleaseReader()
			}
		}()
	}
	for _, cd := range cands {
		work <- cd
	}
	close(work)
	wg.Wait()
}

// readText reads a metadata file as importlib.metadata's read_text: a
// missing or unreadable file is "" (and no error), bad UTF-8 is an error.
func readText(dir *source.Folder, name string, max int64) (string, error) {
	f, err := dir.Open(name)
	if err != nil {
		return "", nil
	}
	b, err := source.ReadOpen(f, dir.Path(name), max)
	f.Close()
	if err != nil {
		if errors.Is(err, source.ErrTooLarge) {
			return "", err
		}
		return "", nil
	}
	if !utf8.Valid(b) {
		return "", errors.New("not UTF-8")
	}
	return string(b), nil
}

// readHeaders reads a metadata file up to the end of its header block
// (a blank line): the long description after it is never needed.
func readHeaders(f source.File, err error) (string, error) {
	if err != nil {
		return "", nil // importlib.metadata treats unreadable as absent
	}
	defer f.Close()
	// Read into buf itself, at most 16 KB at a time: a small file is read
	// into one buffer of its size, with no copy.
	const chunk = 16 << 10
	buf := make([]byte, 0, bufferFor(f, chunk))
	for int64(len(buf)) < maxMetadata {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, chunk)
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), len(buf)+chunk)])
		// Scan only what is new (and the byte before it, for a blank line
		// split across reads): rescanning from the start made a 2 GiB
		// METADATA without a blank line cost seconds.
		from := max(0, len(buf)-1)
		buf = buf[:len(buf)+n]
		if i := headerEnd(buf[from:]); i >= 0 {
			buf = buf[:from+i]
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil
		}
	}
	if !utf8.Valid(buf) {
		return "", errors.New("not UTF-8")
	}
	return string(buf), nil
}

// bufferFor sizes a read buffer for f: at most max, and no larger than the
// file (plus the byte that sees its end) where its stat says so. Five
// thousand distributions with 64 KB buffers each would allocate 320 MB.
// (encoding/csv wraps any bufio.Reader under 4 KB in another 4 KB one.)
func bufferFor(f source.File, max int64) int {
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() >= 0 && fi.Size() < max {
		return int(fi.Size()) + 16 // bufio's smallest buffer is 16 bytes
	}
	return int(max)
}

// headerEnd finds the blank line ending a header block ("\n\n", "\r\n\r\n",
// "\r\r"), returning the length to keep, or -1.
func headerEnd(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		switch {
		case b[i] == '\n' && b[i+1] == '\n':
			return i + 1
		case b[i] == '\r' && b[i+1] == '\r':
			return i + 1
		case b[i] == '\n' && b[i+1] == '\r': // a lone \r is a newline too
			return i + 1
		}
	}
	return -1
}

// readDist reads one metadata folder (or egg-info file).
func (c *collector) readDist(cd *candidate) {
	d := &cd.dist
	d.Location, d.MetadataDir = path.Clean(cd.loc), cd.dir
	d.Format = "egg-info"
	if strings.HasSuffix(strings.ToLower(cd.dir), ".dist-info") {
		d.Format = "dist-info"
	}
	isDir := cd.listedDir
	if !isDir {
		fi, err := c.src.Stat(cd.dir)
		if err != nil {
			c.warn("%s: %v", cd.dir, err)
			return
		}
		isDir = fi.IsDir()
	}
	var text string
	var err error
	var dir *source.Folder
	if isDir {
		// The folder is resolved once for its four or five files
		// (source.Folder).
		dir = source.OpenFolder(c.src, cd.dir)
		defer dir.Close()
		for _, n := range []string{"METADATA", "PKG-INFO"} {
			text, err = readHeaders(dir.Open(n))
			if err != nil {
				c.warn("%s/%s: %v", cd.dir, n, err)
				return
			}
			if text != "" {
				break
			}
		}
	} else if text, err = readHeaders(c.src.Open(cd.dir)); err != nil {
		c.warn("%s: %v", cd.dir, err)
		return
	}
	md := parseMetadata(text)
	name, ok := md.Get("Name")
	if !ok {
		c.warn("%s: skipped: no Name in its metadata", cd.dir)
		return
	}
	// Clones: a value is a slice of the header block, which is not kept.
	d.Name = strings.Clone(name)
	d.Version, ok = md.Get("Version")
	d.Version = strings.Clone(d.Version)
	if !ok {
		c.warn("%s: no Version in its metadata", cd.dir)
	}
	d.Requires = cloneAll(md.All("Requires-Dist"))
	cd.ok = true
	if !isDir {
		return
	}
	if !c.listOnly {
		c.readInstallInfo(cd, dir)
	}
	if t, err := readText(dir, "direct_url.json", maxSmall); err != nil {
		c.warn("%s/direct_url.json: %v", cd.dir, err)
	} else if t != "" {
		edit, valid, err := parseDirectURL(t)
		if err != nil {
			c.warn("%s/direct_url.json: %v", cd.dir, err)
		}
		cd.hasDURL, cd.durlEdit = valid, edit
	}
}

// cloneAll clones each of values (slices of a header block, see
// parseMetadata), in place.
func cloneAll(values []string) []string {
	for i, v := range values {
		values[i] = strings.Clone(v)
	}
	return values
}

// readInstallInfo reads what pip list does not show: INSTALLER, the WHEEL
// tags and RECORD.
func (c *collector) readInstallInfo(cd *candidate, dir *source.Folder) {
	d := &cd.dist
	if t, err := readText(dir, "INSTALLER", maxSmall); err == nil {
		for _, line := range strings.Split(universalNewlines(t), "\n") {
			if s := strings.TrimSpace(line); s != "" {
				d.Installer = s
				break
			}
		}
	}
	if t, err := readText(dir, "WHEEL", maxSmall); err == nil && t != "" {
		d.Tags = cloneAll(parseMetadata(t).All("Tag"))
	}
	c.readRecord(cd, dir)
	if c.native != nil && len(d.Extensions) > 0 {
		c.native(d.Name, d.Version, d.Location, d.Extensions)
	}
}

// recordReaders are the RECORD readers and their buffers, one per worker
// at a time: a buffer per distribution allocated 20 MB in a
// 5,000-distribution environment.
var recordReaders = sync.Pool{New: func() any { return &recordReader{br: bufio.NewReaderSize(nil, 16<<10)} }}

// readRecord counts RECORD's files and lists the native libraries in it.
func (c *collector) readRecord(cd *candidate, dir *source.Folder) {
	p := path.Join(cd.dir, "RECORD")
	f, err := dir.Open("RECORD")
	if err != nil {
		return
	}
	defer f.Close()
	r := recordReaders.Get().(*recordReader)
	r.br.Reset(io.LimitReader(f, maxRecord))
	r.reset(r.br)
	defer func() {
		r.br.Reset(nil) // drop the file
		if cap(r.raw) > 64<<10 || cap(r.first) > 64<<10 {
			r.raw, r.first = nil, nil // a hostile line is not kept in the pool
		}
		recordReaders.Put(r)
	}()
	d := &cd.dist
	extra := 0
	for {
		file, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			c.warn("%s: %v", p, err)
			break
		}
		if len(file) == 0 {
			continue
		}
		d.Files++
		if isSharedObject(file) {
			if len(d.Extensions) < maxExtensions {
				d.Extensions = append(d.Extensions, string(file))
			} else {
				extra++
			}
		}
	}
	if extra > 0 {
		c.warn("%s: lists more than %d shared objects; %d more are not listed", p, maxExtensions, extra)
	}
}

// parseDirectURL validates direct_url.json as pip's DirectUrl.from_json
// does and returns the editable project folder (for dir_info.editable).
// valid false means pip ignores the file (and then looks for egg-links).
func parseDirectURL(text string) (editable string, valid bool, err error) {
	var d map[string]any
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		return "", false, err
	}
	url, ok := d["url"].(string)
	if !ok {
		return "", false, errors.New("url must be a string")
	}
	if v, ok := d["subdirectory"]; ok {
		if _, ok := v.(string); !ok {
			return "", false, errors.New("subdirectory must be a string")
		}
	}
	var infos []string
	for _, k := range []string{"archive_info", "dir_info", "vcs_info"} {
		v, ok := d[k]
		if !ok {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return "", false, errors.New(k + " must be an object")
		}
		for _, f := range infoFields[k] {
			fv, present := m[f.name]
			if !present {
				if f.required {
					return "", false, errors.New(k + "." + f.name + " missing")
				}
				continue
			}
			if !f.check(fv) {
				return "", false, errors.New(k + "." + f.name + " has the wrong type")
			}
		}
		infos = append(infos, k)
	}
	if len(infos) != 1 {
		return "", false, errors.New("want exactly one of archive_info, dir_info, vcs_info")
	}
	if infos[0] != "dir_info" {
		return "", true, nil
	}
	if e, _ := d["dir_info"].(map[string]any)["editable"].(bool); !e {
		return "", true, nil
	}
	p, err := urlToPath(url)
	if err != nil {
		return "", false, err
	}
	return p, true, nil
}

type infoField struct {
	name     string
	required bool
	check    func(any) bool
}

func isString(v any) bool { _, ok := v.(string); return ok }
func isBool(v any) bool   { _, ok := v.(bool); return ok }
func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

var infoFields = map[string][]infoField{
	"archive_info": {{"hash", false, isString}, {"hashes", false, isObject}},
	"dir_info":     {{"editable", false, isBool}},
	"vcs_info":     {{"vcs", true, isString}, {"commit_id", true, isString}, {"requested_revision", false, isString}},
}

// urlToPath is pip's url_to_path for POSIX: file: URLs only, host empty or
// localhost, query and fragment dropped, the path percent-decoded.
func urlToPath(url string) (string, error) {
	url = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, strings.TrimLeft(url, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	if !strings.HasPrefix(url, "file:") {
		return "", errors.New("editable url is not a file: URL")
	}
	rest := url[len("file:"):]
	rest, _, _ = strings.Cut(rest, "#")
	rest, _, _ = strings.Cut(rest, "?")
	if strings.HasPrefix(rest, "//") {
		host := rest[2:]
		i := strings.IndexByte(host, '/')
		if i < 0 {
			i = len(host)
		}
		if h := host[:i]; h != "" && h != "localhost" {
			return "", errors.New("editable url names a remote host " + h)
		}
		rest = host[i:]
	}
	return unquote(rest), nil
}

// unquote is urllib.parse.unquote: %XX runs decoded as UTF-8, each bad
// byte becoming U+FFFD; malformed escapes kept as they are.
func unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var out strings.Builder
	var run []byte
	flush := func() {
		for len(run) > 0 {
			r, n := utf8.DecodeRune(run)
			out.WriteRune(r)
			run = run[n:]
		}
	}
	for i := 0; i < len(s); {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			run = append(run, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 3
			continue
		}
		flush()
		out.WriteByte(s[i])
		i++
	}
	flush()
	return out.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
