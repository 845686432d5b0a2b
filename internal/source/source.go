// Package source is where fastpath looks: the live host, or a directory that
// stands for "/" (a container's rootfs, a copy of one, a test fixture).
//
// Every collector reads through a Source, so every collector works on every
// kind of source. Paths given to a Source are absolute paths as the inspected
// system sees them ("/usr/local/cuda/bin/nvcc"); symbolic links are resolved
// inside the source: an absolute target is re-rooted and ".." never climbs
// above "/". Only the live host can run programs (Exec).
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"golang.org/x/sys/unix"
)

// Kind names what a Source stands for. It is declared in facts (a facts
// file records it, and facts imports nothing of ours).
type Kind = facts.SourceKind

const (
	KindHost Kind = "host" // the machine fastpath runs on
	KindRoot Kind = "root" // a directory standing for "/" (--root)
	// KindImage is a container image read layer by layer (--image), never
	// unpacked: see internal/imagesource.
	KindImage Kind = "image"
)

// Info describes a Source for reports and facts. It is declared in facts,
// which records it in every facts file.
type Info = facts.SourceInfo

// File is an open file of a Source. Parsers take the io.ReaderAt and read
// only the parts they need.
type File interface {
	io.Reader
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

// Source is one place to look. Implementations must be safe for concurrent use.
type Source interface {
	Info() Info
	// Env is the environment to assume (the process's on the host; the
	// --env values and a container's defaults under a root).
	Env() Env
	// Resolve returns name with every symbolic link resolved inside the source.
	Resolve(name string) (string, error)
	Open(name string) (File, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadLink(name string) (string, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	// Exec runs a program on the live host and returns its standard output.
	// Sources that are not live return ErrNotLive.
	Exec(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ErrNotLive is returned by Exec on sources where nothing may be run.
var ErrNotLive = errors.New("source: programs are only run on the live host")

// ErrTooLarge is returned by ReadFile for files above the caller's cap.
var ErrTooLarge = errors.New("file larger than the reading cap")

// maxLinkHops bounds symlink chains, as the kernel's ELOOP does (40).
const maxLinkHops = 40

// Caps on the paths a Resolver accepts (SECURITY.md, docs/security.md). Paths
// come from untrusted places (an image's PATH, a .pth line, a link target), and
// resolving costs one lookup per component, so both are bounded before any
// work is done: a longer path fails with ENAMETOOLONG.
const (
	// MaxPathLen is the longest path resolved, in bytes: Linux's PATH_MAX.
	MaxPathLen = 4096
	// MaxPathComponents is the most components a path may have. Real
	// paths have a few dozen; 256 keeps the worst resolve to 256 lookups
	// (plus 40 links of at most MaxPathLen each).
	MaxPathComponents = 256
	// maxCacheEntries bounds the resolved-prefix cache; when full it is
	// dropped and refilled, so memory stays below about
	// maxCacheEntries*maxCachedPrefixLen*2 bytes (32 MiB) whatever is read.
	maxCacheEntries = 16384
	// maxCachedPrefixLen: longer prefixes are resolved but not cached.
	maxCachedPrefixLen = 1024
	// MaxPathListEntries bounds the entries LookPath tries in a PATH-style
	// list (an image's PATH is untrusted; real ones have under 30).
	MaxPathListEntries = 256
	// MaxDirEntries is the most entries ReadDir returns for a directory of
	// a root; past it ReadDir returns the first MaxDirEntries (sorted) and
	// an error wrapping ErrTooLarge. Real site-packages hold a few thousand.
	MaxDirEntries = 100000
)

// dirSource serves both the host (root "/") and --root directories: the same
// resolution code runs for both, so tests on fixture trees exercise exactly
// what runs on real machines.
type dirSource struct {
	root string // host directory standing for "/"
	env  Env
	live bool

	links *Resolver
	osr   *os.Root
	dirs  *dirHandles // under a root: open folder handles (dirhandles.go)
	// plain turns the fast paths off (RootPlain): every call walks its
	// path from the top of the root, as before they existed.
	plain bool

	// listed are the folders ReadDir listed, whose entries answer type
	// and absence questions without a syscall (listing.go).
	listed listings
	// getdents reads a folder's entries (unix.Getdents; tests replace it
	// to give entries of unknown type, as some filesystems do).
	getdents func(fd int, buf []byte) (int, error)
}

// Host returns the live machine as a Source. env is the environment to assume
// (usually os.Environ() with --env overrides applied).
func Host(env Env) (Source, error) {
	return newDir("/", env, true)
}

// Root returns a Source for a directory standing for "/". Nothing is ever run
// under a root. env is the environment to assume there; where it has no PATH
// or HOME, those of a stock container are used (Docker's default PATH, /root).
func Root(dir string, env Env) (Source, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("--root %s: not a directory", dir)
	}
	e := env.Clone()
	if _, ok := e["PATH"]; !ok {
		e["PATH"] = DefaultContainerPATH
	}
	if _, ok := e["HOME"]; !ok {
		e["HOME"] = "/root"
	}
	return newDir(abs, e, false)
}

// RootPlain is Root without the fast paths: no kept folder handles, no
// answers from the Resolver's cached folders, the final component lstat'ed
// by the Resolver and again by the caller. It reads exactly what Root does
// and is the oracle the fast paths are tested against (and a way to time
// them).
func RootPlain(dir string, env Env) (Source, error) {
	src, err := Root(dir, env)
	if err != nil {
		return nil, err
	}
	s := src.(*dirSource)
	s.plain, s.links.plain = true, true
	return s, nil
}

// DefaultContainerPATH is the PATH Docker gives a container whose image sets none.
const DefaultContainerPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

func newDir(root string, env Env, live bool) (*dirSource, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = Env{}
	}
	s := &dirSource{root: root, env: env, live: live, osr: r, getdents: unix.Getdents}
	if root != "/" {
		if s.dirs, err = newDirHandles(root); err != nil {
			r.Close()
			return nil, err
		}
		closeWhenUnreachable(s, s.dirs)
	}
	s.links = NewResolver(s.typeOf, s.readlink)
	return s, nil
}

// typeOf is the type of the clean in-source path p, not following a final
// link: from its folder's listing where that was listed, else an lstat.
func (s *dirSource) typeOf(p string) (fs.FileMode, error) {
	if !s.plain {
		if e, listed := s.listed.lookup(p); listed {
			if e == nil {
				return 0, errListedAbsent(p)
			}
			if e.typ != typeUnknown {
				return e.typ, nil
			}
		}
	}
	fi, err := s.lstat(p)
	if err != nil {
		return 0, err
	}
	return fi.Mode(), nil
}

// The four primitives every dirSource operation goes through. Under a root
// they go through os.Root handles (openat with O_NOFOLLOW per component;
// a link that leaves the root is an error), so a folder swapped for a link
// to the host between resolving and reading can never reach a host path
// (F7). The handle is the one of the path's folder, kept open by
// dirHandles, so a file costs one call on it rather than one openat per
// component (dirhandles.go says why that stays inside the root). On the
// host there is nothing to leave and the plain calls are used.

func (s *dirSource) lstat(p string) (fs.FileInfo, error) {
	if s.root == "/" {
		return os.Lstat(p)
	}
	if s.plain {
		return s.osr.Lstat(rel(p))
	}
	fi, err := inDir(s.dirs, p, lstatAt)
	if errors.Is(err, syscall.ENOENT) && p != "/" {
		// What opening p as a folder would have said: a path under an
		// absent name is then answered without a call.
		s.dirs.noteAbsent(p, &fs.PathError{Op: "openat", Path: path.Base(p) + "/.", Err: syscall.ENOENT})
	}
	return fi, err
}

func (s *dirSource) readlink(p string) (string, error) {
	if s.root == "/" {
		return os.Readlink(p)
	}
	if s.plain {
		return s.osr.Readlink(rel(p))
	}
	return inDir(s.dirs, p, readlinkAt)
}

// openNoBlock opens p for reading with O_NONBLOCK, so that a FIFO that
// slipped past the type check (swapped in after it) cannot block the open,
// and fstats it, so that Open can check its type again (a failed fstat is
// errFstat). The file is a raw descriptor (rawfd.go says why): under a
// root opened on its folder's kept handle, on the host by its path (an
// *os.File cost an epoll_ctl per file there too: 480 in a doctor run on a
// host with 99 distributions). RootPlain opens through os.Root.
func (s *dirSource) openNoBlock(p string) (File, error) {
	if !s.plain {
		if s.root == "/" {
			fd, err := openFileAt(unix.AT_FDCWD, p, openFlags)
			if err != nil {
				return nil, err
			}
			f := new(hostFile)
			if err := f.init(fd, "", p); err != nil {
				return nil, errFstat{err}
			}
			return f, nil
		}
		fd, err := s.openRaw(p)
		if err != nil {
			return nil, err
		}
		f, err := newRawFile(fd, s.root, p)
		if err != nil {
			return nil, errFstat{err}
		}
		return f, nil
	}
	f, err := s.openOS(p)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errFstat{err}
	}
	return &statFile{File: f, fi: fi}, nil
}

const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// openOS opens p of a RootPlain source through os.Root, as an *os.File.
func (s *dirSource) openOS(p string) (*os.File, error) {
	return s.osr.OpenFile(rel(p), openFlags, 0)
}

// openRaw opens p on its folder's kept handle.
func (s *dirSource) openRaw(p string) (int, error) {
	return inDir(s.dirs, p, func(dirfd int, name string) (int, error) {
		return openFileAt(dirfd, name, openFlags)
	})
}

// errFstat marks a failed fstat of a file just opened.
type errFstat struct{ err error }

func (e errFstat) Error() string { return e.err.Error() }
func (e errFstat) Unwrap() error { return e.err }

func (s *dirSource) Info() Info {
	if s.live {
		return Info{Kind: KindHost, Live: true}
	}
	return Info{Kind: KindRoot, Root: s.root}
}

func (s *dirSource) Env() Env { return s.env }

// rel maps a clean in-source absolute path to a path relative to the root,
// for os.Root.
func rel(p string) string {
	if p == "/" {
		return "."
	}
	return p[1:]
}

func components(name string) []string {
	var out []string
	for _, c := range strings.Split(name, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// Resolve resolves every symbolic link in name inside the source.
func (s *dirSource) Resolve(name string) (string, error) {
	return s.resolve(name, true)
}

func (s *dirSource) resolve(name string, followLast bool) (string, error) {
	return s.links.Resolve(name, followLast)
}

// Resolver resolves paths inside a tree that stands for "/", one component
// at a time, given only how to lstat and read a link at an in-source path:
// every Source (a directory, an image's layer index) shares these rules, so
// "/usr/local/cuda" means the same thing wherever it is read. An absolute
// link target is re-rooted, ".." never climbs above "/", and chains are cut
// after 40 hops (ELOOP). Safe for concurrent use.
type Resolver struct {
	lstat    func(p string) (fs.FileMode, error)
	readLink func(p string) (string, error)

	mu    sync.Mutex
	cache map[string]string // resolved directory prefixes: in-source path -> resolved in-source path
	plain bool              // no answers from cachedParent (RootPlain)
}

// NewResolver returns a Resolver over a tree. lstat returns the type bits of
// the clean absolute in-source path p without following a final link (an
// error wrapping fs.ErrNotExist when absent); readLink returns a link's target.
func NewResolver(lstat func(p string) (fs.FileMode, error), readLink func(p string) (string, error)) *Resolver {
	return &Resolver{lstat: lstat, readLink: readLink, cache: map[string]string{}}
}

// Resolve walks name one component at a time; with followLast false the
// final component is left as it is (for Lstat and ReadLink). A directory
// prefix, once resolved, is cached: its resolution cannot depend on what
// follows it. Paths over MaxPathLen bytes or MaxPathComponents components
// fail with ENAMETOOLONG before any lookup (F2).
func (r *Resolver) Resolve(name string, followLast bool) (string, error) {
	if !strings.HasPrefix(name, "/") {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: errors.New("path is not absolute")}
	}
	if len(name) > MaxPathLen {
		return "", &fs.PathError{Op: "resolve", Path: name[:64] + "...", Err: syscall.ENAMETOOLONG}
	}
	if !followLast && !r.plain {
		if p, ok := r.cachedParent(name); ok {
			return p, nil
		}
	}
	// clean is name with empty and "." components dropped (".." is kept:
	// step resolves it). ends[i] is where its i-th prefix ends, so that
	// prefix(i) and comp(i) are slices of clean: looking prefixes up
	// allocates nothing, and a name already clean (most are) is not split.
	clean := name
	if !cleanAbs(name) {
		comps := components(name)
		if len(comps) == 0 {
			return "/", nil
		}
		if len(comps) > MaxPathComponents {
			return "", &fs.PathError{Op: "resolve", Path: name[:64] + "...", Err: syscall.ENAMETOOLONG}
		}
		clean = "/" + strings.Join(comps, "/")
	}
	var endsBuf [32]int
	ends := endsBuf[:1]
	for i := 1; i <= len(clean); i++ {
		if i == len(clean) || clean[i] == '/' {
			if len(ends) > MaxPathComponents {
				return "", &fs.PathError{Op: "resolve", Path: name[:64] + "...", Err: syscall.ENAMETOOLONG}
			}
			ends = append(ends, i)
		}
	}
	n := len(ends) - 1 // components
	prefix := func(i int) string { return clean[:ends[i]] }
	comp := func(i int) string { return clean[ends[i]+1 : ends[i+1]] }
	resolved, start := "/", 0
	r.mu.Lock()
	for i := n - 1; i > 0; i-- {
		if ends[i] > maxCachedPrefixLen {
			continue
		}
		if c, ok := r.cache[prefix(i)]; ok {
			resolved, start = c, i
			break
		}
	}
	r.mu.Unlock()
	hops := 0
	for i := start; i < n; i++ {
		last := i == n-1
		if last && !followLast {
			if comp(i) == ".." {
				return path.Dir(resolved), nil
			}
			return joinName(resolved, comp(i)), nil
		}
		next, err := r.step(resolved, comp(i), &hops)
		if err != nil {
			return path.Join(resolved, clean[ends[i]+1:]), &fs.PathError{Op: "resolve", Path: name, Err: err}
		}
		resolved = next
		if !last && ends[i+1] <= maxCachedPrefixLen {
			r.mu.Lock()
			if len(r.cache) >= maxCacheEntries {
				clear(r.cache)
			}
			key := resolved // a folder reached by no link is its own key: one string
			if key != prefix(i+1) {
				key = strings.Clone(prefix(i + 1))
			}
			r.cache[key] = resolved
			r.mu.Unlock()
		}
	}
	return resolved, nil
}

// cachedParent answers Resolve(name, false) without splitting name when
// name is clean and its folder is in the cache: the common case of a
// collector opening one file after another in one folder. It gives what
// the walk would: the cached folder joined with the last component.
func (r *Resolver) cachedParent(name string) (string, bool) {
	i := strings.LastIndexByte(name, '/')
	if i <= 0 || i > maxCachedPrefixLen || !cleanAbs(name) {
		return "", false
	}
	dir, base := name[:i], name[i+1:]
	r.mu.Lock()
	resolved, ok := r.cache[dir]
	r.mu.Unlock()
	if !ok {
		return "", false
	}
	switch resolved {
	case dir:
		return name, true
	case "/": // a folder that is a link to "/"
		return "/" + base, true
	}
	return resolved + "/" + base, true
}

// cleanAbs reports whether name is an absolute path in path.Clean's form
// with no "." or ".." component: what components would keep unchanged.
func cleanAbs(name string) bool {
	if len(name) < 2 || name[0] != '/' || name[len(name)-1] == '/' {
		return false
	}
	start := 1
	for i := 1; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		switch name[start:i] {
		case "", ".", "..":
			return false
		}
		start = i + 1
	}
	return true
}

// step resolves one component c below the resolved directory dir, following
// a symlink chain with a shared hop budget. A missing final component is not
// an error here: callers learn of it when they stat or open.
func (r *Resolver) step(dir, c string, hops *int) (string, error) {
	if c == ".." {
		return path.Dir(dir), nil // path.Dir("/") is "/": ".." cannot climb out
	}
	next := joinName(dir, c) // dir is resolved and clean, c one component
	if !r.plain {
		// A folder already resolved (met as a prefix before, or in an
		// earlier link's target) resolves as it did: links' targets
		// ("/usr/bin/python3.12", "usr/lib64") are walked from "/" one
		// component at a time, and each component cost an lstat.
		r.mu.Lock()
		resolved, ok := r.cache[next]
		r.mu.Unlock()
		if ok {
			return resolved, nil
		}
	}
	mode, err := r.lstat(next)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return next, nil
		}
		return "", unwrapPathErr(err)
	}
	if mode&fs.ModeSymlink == 0 {
		return next, nil
	}
	*hops++
	if *hops > maxLinkHops {
		return "", syscall.ELOOP
	}
	target, err := r.readLink(next)
	if err != nil {
		return "", unwrapPathErr(err)
	}
	if len(target) > MaxPathLen {
		return "", syscall.ENAMETOOLONG
	}
	base := dir
	if strings.HasPrefix(target, "/") {
		base = "/"
	}
	for _, tc := range components(target) {
		if base, err = r.step(base, tc, hops); err != nil {
			return "", err
		}
	}
	return base, nil
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// resolveStat resolves name, following a final link, and lstats the result:
// what Open, Stat and ReadDir start with. The Resolver would lstat the final
// component to see whether it is a link, and the caller lstat it again; here
// the folder part comes from the Resolver's prefix cache and the final
// component is lstat'ed once. Where it is a link, or the lstat fails other
// than "absent", the plain resolution runs instead, so results and errors
// are exactly those of Resolve followed by lstat. An error is returned as
// is when resolving failed, or as errLstat when only the final lstat did.
func (s *dirSource) resolveStat(name string) (string, fs.FileInfo, error) {
	p, err := s.resolve(name, false)
	return s.resolveStatFrom(name, p, err)
}

// resolveStatFrom is resolveStat given what Resolve(name, false) returned.
func (s *dirSource) resolveStatFrom(name, p string, err error) (string, fs.FileInfo, error) {
	if err == nil && !s.plain {
		if e, listed := s.listed.lookup(p); listed {
			if e == nil {
				return p, nil, errLstat{errListedAbsent(p)}
			}
			if e.typ == fs.ModeSymlink {
				return s.resolveStatSlow(name)
			}
		}
		fi, lerr := s.lstat(p)
		if lerr == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return p, fi, nil
		}
		if errors.Is(lerr, fs.ErrNotExist) {
			return p, nil, errLstat{lerr}
		}
	}
	return s.resolveStatSlow(name)
}

