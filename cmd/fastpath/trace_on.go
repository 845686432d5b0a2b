//go:build fastpath_trace

package main

import (
	"fmt"
	"os"
	"runtime/trace"
)

// A build for finding where a run waits, not for users:
//
//	CGO_ENABLED=0 go build -tags fastpath_trace -o fastpath-trace ./cmd/fastpath
//	FASTPATH_GOTRACE=run.trace ./fastpath-trace doctor
//	python3 scripts/trace-waits.py run.trace
//
// FASTPATH_GOTRACE names the file for Go's execution trace of the whole run:
// every goroutine's system calls with their stacks, so a cold run's disk
// waits can be told apart by who asked for them (docs/speed.md, "A cold
// doctor's disk waits"). --timings shows a collector's wall time and reads;
// this shows which of those reads waited, and for how long. The release
// build links none of it (trace_off.go).
func startTrace() (stop func()) {
	p := os.Getenv("FASTPATH_GOTRACE")
	if p == "" {
		return func() {}
	}
	f, err := os.Create(p)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fastpath: FASTPATH_GOTRACE: %v\n", err)
		return func() {}
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintf(os.Stderr, "fastpath: FASTPATH_GOTRACE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		trace.Stop()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "fastpath: FASTPATH_GOTRACE: %v\n", err)
		}
	}
}
