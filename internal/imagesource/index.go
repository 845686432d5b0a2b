package imagesource

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// entry is one path of the merged view: its header, and where its body is.
type entry struct {
	path  string
	mode  fs.FileMode
	size  int64
	link  string // symlink target
	mtime time.Time
	layer *layerBlob // the layer the entry comes from
	body  *body      // regular files: shared by every hard link to it
}

// body is one file body in one layer, and what the one pass kept of it.
type body struct {
	id      int        // page cache key
	layer   *layerBlob // holding the body
	ordinal int        // the body's tar entry number in layer
	dataOff int64      // the body's offset in a raw layer; -1 otherwise
	size    int64
	kept    spans // ranges kept while the layer streamed by (see captureBody)
	// unreadable says why the body cannot be served (a GNU sparse file).
	unreadable string
}

func (e *entry) info() fs.FileInfo { return fileInfo{e} }

type fileInfo struct{ e *entry }

func (fi fileInfo) Name() string {
	if fi.e.path == "/" {
		return "/"
	}
	return path.Base(fi.e.path)
}
func (fi fileInfo) Size() int64        { return fi.e.size }
func (fi fileInfo) Mode() fs.FileMode  { return fi.e.mode }
func (fi fileInfo) ModTime() time.Time { return fi.e.mtime }
func (fi fileInfo) IsDir() bool        { return fi.e.mode.IsDir() }
func (fi fileInfo) Sys() any           { return nil }

// index is the merged view of the layers: header facts only, no bodies.
type index struct {
	entries  map[string]*entry
	children map[string][]string // directory -> sorted child names
}

func (x *index) lookup(p string) *entry { return x.entries[p] }

// Limits on what an archive may make fastpath hold: paths longer than
// PATH_MAX and link targets longer than it are refused, and the index stops
// growing at maxEntries paths (folders implied by deeper entries count) or
// maxNameBytes bytes of path names, whichever comes first (real images hold
// a few hundred thousand files and tens of MB of names).
const (
	maxPathLen   = 4096
	maxEntries   = 1 << 20
	maxNameBytes = 64 << 20
)

// builder walks the layers from the top down. A path is taken from the
// highest layer that has it; whiteouts (.wh.NAME) and opaque markers
// (.wh..wh..opq) hide what lower layers hold, and take effect once the
// layer that carries them has been read (they never hide their own layer).
type builder struct {
	x         *index
	needs     *source.NeedMatcher
	keep      *budget
	warn      func(string)
	deleted   map[string]bool // whited out by a layer above
	opaque    map[string]bool // opaque in a layer above: lower children hidden
	implied   map[string]bool // directories implied by entries already taken
	nextID    int
	full      bool
	nameBytes int64
}

func buildIndex(layers []*layerBlob, needs *source.NeedMatcher, keep *budget, warn func(string)) *index {
	b := &builder{
		x:       &index{entries: map[string]*entry{}, children: map[string][]string{}},
		needs:   needs,
		keep:    keep,
		warn:    warn,
		deleted: map[string]bool{},
		opaque:  map[string]bool{},
		implied: map[string]bool{},
	}
	for i := len(layers) - 1; i >= 0 && !b.full; i-- {
		b.layer(layers[i])
	}
	b.finish()
	return b.x
}

