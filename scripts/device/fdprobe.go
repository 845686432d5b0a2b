//go:build ignore

// fdprobe measures what opening each descriptor costs in a threaded
// process: the open that makes the kernel grow the descriptor table (64,
// then 128) waits for an RCU grace period (internal/source/readers.go).
// It prints the slowest open, and the open of descriptors 63, 64 and 128,
// with the table size (FDSize) before and after.
//
//	CGO_ENABLED=0 go build -o .device/fdtable/fdprobe scripts/device/fdprobe.go
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

func fdSize() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "FDSize:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func main() {
	before := fdSize()
	// Threads, as any Go program doing work has.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { time.Sleep(time.Millisecond) })
	}
	wg.Wait()
	took := map[int]time.Duration{}
	var worst time.Duration
	worstFd := -1
	for range 140 {
		t := time.Now()
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		d := time.Since(t)
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		took[fd] = d
		if d > worst {
			worst, worstFd = d, fd
		}
	}
	fmt.Printf("FDSize %s -> %s; open of fd 63 %v, fd 64 %v, fd 128 %v; slowest fd %d %v\n",
		before, fdSize(), took[63], took[64], took[128], worstFd, worst)
}
