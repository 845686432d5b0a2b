package inspect

import (
	"encoding/binary"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fastpath-dev/fastpath/internal/fatbin"
)

// Walk inspects each path: a file is read and always reported; a folder is walked and
// only its files with CUDA code (or that failed to read) are reported, in lexical order.
// A walk does not follow links to folders (so it cannot loop), reads a link to a file
// once per file (the first path in lexical order, so libfoo.so -> libfoo.so.1 is one
// entry), opens only regular files that start with an ELF or fatbin magic, and turns an
// unreadable entry into a File with Error set: it never stops early. A file with CUDA
// code can tell the Python distribution whose RECORD lists it (File.ResolveDist),
// looked up only when asked: reading every RECORD of a site-packages costs more
// than reading a library's fatbin headers (70 ms against 8 for torch 2.11's
// libtorch_cuda_linalg.so on the H200, whose venv has 197 distributions), and
// only a verdict without code for the GPU, or the JSON, needs it.
func Walk(paths []string, visit func(*File)) {
	dists := newDistIndex()
	w := &walker{seen: map[fileID]bool{}, visit: func(f *File) {
		if f.HasCUDA() {
			f.dists = dists
		}
		visit(f)
	}}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err == nil && st.IsDir() {
			w.dir(p, st)
			continue
		}
		r := Read(p)
		r.Named = true
		w.visit(r)
	}
}

type fileID struct{ dev, ino uint64 }

func idOf(st fs.FileInfo) (fileID, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(s.Dev), uint64(s.Ino)}, true
}

type walker struct {
	seen  map[fileID]bool // files read and folders entered (bind mounts can loop too)
	visit func(*File)
}

func (w *walker) dir(path string, st fs.FileInfo) {
	if id, ok := idOf(st); ok {
		if w.seen[id] {
			return
		}
		w.seen[id] = true
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		w.visit(errorFile(path, err))
		// ReadDir returns what it read before the error; go on with those.
	}
	for _, de := range ents {
		p := filepath.Join(path, de.Name())
		switch t := de.Type(); {
		case t.IsDir():
			st, err := os.Lstat(p)
			if err != nil {
				w.visit(errorFile(p, err))
				continue
			}
			w.dir(p, st)
		case t&fs.ModeSymlink != 0:
			st, err := os.Stat(p)
			if err != nil {
				w.visit(errorFile(p, err)) // dangling or looping link
				continue
			}
			if st.Mode().IsRegular() {
				w.file(p, st)
			}
			// Links to folders are not followed.
		case t.IsRegular():
			st, err := os.Lstat(p)
			if err != nil {
				w.visit(errorFile(p, err))
				continue
			}
			w.file(p, st)
		default:
			// fifos, sockets, devices: not files to read (opening a fifo would block).
		}
	}
}

func (w *walker) file(path string, st fs.FileInfo) {
	if id, ok := idOf(st); ok {
		if w.seen[id] {
			return
		}
		w.seen[id] = true
	}
	ok, err := hasMagic(path)
	if err != nil {
		w.visit(errorFile(path, err))
		return
	}
	if !ok {
		return
	}
	r := Read(path)
	if r.HasCUDA() || r.Error != "" && !r.NotCUDA {
		w.visit(r)
	}
}

// hasMagic says whether the file starts with the ELF magic or a fatbin's: the cheap
// test that keeps a walk of site-packages from parsing .py and .json files.
func hasMagic(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		return false, err
	}
	return string(b[:]) == "\x7fELF" || binary.LittleEndian.Uint32(b[:]) == fatbin.Magic, nil
}

func errorFile(path string, err error) *File {
	r := &File{Path: path, SASS: []string{}, PTX: []string{}, CommonSASS: []string{}}
	r.fail(err)
	return r
}