// layer indexes one layer. A broken layer (not a tar, truncated, a header
// the reader refuses) keeps the entries read before the break, with a
// warning: the rest of it cannot be located.
func (b *builder) layer(l *layerBlob) {
	rc, err := l.stream()
	if err != nil {
		b.warn(fmt.Sprintf("%s: cannot be read: %v", l, err))
		return
	}
	defer rc.Close()
	seeker, _ := rc.(io.Seeker)
	tr := tar.NewReader(rc)
	var whiteouts, opaques []string
	// This layer's regular files, hidden or not: a hard link may outlive
	// its target (uv links installed files to its cache, and a later layer
	// deletes the cache), and overlay keeps the link's content.
	bodies := map[string]*body{}
	var hiddenBodies []*body // kept only while a link might need them
	linked := map[*body]bool{}
	defer func() {
		for _, bd := range hiddenBodies {
			if !linked[bd] {
				b.keep.give(bd.kept.bytes())
				bd.kept = nil
			}
		}
	}()
	for ordinal := 0; ; ordinal++ {
		h, err := tr.Next()
		if err == io.EOF {
			if ordinal == 0 {
				b.warn(fmt.Sprintf("%s: empty, not a tar archive", l))
			}
			break
		}
		if err != nil {
			if ordinal == 0 {
				b.warn(fmt.Sprintf("%s: not a tar archive (%v); layer ignored", l, err))
			} else {
				b.warn(fmt.Sprintf("%s: unreadable after entry %d (%v); the rest of the layer is ignored", l, ordinal, err))
			}
			break
		}
		dataOff := int64(-1)
		if seeker != nil {
			if off, err := seeker.Seek(0, io.SeekCurrent); err == nil {
				dataOff = off
			}
		}
		p, why := cleanEntryName(h.Name)
		if why != "" {
			b.warn(fmt.Sprintf("%s: entry %q refused: %s", l, trunc(h.Name), why))
			continue
		}
		if p == "/" || h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		dir, base := path.Split(p)
		dir = path.Clean(dir)
		if base == ".wh..wh..opq" {
			opaques = append(opaques, dir)
			continue
		}
		if strings.HasPrefix(base, ".wh.") {
			// ".wh.." would hide the folder holding it (path.Join cleans
			// "/usr/lib/.." to "/usr"), ".wh..." its parent: a whiteout
			// names one entry of its own folder or nothing.
			if name := strings.TrimPrefix(base, ".wh."); name == "" || name == "." || name == ".." {
				b.warn(fmt.Sprintf("%s: whiteout %s refused: it names no entry of its folder", l, trunc(p)))
			} else {
				whiteouts = append(whiteouts, path.Join(dir, name))
			}
			continue
		}
		hidden := b.hidden(p, l, h.Typeflag == tar.TypeDir)
		var bd *body
		if h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeGNUSparse {
			if len(bodies) >= maxEntries {
				continue
			}
			bd = &body{id: b.nextID, layer: l, ordinal: ordinal, dataOff: dataOff, size: h.Size}
			b.nextID++
			if h.Typeflag == tar.TypeGNUSparse {
				bd.unreadable = "a sparse file in the archive"
			}
			bodies[p] = bd
			if needed, elf := b.needs.Match(p); needed && bd.unreadable == "" && h.Size > 0 {
				// Raw layers are read in place later; only small files are
				// worth keeping there, and ELF ranges never are.
				if !l.raw || (!elf && h.Size <= wholeMax) {
					bd.kept = captureBody(tr, h.Size, elf && !l.raw, b.keep)
				}
			}
		}
		if hidden {
			if bd != nil && bd.kept != nil {
				hiddenBodies = append(hiddenBodies, bd)
			}
			continue
		}
		e := &entry{path: p, mode: h.FileInfo().Mode(), size: h.Size, mtime: h.ModTime, layer: l, body: bd}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeGNUSparse:
			if bd == nil {
				continue
			}
		case tar.TypeDir:
			e.size = 0
		case tar.TypeSymlink:
			if len(h.Linkname) > maxPathLen || h.Linkname == "" || strings.ContainsRune(h.Linkname, 0) {
				b.warn(fmt.Sprintf("%s: symlink %s refused: bad target", l, trunc(p)))
				continue
			}
			if climbsOut(dir, h.Linkname) {
				b.warn(fmt.Sprintf("%s: symlink %s -> %s refused: the target climbs above the image root", l, trunc(p), trunc(h.Linkname)))
				continue
			}
			e.link, e.size = h.Linkname, int64(len(h.Linkname))
		case tar.TypeLink:
			t, why := cleanEntryName(h.Linkname)
			target := bodies[t]
			if why == "" && target == nil {
				why = "its target is not a regular file earlier in this layer"
			}
			if why != "" {
				b.warn(fmt.Sprintf("%s: hard link %s -> %s refused: %s", l, trunc(p), trunc(h.Linkname), why))
				continue
			}
			e.body, e.size = target, target.size
			linked[target] = true
			e.mode &^= fs.ModeType // a hard link is a regular file, whatever its own header's mode bits say
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			e.size = 0
		default:
			continue // tar bookkeeping (long names, PAX records) and types with no file
		}
		if prev := b.x.entries[p]; prev != nil && prev.layer == l && !prev.mode.IsDir() && e.mode.IsDir() {
			b.warn(fmt.Sprintf("%s: %s appears twice (a file, then a directory); the directory is kept", l, trunc(p)))
		}
		if b.x.entries[p] == nil {
			b.nameBytes += int64(len(p))
		}
		b.x.entries[p] = e // a later entry of the same layer replaces an earlier one, as extraction does
		for a := dir; a != "/"; a = path.Dir(a) {
			if b.implied[a] {
				break
			}
			b.implied[a] = true
			if b.x.entries[a] == nil {
				b.nameBytes += int64(len(a))
			}
		}
		if n := len(b.x.entries) + len(b.implied); n >= maxEntries || b.nameBytes >= maxNameBytes {
			b.warn(fmt.Sprintf("%s: more than %d paths or %d MB of path names (folders implied by entries included); the index stops here", l, maxEntries, maxNameBytes>>20))
			b.full = true
			break
		}
	}
	for _, w := range whiteouts {
		b.deleted[w] = true
	}
	for _, o := range opaques {
		b.opaque[o] = true
	}
}