// resolveStatSlow is resolveStat by the plain rules: Resolve, then lstat.
func (s *dirSource) resolveStatSlow(name string) (string, fs.FileInfo, error) {
	p, err := s.resolve(name, true)
	if err != nil {
		return p, nil, err
	}
	fi, err := s.lstat(p)
	if err != nil {
		return p, nil, errLstat{err}
	}
	return p, fi, nil
}

// resolveType is resolveStat for callers that need only the type (Open,
// ReadDir): where the folder's listing gives it, no lstat is made.
func (s *dirSource) resolveType(name string) (string, fs.FileMode, error) {
	p, err := s.resolve(name, false)
	if err == nil && !s.plain {
		if e, listed := s.listed.lookup(p); listed {
			if e == nil {
				return p, 0, errLstat{errListedAbsent(p)}
			}
			if e.typ != fs.ModeSymlink && e.typ != typeUnknown {
				return p, e.typ, nil
			}
		}
	}
	p, fi, err := s.resolveStatFrom(name, p, err)
	if err != nil {
		return p, 0, err
	}
	return p, fi.Mode().Type(), nil
}

// errLstat marks a failure of resolveStat's final lstat, which callers
// report under their own operation's name.
type errLstat struct{ err error }

func (e errLstat) Error() string { return e.err.Error() }
func (e errLstat) Unwrap() error { return e.err }

