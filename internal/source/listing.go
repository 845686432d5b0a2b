package source

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A folder listed once (ReadDir) answers what every later lookup of a name
// in it would otherwise ask the kernel: whether the name is there, and
// whether it is a folder, a regular file or a link. getdents gives each
// entry's type (d_type) with its name, so a collector that lists a
// dist-info folder and then reads its five files needs no lstat before
// each open, and none at all for a file that is absent (direct_url.json,
// mostly). The Resolver asks the same question of every path component.
//
// What the listing says is only used where it cannot weaken a check:
//   - a regular file or a folder is opened as before, with O_NOFOLLOW and
//     O_NONBLOCK, and the open file's own fstat decides (Open): a file
//     swapped for a link after the listing fails with ELOOP, one swapped
//     for a FIFO or device is refused by the fstat;
//   - a FIFO, socket or device is refused without being opened, as the
//     lstat would have it refused;
//   - a link is resolved as before (readlink, inside the root);
//   - an absent name is ENOENT, as a lookup of a run's consistent snapshot
//     (the Cache already keeps every answer for the run);
//   - an entry whose type the filesystem does not give (DT_UNKNOWN, some
//     filesystems) is lstat'ed while listing, through the listed folder's
//     own handle, as os.ReadDir does.
//
// Stat, Lstat and the Resolver's folder steps use the listing for type
// and absence only; a size or a time always comes from a stat.

// listing is one folder's entries, sorted by name, as ReadDir returns them.
type listing struct {
	s    *dirSource
	dir  string // the folder's clean, resolved in-source path
	ents []dirent
}

// dirent is one entry of a listing: the DirEntry ReadDir hands out.
type dirent struct {
	name string
	typ  fs.FileMode // type bits only
	l    *listing
}

func (e *dirent) Name() string      { return e.name }
func (e *dirent) IsDir() bool       { return e.typ.IsDir() }
func (e *dirent) Type() fs.FileMode { return e.typ }
func (e *dirent) String() string    { return fs.FormatDirEntry(e) }

// Info is an lstat of the entry, through the source (inside the root).
func (e *dirent) Info() (fs.FileInfo, error) { return e.l.s.lstat(joinName(e.l.dir, e.name)) }

// find returns the entry named name, or nil.
func (l *listing) find(name string) *dirent {
	i, ok := slices.BinarySearchFunc(l.ents, name, func(e dirent, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return nil
	}
	return &l.ents[i]
}

// listings are the folders a source has listed, by resolved path. They are
// bounded: past maxListedEntries entries in all, they are dropped and
// refilled (each entry costs its name and 32 bytes).
type listings struct {
	mu      sync.Mutex
	m       map[string]*listing
	entries int
}

// maxListedEntries bounds the entries kept: 5,000 distributions' dist-info
// folders and a site-packages of 10,000 entries are about 40,000.
const maxListedEntries = 1 << 18

func (ls *listings) put(l *listing) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[string]*listing{}
	}
	if old, ok := ls.m[l.dir]; ok {
		ls.entries -= len(old.ents)
	}
	if ls.entries+len(l.ents) > maxListedEntries {
		clear(ls.m)
		ls.entries = 0
	}
	ls.m[l.dir] = l
	ls.entries += len(l.ents)
}

// lookup says what the listing of p's folder says of p: listed is false
// when that folder was not listed (or p is "/"); otherwise e is p's entry,
// nil when p is absent.
func (ls *listings) lookup(p string) (e *dirent, listed bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 || i == len(p)-1 {
		return nil, false
	}
	dir := p[:i]
	if i == 0 {
		dir = "/"
	}
	ls.mu.Lock()
	l := ls.m[dir]
	ls.mu.Unlock()
	if l == nil {
		return nil, false
	}
	return l.find(p[i+1:]), true
}

