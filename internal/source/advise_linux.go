package source

import "syscall"

// AdviseRandomReads is "yes": binaries are opened with adviseRandom. A build
// made to compare sets it to "no" (go build -ldflags "-X
// github.com/fastpath-dev/fastpath/internal/source.AdviseRandomReads=no"),
// which leaves the kernel's readahead on.
var AdviseRandomReads = "yes"

// adviseRandom tells the kernel that f, a binary read a header at a time,
// is read at random places: with a cold page cache each small read then
// fetches its own page, not the default readahead window around it (the
// fatbin headers of libtorch_cuda.so are 3,233 reads of 16 or 64 bytes
// spread over 298 MB; with readahead a cold read of them fetched 35 to 85 MB
// from storage, without it 11 MB). It changes nothing but the readahead of
// this open file, and a file that is not an *os.File (an image layer) is
// left alone.
func adviseRandom(f File) {
	if AdviseRandomReads != "yes" {
		return
	}
	if fd, ok := f.(interface{ Fd() uintptr }); ok {
		const fadvRandom = 1 // POSIX_FADV_RANDOM
		syscall.Syscall6(syscall.SYS_FADVISE64, fd.Fd(), 0, 0, fadvRandom, 0, 0)
	}
}