// pathErr is what Open, Stat and ReadDir return for a resolveStat error:
// a resolve error as it is, an lstat error as op's PathError.
func pathErr(op, name string, err error) error {
	if le, ok := err.(errLstat); ok {
		return &fs.PathError{Op: op, Path: name, Err: unwrapPathErr(le.err)}
	}
	return err
}

// Open opens a regular file (or a directory) for reading. Anything else (a
// FIFO, a socket, a device) is refused before it is opened, so a FIFO planted
// in a root cannot hang a read and a device node is never touched (F5); the
// type is checked again on the open file, in case it was swapped in between.
func (s *dirSource) Open(name string) (File, error) {
	p, typ, err := s.resolveType(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	if err := openable(typ); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f, err := s.openNoBlock(p)
	if _, ok := err.(errFstat); ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPathErr(err)}
	}
	if fi, _ := f.Stat(); openable(fi.Mode()) != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	return f, nil
}

// statFile is an open file that answers Stat from the fstat Open made: the
// cache, the readers sizing their buffers and the ELF readers all ask, and
// each asking cost an fstat.
type statFile struct {
	*os.File
	fi fs.FileInfo
}

func (f *statFile) Stat() (fs.FileInfo, error) { return f.fi, nil }

// ErrNotRegular is returned by Open for FIFOs, sockets and devices.
var ErrNotRegular = errors.New("not a regular file or directory")

