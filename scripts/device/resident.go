//go:build ignore

// resident prints, for each file named on standard input (one per line),
// how many of its bytes are in the page cache, its size and its name: what
// coldio.sh uses to see where a cold doctor's reads from storage went
// (mincore(2) on a shared read-only mapping; nothing is read).
//
//	CGO_ENABLED=0 go build -o .device/coldio/resident scripts/device/resident.go
package main

import (
	"bufio"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if n, size, ok := resident(sc.Text()); ok && n > 0 {
			fmt.Printf("%d %d %s\n", n, size, sc.Text())
		}
	}
}

// resident returns the bytes of path's pages that are cached.
func resident(path string) (cached, size int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return 0, 0, false
	}
	size = fi.Size()
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return 0, 0, false
	}
	defer syscall.Munmap(m)
	page := int64(os.Getpagesize())
	vec := make([]byte, (size+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(size), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, 0, false
	}
	for _, v := range vec {
		if v&1 != 0 {
			cached += page
		}
	}
	return cached, size, true
}