// joinName is path.Join(dir, name) for a clean folder and one component.
func joinName(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// errListedAbsent is the error of an lstat of a name its folder's listing
// does not hold.
func errListedAbsent(p string) error {
	return &fs.PathError{Op: "statat", Path: p[strings.LastIndexByte(p, '/')+1:], Err: syscall.ENOENT}
}

// direntBufSize is getdents' buffer: a dist-info folder fits many times,
// a site-packages of 10,000 entries takes a few dozen calls.
const direntBufSize = 32 << 10

var direntBufs = sync.Pool{New: func() any { b := make([]byte, direntBufSize); return &b }}

// listFD reads the entries of the open folder fd (at offset 0) with
// getdents, skipping "." and "..", at most max+1 of them (the rest
// unread: one past max says there were more), in directory order. An
// entry of unknown type (DT_UNKNOWN) is lstat'ed on fd; one that vanished
// meanwhile is left out, as os.ReadDir does. Each getdents batch is parsed
// twice, to count and then to fill: its names share one string and the
// entries one slice, so a listing costs a few allocations, not one per name.
func listFD(fd int, getdents func(int, []byte) (int, error), max int) ([]dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var ents []dirent
	var endsBuf [64]int // where each name of a batch ends in its string
	for len(ents) <= max {
		n, err := retryEINTR(func() (int, error) { return getdents(fd, buf) })
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: ".", Err: err}
		}
		if n <= 0 {
			break
		}
		batch := buf[:min(n, len(buf))]
		count, size := 0, 0
		for b := batch; len(b) > 0; {
			name, _, rest, ok := parseDirent(b)
			if !ok {
				return nil, &fs.PathError{Op: "readdirent", Path: ".", Err: errors.New("malformed directory entry")}
			}
			b = rest
			if keepName(name) {
				count++
				size += len(name)
			}
		}
		ents = slices.Grow(ents, min(count, max+1-len(ents)))
		first, ends := len(ents), endsBuf[:0]
		var names strings.Builder
		names.Grow(size)
		for b := batch; len(b) > 0 && len(ents) <= max; {
			name, typ, rest, _ := parseDirent(b)
			b = rest
			if !keepName(name) {
				continue
			}
			if typ == typeUnknown {
				fi, err := lstatAt(fd, string(name))
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return nil, err
				}
				typ = fi.Mode().Type()
			}
			names.Write(name)
			ends = append(ends, names.Len())
			ents = append(ents, dirent{typ: typ})
		}
		all, start := names.String(), 0
		for k, end := range ends {
			ents[first+k].name = all[start:end]
			start = end
		}
	}
	return ents, nil
}

// keepName reports whether a listed name is an entry of the folder: not a
// deleted record (nil), ".", or "..".
func keepName(name []byte) bool {
	return name != nil && string(name) != "." && string(name) != ".."
}

// typeUnknown marks an entry whose type getdents did not give.
const typeUnknown = fs.ModeIrregular

// parseDirent takes the linux_dirent64 at the start of b: d_ino (8 bytes),
// d_off (8), d_reclen (2), d_type (1), then the name up to a NUL within
// d_reclen. name is nil for an entry with inode 0 (a deleted one, skipped).
// ok is false when the record does not fit in b.
func parseDirent(b []byte) (name []byte, typ fs.FileMode, rest []byte, ok bool) {
	const nameOff = 19
	if len(b) < nameOff {
		return nil, 0, nil, false
	}
	reclen := int(binary.NativeEndian.Uint16(b[16:18]))
	if reclen <= nameOff || reclen > len(b) {
		return nil, 0, nil, false
	}
	rec, rest := b[:reclen], b[reclen:]
	raw := rec[nameOff:]
	end := slices.Index(raw, 0)
	if end < 0 {
		end = len(raw)
	}
	if end == 0 {
		return nil, 0, nil, false
	}
	if binary.NativeEndian.Uint64(b[0:8]) == 0 {
		return nil, 0, rest, true
	}
	switch b[18] {
	case unix.DT_REG:
		typ = 0
	case unix.DT_DIR:
		typ = fs.ModeDir
	case unix.DT_LNK:
		typ = fs.ModeSymlink
	case unix.DT_FIFO:
		typ = fs.ModeNamedPipe
	case unix.DT_SOCK:
		typ = fs.ModeSocket
	case unix.DT_CHR:
		typ = fs.ModeDevice | fs.ModeCharDevice
	case unix.DT_BLK:
		typ = fs.ModeDevice
	default:
		typ = typeUnknown
	}
	return raw[:end], typ, rest, true
}