func openable(m fs.FileMode) error {
	if m.IsRegular() || m.IsDir() {
		return nil
	}
	return ErrNotRegular
}

func (s *dirSource) Stat(name string) (fs.FileInfo, error) {
	_, fi, err := s.resolveStat(name)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	return fi, nil
}

func (s *dirSource) Lstat(name string) (fs.FileInfo, error) {
	p, err := s.resolve(name, false)
	if err != nil {
		return nil, err
	}
	if !s.plain {
		if e, listed := s.listed.lookup(p); listed && e == nil {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: syscall.ENOENT}
		}
	}
	fi, err := s.lstat(p)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: unwrapPathErr(err)}
	}
	return fi, nil
}

func (s *dirSource) ReadLink(name string) (string, error) {
	p, err := s.resolve(name, false)
	if err != nil {
		return "", err
	}
	t, err := s.readlink(p)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: unwrapPathErr(err)}
	}
	return t, nil
}

// ReadDir lists a directory, sorted by name, through the same confined
// handle as Open; at most MaxDirEntries entries are returned. A complete
// listing is kept: it answers later lookups of names in the folder
// (listing.go).
func (s *dirSource) ReadDir(name string) ([]fs.DirEntry, error) {
	p, typ, err := s.resolveType(name)
	if err != nil {
		return nil, pathErr("readdir", name, err)
	}
	if !typ.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	if s.plain {
		return s.readDirPlain(name, p)
	}
	var ents []dirent
	if s.root == "/" {
		ents, err = s.listHost(p)
	} else {
		ents, err = s.dirs.list(p, s.getdents, MaxDirEntries)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: unwrapPathErr(err)}
	}
	tooMany := len(ents) > MaxDirEntries
	if tooMany {
		ents = ents[:MaxDirEntries] // the first ones read, as os.File.ReadDir(n) gives
	}
	slices.SortFunc(ents, func(a, b dirent) int { return strings.Compare(a.name, b.name) })
	l := &listing{s: s, dir: p, ents: ents}
	out := make([]fs.DirEntry, len(ents))
	for i := range ents {
		ents[i].l = l
		out[i] = &ents[i]
	}
	if tooMany {
		// Not kept: a name past the cap is not absent.
		return out, &fs.PathError{Op: "readdir", Path: name, Err: ErrTooLarge}
	}
	s.listed.put(l)
	return out, nil
}