// hidden reports whether the layer l's entry p is shadowed by a layer above:
// taken already, whited out, below an opaque folder or a whited-out one, or
// below something that is not a directory there. An entry below a
// non-directory of its own layer is a hostile archive's trick (a link "x"
// then "x/file", to write through the link) and is refused with a warning.
func (b *builder) hidden(p string, l *layerBlob, isDir bool) bool {
	if prev := b.x.entries[p]; prev != nil && prev.layer != l {
		return true
	}
	if b.deleted[p] {
		return true
	}
	if !isDir && b.implied[p] {
		if prev := b.x.entries[p]; prev == nil || prev.layer != l {
			return true // a layer above made p a directory
		}
	}
	for a := path.Dir(p); a != "/"; a = path.Dir(a) {
		if b.deleted[a] || b.opaque[a] {
			return true
		}
		if e := b.x.entries[a]; e != nil && !e.mode.IsDir() {
			if e.layer == l {
				b.warn(fmt.Sprintf("%s: entry %s refused: %s is not a directory in this layer", l, p, a))
			}
			return true
		}
	}
	return false
}

// finish adds the directories that entries imply but no layer lists, and
// each directory's sorted child names.
func (b *builder) finish() {
	x := b.x
	x.entries["/"] = &entry{path: "/", mode: fs.ModeDir | 0o755}
	for a := range b.implied {
		if e := x.entries[a]; e == nil {
			x.entries[a] = &entry{path: a, mode: fs.ModeDir | 0o755}
		}
	}
	for p := range x.entries {
		if p == "/" {
			continue
		}
		dir := path.Dir(p)
		x.children[dir] = append(x.children[dir], path.Base(p))
	}
	for _, names := range x.children {
		sort.Strings(names)
	}
}

// cleanEntryName turns an archive member name into a clean absolute path,
// or says why it is refused. Leading "/" and "./" are tolerated (some
// builders write them); ".." components never are: extracted naively, they
// write outside the root.
func cleanEntryName(name string) (string, string) {
	switch {
	case name == "":
		return "", "empty name"
	case len(name) > maxPathLen:
		return "", fmt.Sprintf("name longer than %d bytes", maxPathLen)
	case strings.ContainsRune(name, 0):
		return "", "NUL in name"
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", `the path climbs out of the image with ".."`
		}
	}
	return path.Clean("/" + name), ""
}

// climbsOut reports whether a link target, read from directory dir, names a
// place above the root ("../../../etc/shadow" from /usr/lib).
func climbsOut(dir, target string) bool {
	depth := 0
	if !strings.HasPrefix(target, "/") {
		depth = len(strings.FieldsFunc(dir, func(r rune) bool { return r == '/' }))
	}
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

func trunc(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
