package source

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Under --root, files and folders are opened as raw descriptors on a kept
// folder handle (dirhandles.go) rather than as *os.File or *os.Root. An
// os.File registers every descriptor with the runtime's poller (an
// epoll_ctl that fails for regular files: 24,000 of them for 5,000
// distributions and 4,096 libraries), carries a finalizer, and os.Root
// opens "name/." as two openat calls. The calls made here are the ones
// os.Root makes for a single name, with the same flags (O_NOFOLLOW and
// O_CLOEXEC always, O_DIRECTORY for folders) and the same errors, wrapped
// in the same *fs.PathError operations, except that a name swapped for a
// link after it was checked is refused (ELOOP) instead of being followed
// inside the root.

// openDirAt opens the folder name in the folder dirfd: one component,
// never followed if it is a link, and failing at once with ENOTDIR on
// anything but a folder (a FIFO swapped in cannot block: F5).
func openDirAt(dirfd int, name string) (int, error) {
	fd, err := retryEINTR(func() (int, error) {
		return openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	})
	if err != nil {
		return -1, &fs.PathError{Op: "openat", Path: name + "/.", Err: err}
	}
	return fd, nil
}

// openFileAt opens name in dirfd for reading, with O_NOFOLLOW, O_CLOEXEC
// and flag (O_NONBLOCK, so that a FIFO swapped in cannot block the open).
func openFileAt(dirfd int, name string, flag int) (int, error) {
	fd, err := retryEINTR(func() (int, error) {
		return openat(dirfd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	})
	if err != nil {
		return -1, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	return fd, nil
}

// lstatAt is fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW).
func lstatAt(dirfd int, name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	_, err := retryEINTR(func() (int, error) { return 0, lstatat(dirfd, name, &st) })
	if err != nil {
		return nil, &fs.PathError{Op: "statat", Path: name, Err: err}
	}
	fi := new(fileInfo)
	fi.fill(path.Base(name), &st)
	return fi, nil
}

// readlinkAt is readlinkat(dirfd, name), growing its buffer as os.Readlink does.
func readlinkAt(dirfd int, name string) (string, error) {
	for n := 128; ; n *= 2 {
		b := make([]byte, n)
		got, err := retryEINTR(func() (int, error) { return unix.Readlinkat(dirfd, name, b) })
		if err != nil {
			return "", &fs.PathError{Op: "readlinkat", Path: name, Err: err}
		}
		if got < n {
			return string(b[:got]), nil
		}
	}
}

// openat and lstatat are unix.Openat and unix.Fstatat(AT_SYMLINK_NOFOLLOW)
// with the name copied to the stack rather than to a new heap string: one
// allocation less per file, of 30,000 in a 5,000-distribution run. (A
// pointer converted to uintptr in a syscall's argument list keeps its
// object alive and in place until the call returns: unsafe.Pointer, rule
// 4.) A longer name takes x/sys's path; one holding a NUL is EINVAL there.
const stackNameLen = 256

func openat(dirfd int, name string, flags int) (int, error) {
	if len(name) >= stackNameLen || strings.IndexByte(name, 0) >= 0 {
		return unix.Openat(dirfd, name, flags, 0)
	}
	var buf [stackNameLen]byte
	copy(buf[:], name)
	fd, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(flags), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func lstatat(dirfd int, name string, st *unix.Stat_t) error {
	if len(name) >= stackNameLen || strings.IndexByte(name, 0) >= 0 {
		return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW)
	}
	var buf [stackNameLen]byte
	copy(buf[:], name)
	_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(st)), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func retryEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// fileInfo is an fs.FileInfo made from a stat, as os makes it, keeping only
// what FileInfo tells (a stat is 144 bytes, and a run makes 60,000 of them).
// Sys is nil: no reader of a Source uses it.
type fileInfo struct {
	name  string
	size  int64
	mtime int64 // Unix nanoseconds
	mode  fs.FileMode
}

// fill sets fi from a stat of the file name.
func (fi *fileInfo) fill(name string, st *unix.Stat_t) {
	*fi = fileInfo{name: name, size: st.Size, mtime: st.Mtim.Nano(), mode: fs.FileMode(st.Mode & 0o777)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		fi.mode |= fs.ModeDevice
	case unix.S_IFCHR:
		fi.mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		fi.mode |= fs.ModeDir
	case unix.S_IFIFO:
		fi.mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		fi.mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		fi.mode |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		fi.mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		fi.mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		fi.mode |= fs.ModeSticky
	}
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(0, fi.mtime) }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return nil }

// rawFile is an open file of a root: a descriptor, read with read(2) and
// pread(2). It is used by one reader at a time, as the collectors do; Close
// is idempotent, so a second Close cannot close a descriptor the number
// was reused for.
type rawFile struct {
	fd atomic.Int64
	// root+p is the file's host path, for errors: joined only when one
	// is made (a join per file opened cost an allocation for nothing).
	root, p string
	fi      fileInfo // from the fstat made on opening (one allocation with the file)
	// pos is where Read is (the descriptor's offset); eof is set when a
	// Read of a regular file came back short exactly at the size fstat
	// gave, which is where it ends: the next Read says io.EOF without
	// asking the kernel again. Anything else is read on until read(2)
	// returns 0: a file that shrank (short before its old size), one that
	// grew (past it), and /proc and /sys files, which say 0 or 4096
	// whatever they hold and may come back short before their end (a
	// root can be a live container's, /proc mounted).
	pos int64
	eof bool
}

// endsAt reports whether a read of a regular file that came back short,
// at end, stopped exactly at the size its fstat gave.
func (f *rawFile) endsAt(end int64) bool {
	return f.fi.mode.IsRegular() && f.fi.size > 0 && end == f.fi.size
}

// newRawFile fstats fd, the file p of the root folder root, and returns
// it as a File.
func newRawFile(fd int, root, p string) (*rawFile, error) {
	f := new(rawFile)
	if err := f.init(fd, root, p); err != nil {
		return nil, err
	}
	return f, nil
}

// init fstats fd and makes f its File; on failure fd is closed.
func (f *rawFile) init(fd int, root, p string) error {
	var st unix.Stat_t
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Fstat(fd, &st) }); err != nil {
		unix.Close(fd)
		return err
	}
	f.root, f.p = root, p
	f.fi.fill(path.Base(p), &st)
	f.fd.Store(int64(fd))
	return nil
}