// listHost lists the host folder p (clean, resolved): opened as one name
// with O_NOFOLLOW and O_DIRECTORY, as under a root.
func (s *dirSource) listHost(p string) ([]dirent, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	return listFD(fd, s.getdents, MaxDirEntries)
}

// readDirPlain is ReadDir through os.Root (RootPlain, the oracle).
func (s *dirSource) readDirPlain(name, p string) ([]fs.DirEntry, error) {
	f, err := s.openOS(p)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: unwrapPathErr(err)}
	}
	defer f.Close()
	ents, err := f.ReadDir(MaxDirEntries + 1)
	if err == io.EOF {
		err = nil
	}
	if len(ents) > MaxDirEntries {
		ents, err = ents[:MaxDirEntries], ErrTooLarge
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	if err != nil {
		return ents, &fs.PathError{Op: "readdir", Path: name, Err: unwrapPathErr(err)}
	}
	return ents, nil
}

func (s *dirSource) Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	if !s.live {
		return nil, ErrNotLive
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = s.env.List()
	cmd.WaitDelay = time.Second
	return cmd.Output()
}

// ReadFile reads a whole (small) file, refusing files over max bytes: text
// files read this way (METADATA, version.py) are never trusted to be small.
func ReadFile(src Source, name string, max int64) ([]byte, error) {
	f, err := src.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpen(f, name, max)
}

