package source

import (
	"io/fs"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Folder is one folder of a Source whose files are opened by name: the
// folder is resolved, and its handle taken, once for all of them, where
// Open resolves each file's whole path again and takes its folder's handle
// again. A distribution's metadata folder is the case it is made for: four
// or five files are read from each of hundreds or thousands of them
// (METADATA, INSTALLER, WHEEL, RECORD, direct_url.json), and per file the
// resolving cost more than the system calls.
//
// Opening through a Folder is Open's rules with fewer steps, never fewer
// checks: a file's type is known before it is opened (an lstat on the
// folder's handle), so a FIFO or device node is never opened (F5); it is
// opened on that handle with O_NOFOLLOW and checked again once open; and a
// name that is anything but a regular file (a link, a folder) takes Open
// itself, which follows links only inside the root (F7).
//
// A Folder does not list its folder: five lstats cost less than the two
// getdents and the parsing a listing takes (ext4 reads a folder's blocks
// on every getdents, while an lstat of a cached name never reaches the
// filesystem). BenchmarkDoctorSeed's CPU time was 3.6% lower without the
// listing, with 130 fewer allocations a run. Through a View the cache serves and keeps what is
// read, as for Open (a file read through a Folder is not read again by a
// later Open of the same path).
type Folder struct {
	src Source
	dir string
	f   folder // nil: each file is src.Open(dir/name)
}

// folderOpener is implemented by the Sources that can open a folder's
// files on one handle (a directory source and its cache's views).
type folderOpener interface {
	openFolder(dir string) (folder, error)
}

type folder interface {
	// open opens name, whose path as the folder was asked for is full
	// (joined once, by Folder.Open: it is also the cache's key).
	open(name, full string) (File, error)
	close()
}

// OpenFolder returns the folder dir of src. Where src cannot (an image,
// RootPlain) or the folder cannot be opened, the Folder opens each file by
// its path, with Open's answers.
func OpenFolder(src Source, dir string) *Folder {
	d := &Folder{src: src, dir: dir}
	if fo, ok := src.(folderOpener); ok {
		if f, err := fo.openFolder(dir); err == nil {
			d.f = f
		}
	}
	return d
}

// Open opens the file name (one path component) of the folder, as
// src.Open(dir/name) would.
func (d *Folder) Open(name string) (File, error) {
	if d.f == nil || !oneComponent(name) {
		return d.src.Open(joinName(d.dir, name))
	}
	return d.f.open(name, joinName(d.dir, name))
}

// Path is the path of the folder's file name, as src.Open would be given
// it (for messages).
func (d *Folder) Path(name string) string { return joinName(d.dir, name) }

// Close gives the folder's handle back.
func (d *Folder) Close() {
	if d.f != nil {
		d.f.close()
		d.f = nil
	}
}

func oneComponent(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/')
}

// openFolder opens dir's files on one descriptor of the Folder's own:
// under a root opened on the parent's kept handle (so it stays inside the
// root), on the host by its resolved path.
func (s *dirSource) openFolder(dir string) (folder, error) {
	if s.plain {
		return nil, errNoFolder
	}
	p, typ, err := s.resolveType(dir)
	if err != nil {
		return nil, pathErr("open", dir, err)
	}
	if !typ.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: syscall.ENOTDIR}
	}
	f := &dirFolder{s: s, dir: dir, p: p}
	if s.root == "/" {
		fd, err := retryEINTR(func() (int, error) {
			return unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		})
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		f.fd = fd
	} else {
		// Not one kept by dirHandles: each metadata folder is used once,
		// and a thousand of them passing through the kept handles pushed
		// out the ones used again and again (site-packages, the PATH
		// folders). Folder opens in a seed-tree run fell from 157 to 101.
		fd, err := inDir(s.dirs, p, openDirAt)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: dir, Err: unwrapPathErr(err)}
		}
		f.fd, f.underRoot = fd, true
	}
	return f, nil
}

// testHookFolderOpen, set by tests, runs between a file's lstat and its
// open: where a swap would have to land to get past the lstat.
var testHookFolderOpen func(name string)

var errNoFolder = &fs.PathError{Op: "open", Err: syscall.ENOTSUP}

type dirFolder struct {
	s   *dirSource
	dir string // as asked, for errors and the general path
	p   string // resolved
	fd  int
	// underRoot: the folder is a root's (its files are rawFiles),
	// else the host's (hostFiles, which the kernel is advised about).
	underRoot bool
}

func (f *dirFolder) open(name, full string) (File, error) {
	var st unix.Stat_t
	if _, err := retryEINTR(func() (int, error) { return 0, lstatat(f.fd, name, &st) }); err != nil {
		return nil, &fs.PathError{Op: "open", Path: full, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		// A link (followed inside the root only), a folder, or one Open
		// refuses (a FIFO, a device): Open's own answer.
		return f.s.Open(full)
	}
	if testHookFolderOpen != nil {
		testHookFolderOpen(name)
	}
	fd, err := openFileAt(f.fd, name, openFlags)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: full, Err: unwrapPathErr(err)}
	}
	p := full // the file's resolved path, for its read errors
	if f.p != f.dir {
		p = joinName(f.p, name)
	}
	var file File
	if !f.underRoot {
		hf := new(hostFile)
		err, file = hf.init(fd, "", p), hf
	} else {
		rf := new(rawFile)
		err, file = rf.init(fd, f.s.root, p), rf
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: full, Err: ErrNotRegular}
	}
	// Swapped for something else between the lstat and the open.
	if fi, _ := file.Stat(); !fi.Mode().IsRegular() {
		file.Close()
		return nil, &fs.PathError{Op: "open", Path: full, Err: ErrNotRegular}
	}
	return file, nil
}

func (f *dirFolder) close() {
	if f.fd >= 0 {
		unix.Close(f.fd)
	}
	f.fd = -1
}