// hostFile is a raw file of the live host. It has Fd, as the *os.File it
// replaced had, so that binaries read on the host are still advised to
// the kernel as read at random (advise_linux.go). A root's files have no
// Fd and are not advised, as they were not before this type existed.
type hostFile struct{ rawFile }

func (f *hostFile) Fd() uintptr { return uintptr(f.fd.Load()) }

func (f *rawFile) Stat() (fs.FileInfo, error) { return &f.fi, nil }

func (f *rawFile) name() string { return f.root + f.p }

func (f *rawFile) Read(p []byte) (int, error) {
	fd := int(f.fd.Load())
	if fd < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name(), Err: fs.ErrClosed}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if f.eof {
		return 0, io.EOF
	}
	n, err := retryEINTR(func() (int, error) { return unix.Read(fd, p) })
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.name(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	f.pos += int64(n)
	if n < len(p) && f.endsAt(f.pos) {
		f.eof = true
	}
	return n, nil
}

// ReadAt fills p from off, as io.ReaderAt asks: short only at the end.
func (f *rawFile) ReadAt(p []byte, off int64) (int, error) {
	fd := int(f.fd.Load())
	if fd < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name(), Err: fs.ErrClosed}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name(), Err: errors.New("negative offset")}
	}
	total := 0
	for len(p) > 0 {
		n, err := retryEINTR(func() (int, error) { return unix.Pread(fd, p, off) })
		if err != nil {
			return total, &fs.PathError{Op: "read", Path: f.name(), Err: err}
		}
		if n == 0 {
			return total, io.EOF
		}
		total += n
		p = p[n:]
		off += int64(n)
		if len(p) > 0 && f.endsAt(off) {
			return total, io.EOF // short at the end fstat gave: no read of 0 bytes to learn it
		}
	}
	return total, nil
}

func (f *rawFile) Close() error {
	fd := int(f.fd.Swap(-1))
	if fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name(), Err: fs.ErrClosed}
	}
	if err := unix.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: f.name(), Err: err}
	}
	return nil
}