// ReadOpen is ReadFile of a file already open (by a Folder): it reads f
// whole, at most max bytes, and leaves it open.
func ReadOpen(f File, name string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	// The stat's size sizes the buffer (a file that grew since is still
	// read to max+1 bytes); /proc files say 0 whatever they hold.
	b := make([]byte, 0, min(fi.Size(), max)+1)
	b, err = readAllInto(b, f, max+1)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	return b, nil
}

// readAllInto is io.ReadAll of at most limit bytes into b's spare
// capacity: a buffer sized by the caller is filled with no reallocation
// when the size was right.
func readAllInto(b []byte, r io.Reader, limit int64) ([]byte, error) {
	for int64(len(b)) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):int(min(int64(cap(b)), limit))])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// Exists reports whether name exists (following links).
func Exists(src Source, name string) bool {
	_, err := src.Stat(name)
	return err == nil
}

// IsDir reports whether name is a directory (following links).
func IsDir(src Source, name string) bool {
	fi, err := src.Stat(name)
	return err == nil && fi.IsDir()
}

// IsExecutable reports whether name is a regular file with an execute bit.
func IsExecutable(src Source, name string) bool {
	fi, err := src.Stat(name)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// LookPath finds name in the PATH-style list, as a shell (and shutil.which)
// would: the first absolute entry holding an executable regular file. The
// path returned is the unresolved one (dir/name).
func LookPath(src Source, pathList, name string) (string, bool) {
	for i, dir := range strings.SplitN(pathList, ":", MaxPathListEntries+1) {
		if i >= MaxPathListEntries {
			break
		}
		if !strings.HasPrefix(dir, "/") {
			continue // relative PATH entries depend on a working directory we do not have
		}
		if len(dir) > MaxPathLen {
			continue // cannot name a file (ENAMETOOLONG); not worth joining
		}
		p := path.Join(dir, name)
		if IsExecutable(src, p) {
			return p, true
		}
	}
	return "", false
}

// Glob expands shell patterns (path.Match syntax) component by component
// through the source. Unreadable folders match nothing. Results are sorted.
func Glob(src Source, pattern string) []string {
	if !strings.HasPrefix(pattern, "/") {
		return nil
	}
	matches := []string{"/"}
	for _, c := range components(pattern) {
		var next []string
		if !strings.ContainsAny(c, `*?[\`) {
			for _, m := range matches {
				p := path.Join(m, c)
				if _, err := src.Lstat(p); err == nil {
					next = append(next, p)
				}
			}
		} else {
			for _, m := range matches {
				ents, _ := src.ReadDir(m)
				for _, e := range ents {
					if ok, _ := path.Match(c, e.Name()); ok {
						next = append(next, path.Join(m, e.Name()))
					}
				}
			}
		}
		matches = next
		if len(matches) == 0 {
			return nil
		}
	}
	sort.Strings(matches)
	return matches
}
