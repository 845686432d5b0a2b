package source

import (
	"container/list"
	"errors"
	"io/fs"
	"path"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// dirHandles keeps open handles (descriptors) on the directories of a --root
// that were used last, so that a file costs one openat (or fstatat) on its
// folder's handle instead of one openat per path component: os.Root walks
// a path from the top, one component at a time, so reading
// /root/venv/lib/python3.12/site-packages/x.dist-info/METADATA cost six
// openat calls and six closes, and a 5,000-distribution environment spent
// most of doctor's time in them.
//
// Why a cached handle cannot leave the root (F7):
//   - A handle is opened from its parent's handle with openat of one name
//     (never "..", never a path with a slash) and O_NOFOLLOW|O_DIRECTORY
//     (rawfd.go): a FIFO or device swapped in fails at once with ENOTDIR
//     instead of blocking (F5), and a name that was swapped for a symbolic
//     link after the Resolver saw a folder there fails with ELOOP; it is
//     never followed. (The Resolver resolves links itself, so the folders
//     it hands out have no link in them.)
//   - Every operation on a handle names one component with O_NOFOLLOW
//     (openat, fstatat, readlinkat), so nothing is resolved by the kernel
//     beyond that one name.
//   - A handle refers to the directory it opened, not to its path. A folder
//     swapped for a link to the host after its handle was opened is not
//     seen at all: reads keep going to the folder that was there (now
//     renamed, still the root's content). Once the handle is dropped, the
//     next open of that path meets the link and is refused as above.
//   - A folder moved out of the root entirely still holds only what it
//     held in the root; ".." is never opened from a handle (the Resolver
//     resolves it lexically), so no handle climbs out of its folder.
//
// Handles in use are counted; at most maxDirHandles are kept, least recently
// used dropped first, and a dropped handle is closed once its last user is
// done with it.
type dirHandles struct {
	top  int        // the root itself, closed only when the source is garbage
	topH *dirHandle // its handle: never kept in m, never closed by release

	mu  sync.Mutex
	m   map[string]*dirHandle // clean in-source path -> handle
	lru list.List             // of *dirHandle, most recently used at the front
	// absent are the folders found absent (ENOENT), with the error each
	// gave: a run asks for the same absent folders again and again (/opt
	// for venvs, /usr/local/sbin on PATH for each tool), and each asking
	// cost a failing openat (68 in a seed-tree run). A run takes its
	// source as unchanging (Cache says why); at most maxAbsentFolders
	// are kept, so a hostile root cannot grow it without bound.
	absent map[string]error
}

const maxAbsentFolders = 4096

// maxDirHandles bounds the open directory handles of one source. A
// distribution's files are read one after another, so the folders in use
// (one per reader, MaxReaders) and the site-packages folder above them are
// enough; the rest cost one openat each. Keep it small: with the readers'
// files it must stay under the 64-descriptor table a process starts with
// (readers.go).
const maxDirHandles = 20

type dirHandle struct {
	fd   int
	p    string
	refs int
	kept bool // in dirHandles.m
	elem *list.Element

	// listMu serialises listings of the folder through fd (getdents
	// moves the descriptor's offset; openat and fstatat do not use it).
	listMu sync.Mutex
	listed bool // fd's offset has moved: seek to 0 before listing again
}

// newDirHandles opens the root folder dir and keeps its handle.
func newDirHandles(dir string) (*dirHandles, error) {
	top, err := retryEINTR(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &dirHandles{top: top, topH: &dirHandle{fd: top, p: "/"}, m: map[string]*dirHandle{}}, nil
}

var errBadComponent = errors.New("not a single path component")

// acquire returns a handle on the clean in-source directory p, opening it
// (and its ancestors) from the nearest handle already open. The caller
// must release it.
func (d *dirHandles) acquire(p string) (*dirHandle, error) {
	if p == "/" {
		return d.topH, nil // never closed: not kept, refs unused
	}
	d.mu.Lock()
	if h, ok := d.m[p]; ok {
		h.refs++
		d.lru.MoveToFront(h.elem)
		d.mu.Unlock()
		return h, nil
	}
	if err, ok := d.absent[p]; ok {
		d.mu.Unlock()
		return nil, err
	}
	d.mu.Unlock()
	parent, err := d.acquire(path.Dir(p))
	if err != nil {
		return nil, err
	}
	base := path.Base(p)
	r := -1
	if base == ".." || base == "." || base == "/" {
		err = errBadComponent // the Resolver never hands these out
	} else {
		// O_DIRECTORY fails at once on anything but a folder, where a
		// plain open of a FIFO swapped in for the folder would block (F5).
		r, err = openDirAt(parent.fd, base)
	}
	d.release(parent)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			d.noteAbsent(p, err)
		}
		return nil, err
	}
	h := &dirHandle{fd: r, p: p, refs: 1}
	d.mu.Lock()
	if old, ok := d.m[p]; ok { // another caller opened it meanwhile
		old.refs++
		d.lru.MoveToFront(old.elem)
		d.mu.Unlock()
		unix.Close(r)
		return old, nil
	}
	h.kept = true
	h.elem = d.lru.PushFront(h)
	d.m[p] = h
	var drop []int
	for len(d.m) > maxDirHandles {
		old := d.lru.Remove(d.lru.Back()).(*dirHandle)
		delete(d.m, old.p)
		old.kept = false
		if old.refs == 0 {
			drop = append(drop, old.fd)
		}
	}
	d.mu.Unlock()
	for _, fd := range drop {
		unix.Close(fd)
	}
	return h, nil
}

