package source

// The descriptor budget of a run. The kernel gives a new process a table of
// 64 file descriptors (NR_OPEN_DEFAULT). Opening descriptor 64 makes it grow
// the table (expand_fdtable), and in a process with more than one thread,
// which every Go program is, the grown table is published only after an RCU
// grace period (synchronize_rcu). Every other open waits behind it. On the
// H200 test machine (a 16-vCPU virtual machine) that wait was 15 to 28 ms for
// descriptor 64 and 8 to 32 ms more for descriptor 128, against a doctor run
// of about 8 ms: scripts/device/fdtable.sh measures it (with
// scripts/device/fdprobe.go), and the seed-tree run took 34.5 ms instead of
// 8.5 when it crossed 64 (docs/speed.md, "The descriptor table").
//
// A shell script hides the cost (bash keeps the script open on descriptor
// 255, so its children start with a table of 256), which is why it went
// unseen in scripts run from bash; started from Python, from `bash -c`, over
// ssh, by a container runtime or a DaemonSet's exec, the run paid it.
//
// So the reads of a run stay under 64 descriptors: at most MaxReaders files
// are read at once across all the worker pools (the Python metadata readers,
// the extension readers, torch's library readers), each holding its file and
// at most one folder handle of its own, and at most maxDirHandles folders
// are kept open (dirhandles.go). With the three standard descriptors, the
// runtime's poller and a few single reads by the other collectors, a run's
// highest descriptor was 34 to 39 under strace (the seed tree and the
// 5,000-distribution, 4,096-library tree, GOMAXPROCS 2 and 16);
// TestDescriptorTableNeverGrows checks that it stays under 64.
const MaxReaders = 12

var readerSlots = make(chan struct{}, MaxReaders)

// AcquireReader waits for one of the MaxReaders reader slots. A worker that
// reads files takes a slot for each job and gives it back with
// ReleaseReader before it takes the next; a job must not wait on another
// job while it holds one.
func AcquireReader() { readerSlots <- struct{}{} }

// ReleaseReader gives back the slot AcquireReader took.
func ReleaseReader() { <-readerSlots }
