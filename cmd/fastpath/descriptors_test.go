package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastpath-dev/fastpath/internal/cli"
	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// fdTableChildEnv makes the test binary a doctor run on the tree it names,
// which then prints the size of its descriptor table before and after.
const fdTableChildEnv = "FASTPATH_TEST_FDTABLE_ROOT"

// fdTableFreshEnv marks the child once it has a fresh table (fdTableChild).
const fdTableFreshEnv = "FASTPATH_TEST_FDTABLE_FRESH"

// TestDescriptorTableNeverGrows: a doctor run never opens descriptor 64, so
// the kernel never grows the 64-entry table a process starts with. Growing
// it in a threaded process waits for an RCU grace period, 17 to 36 ms on the
// H200's virtual machine against an 8 ms run (internal/source/readers.go,
// scripts/device/fdtable.sh). The table's size is read from the kernel
// (/proc/self/status, FDSize), which never shrinks it: a run that opened
// descriptor 64 even once ends with 128 or more. Before the reader slots,
// the seed tree alone reached descriptor 80.
//
// Each case runs in a fresh child process (a test binary with many files
// open would start its children with a larger table), with GOMAXPROCS
// as the machine gives it and at 16, where every pool has 32 workers.
func TestDescriptorTableNeverGrows(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs Linux's /proc/self/status")
	}
	seed := t.TempDir()
	if err := fixture.Seed(seed); err != nil {
		t.Fatal(err)
	}
	trees := map[string]string{"seed": seed}
	if !testing.Short() {
		grown := t.TempDir()
		if err := scaleTree(grown, 600, 600); err != nil {
			t.Fatal(err)
		}
		trees["600 distributions, 600 libraries"] = grown
	}
	for name, root := range trees {
		for _, procs := range []string{"", "16"} {
			t.Run(fmt.Sprintf("%s/GOMAXPROCS=%s", name, procs), func(t *testing.T) {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), fdTableChildEnv+"="+root, "GOMAXPROCS="+procs)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Run(); err != nil {
					t.Fatalf("child: %v\n%s", err, errb.String())
				}
				var before, after int
				if _, err := fmt.Sscanf(out.String(), "FDSize %d %d", &before, &after); err != nil {
					t.Fatalf("child printed %q: %v", out.String(), err)
				}
				if before != 64 {
					t.Skipf("the child started with a table of %d descriptors (its parent had one over 63 open): this test cannot see growth", before)
				}
				if after != before {
					t.Errorf("the descriptor table grew from %d to %d: a doctor run opened descriptor 64 or above (source.MaxReaders, maxDirHandles)", before, after)
				}
			})
		}
	}
}

// fdTableChild runs doctor on root and prints "FDSize BEFORE AFTER".
//
// A process inherits a table as large as its parent's highest open
// descriptor needs (a CI runner or a tool may hold descriptor 251), so the
// child first gives itself a fresh 64-entry table: close_range with
// CLOSE_RANGE_UNSHARE (Linux 5.9) on descriptors 64 and up unshares the
// table at that size, and the child then execs itself on this thread, so
// the doctor run starts as a process started by a clean parent would.
func fdTableChild(root string) int {
	if os.Getenv(fdTableFreshEnv) == "" {
		runtime.LockOSThread()
		if err := unix.CloseRange(64, ^uint(0), unix.CLOSE_RANGE_UNSHARE); err != nil {
			fmt.Printf("FDSize %d %d (close_range: %v)\n", fdSize(), fdSize(), err)
			return 0
		}
		self, err := os.Executable()
		if err == nil {
			err = syscall.Exec(self, os.Args, append(os.Environ(), fdTableFreshEnv+"=1"))
		}
		fmt.Fprintln(os.Stderr, "exec:", err)
		return 2
	}
	before := fdSize()
	cli.Main(doctorArgs(root), nil, io.Discard, io.Discard)
	fmt.Printf("FDSize %d %d\n", before, fdSize())
	return 0
}

// fdSize is the FDSize line of /proc/self/status: the size of this
// process's descriptor table.
func fdSize() int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "FDSize:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return -1
}
