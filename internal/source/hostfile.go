package source

import (
	"fmt"
	"io"
	"os"
)

// OpenRegular opens the host file p for reading only if it is a regular
// file, for readers of files outside any Source (an image's layout folder
// or archive, the docker config). The open is non-blocking, so a FIFO in
// p's place fails the type check instead of blocking the open forever; the
// type is taken from the open file (fstat), so nothing can be swapped in
// between the check and the read.
func OpenRegular(p string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(p, openFlags, 0)
	return regularOnly(f, err, p)
}

// ReadRegular reads the host file p whole (OpenRegular), refusing one of
// more than max bytes.
func ReadRegular(p string, max int64) ([]byte, error) {
	f, fi, err := OpenRegular(p)
	return readCapped(f, fi, err, p, max)
}

// OpenRegularIn opens rel inside the folder dir as OpenRegular does, but
// through an os.Root handle on dir: every component is walked with openat
// and a link (absolute or climbing) that would leave dir is an error. It
// is for folders that are themselves untrusted input, an OCI layout whose
// blobs could be links to host files.
func OpenRegularIn(dir, rel string) (*os.File, os.FileInfo, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	f, err := r.OpenFile(rel, openFlags, 0)
	return regularOnly(f, err, rel)
}

// ReadRegularIn reads rel inside dir whole (OpenRegularIn), refusing a
// file of more than max bytes.
func ReadRegularIn(dir, rel string, max int64) ([]byte, error) {
	f, fi, err := OpenRegularIn(dir, rel)
	return readCapped(f, fi, err, rel, max)
}

// regularOnly checks the file an open returned with fstat, closing it and
// failing unless it is a regular file.
func regularOnly(f *os.File, err error, name string) (*os.File, os.FileInfo, error) {
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: not a regular file", name)
	}
	return f, fi, nil
}

// readCapped reads an opened regular file whole and closes it, refusing
// one whose size is over max before reading.
func readCapped(f *os.File, fi os.FileInfo, err error, name string, max int64) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d read", name, fi.Size(), max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}
