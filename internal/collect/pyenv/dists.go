package pyenv

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
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

var (
	nameRunRe = lazyregexp.New(`[-_.]+`)
	soRe      = lazyregexp.New(`\.so(\.[0-9]+)*$`)
	eggLinkRe = lazyregexp.New(`[^A-Za-z0-9.]+`)
)

// canonicalize is packaging.utils.canonicalize_name.
func canonicalize(name string) string {
	return strings.ToLower(nameRunRe.ReplaceAllString(name, "-"))
}

// lookupKey is importlib.metadata's grouping key for a metadata folder name.
func lookupKey(low string) string {
	if i := strings.LastIndexByte(low, '.'); i >= 0 {
		low = low[:i]
	}
	low, _, _ = strings.Cut(low, "-")
	return strings.ReplaceAll(strings.ToLower(nameRunRe.ReplaceAllString(low, "-")), "-", "_")
}

// pathlibNorm spells p as str(pathlib.Path(p)) does: "." parts and repeated
// or trailing slashes dropped, ".." kept.
func pathlibNorm(p string) string {
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

// scan lists the metadata folders in one sys.path entry in importlib's
// order: grouped by normalised name in listing order; inside an .egg folder
// its EGG-INFO.
func (c *collector) scan(loc string, ents []fs.DirEntry) []*candidate {
	var order []string
	groups := map[string][]*candidate{}
	var eggs []*candidate
	baseIsEgg := strings.HasSuffix(strings.ToLower(path.Base(loc)), ".egg")
	for _, ent := range ents {
		n := ent.Name()
		low := strings.ToLower(n)
		switch {
		case strings.HasSuffix(low, ".dist-info") || strings.HasSuffix(low, ".egg-info"):
			k := lookupKey(low)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], &candidate{loc: loc, dir: pathlibNorm(loc + "/" + n), listedDir: ent.Type().IsDir()})
		case baseIsEgg && low == "egg-info":
			eggs = append(eggs, &candidate{loc: loc, dir: pathlibNorm(loc + "/" + n), listedDir: ent.Type().IsDir()})
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
	seen := map[string]bool{}
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
			link := eggLinkRe.ReplaceAllString(d.Name, "-") + ".egg-link"
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
func (c *collector) readText(p string, max int64) (string, error) {
	b, err := source.ReadFile(c.src, p, max)
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
func (c *collector) readHeaders(p string) (string, error) {
	f, err := c.src.Open(p)
	if err != nil {
		return "", nil // importlib.metadata treats unreadable as absent
	}
	defer f.Close()
	var buf []byte
	chunk := make([]byte, bufferFor(f, 16<<10))
	for int64(len(buf)) < maxMetadata {
		n, err := f.Read(chunk)
		// Scan only what is new (and the byte before it, for a blank line
		// split across reads): rescanning from the start made a 2 GiB
		// METADATA without a blank line cost seconds.
		from := max(0, len(buf)-1)
		buf = append(buf, chunk[:n]...)
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
	if isDir {
		for _, n := range []string{"METADATA", "PKG-INFO"} {
			text, err = c.readHeaders(path.Join(cd.dir, n))
			if err != nil {
				c.warn("%s/%s: %v", cd.dir, n, err)
				return
			}
			if text != "" {
				break
			}
		}
	} else if text, err = c.readHeaders(cd.dir); err != nil {
		c.warn("%s: %v", cd.dir, err)
		return
	}
	md := parseMetadata(text)
	name, ok := md.Get("Name")
	if !ok {
		c.warn("%s: skipped: no Name in its metadata", cd.dir)
		return
	}
	d.Name = name
	d.Version, ok = md.Get("Version")
	if !ok {
		c.warn("%s: no Version in its metadata", cd.dir)
	}
	d.Requires = md.All("Requires-Dist")
	cd.ok = true
	if !isDir {
		return
	}
	if !c.listOnly {
		c.readInstallInfo(cd)
	}
	if t, err := c.readText(path.Join(cd.dir, "direct_url.json"), maxSmall); err != nil {
		c.warn("%s/direct_url.json: %v", cd.dir, err)
	} else if t != "" {
		edit, valid, err := parseDirectURL(t)
		if err != nil {
			c.warn("%s/direct_url.json: %v", cd.dir, err)
		}
		cd.hasDURL, cd.durlEdit = valid, edit
	}
}

// readInstallInfo reads what pip list does not show: INSTALLER, the WHEEL
// tags and RECORD.
func (c *collector) readInstallInfo(cd *candidate) {
	d := &cd.dist
	if t, err := c.readText(path.Join(cd.dir, "INSTALLER"), maxSmall); err == nil {
		for _, line := range strings.Split(universalNewlines(t), "\n") {
			if s := strings.TrimSpace(line); s != "" {
				d.Installer = s
				break
			}
		}
	}
	if t, err := c.readText(path.Join(cd.dir, "WHEEL"), maxSmall); err == nil && t != "" {
		d.Tags = parseMetadata(t).All("Tag")
	}
	c.readRecord(cd)
	if c.native != nil && len(d.Extensions) > 0 {
		c.native(d.Name, d.Version, d.Location, d.Extensions)
	}
}

// recordReaders are the RECORD readers' buffers, one per worker at a time:
// a buffer per distribution (4 KB at least, so that encoding/csv does not
// wrap it in another) allocated 20 MB in a 5,000-distribution environment.
var recordReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// readRecord counts RECORD's files and lists the native libraries in it.
func (c *collector) readRecord(cd *candidate) {
	p := path.Join(cd.dir, "RECORD")
	f, err := c.src.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	br := recordReaders.Get().(*bufio.Reader)
	br.Reset(io.LimitReader(f, maxRecord))
	defer func() {
		br.Reset(nil) // drop the file
		recordReaders.Put(br)
	}()
	r := csv.NewReader(br)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	d := &cd.dist
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			c.warn("%s: %v", p, err)
			break
		}
		if len(rec) == 0 || rec[0] == "" {
			continue
		}
		d.Files++
		if strings.Contains(rec[0], ".so") && soRe.MatchString(rec[0]) {
			d.Extensions = append(d.Extensions, rec[0])
		}
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