// noteAbsent remembers that the folder p does not exist: acquiring it
// then fails with err, as opening it did.
func (d *dirHandles) noteAbsent(p string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.absent == nil {
		d.absent = map[string]error{}
	}
	if len(d.absent) < maxAbsentFolders {
		d.absent[p] = err
	}
}

func (d *dirHandles) release(h *dirHandle) {
	if h.p == "/" {
		return
	}
	d.mu.Lock()
	h.refs--
	closeIt := h.refs == 0 && !h.kept
	d.mu.Unlock()
	if closeIt {
		unix.Close(h.fd)
	}
}

// list lists the folder p (clean, resolved) through its handle, opening
// and keeping it as acquire does: listing a folder and then reading its
// files costs one open of it, not two. max is as listFD's.
func (d *dirHandles) list(p string, getdents func(int, []byte) (int, error), max int) ([]dirent, error) {
	h, err := d.acquire(p)
	if err != nil {
		return nil, err
	}
	defer d.release(h)
	h.listMu.Lock()
	defer h.listMu.Unlock()
	if h.listed {
		if _, err := unix.Seek(h.fd, 0, 0); err != nil {
			return nil, &fs.PathError{Op: "seek", Path: p, Err: err}
		}
	}
	h.listed = true
	return listFD(h.fd, getdents, max)
}

// closeAll closes the kept handles; handles still in use close on release.
func (d *dirHandles) closeAll() {
	d.mu.Lock()
	var drop []int
	for p, h := range d.m {
		delete(d.m, p)
		h.kept = false
		if h.refs == 0 {
			drop = append(drop, h.fd)
		}
	}
	d.lru.Init()
	d.mu.Unlock()
	for _, fd := range drop {
		unix.Close(fd)
	}
}

// inDir runs fn with a handle on p's folder and p's last component.
func inDir[T any](d *dirHandles, p string, fn func(dirfd int, name string) (T, error)) (T, error) {
	if p == "/" {
		return fn(d.top, ".")
	}
	h, err := d.acquire(path.Dir(p))
	if err != nil {
		var zero T
		return zero, err
	}
	defer d.release(h)
	name := path.Base(p)
	if name == ".." || name == "." {
		var zero T
		return zero, &fs.PathError{Op: "open", Path: p, Err: errBadComponent}
	}
	return fn(h.fd, name)
}

// closeWhenUnreachable closes a source's directory handles, the root's
// included, when the source itself is garbage (tests open many roots in
// one process).
func closeWhenUnreachable[T any](owner *T, d *dirHandles) {
	runtime.AddCleanup(owner, func(d *dirHandles) {
		d.closeAll()
		unix.Close(d.top)
	}, d)
}
