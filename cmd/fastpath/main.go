// Command fastpath diagnoses why a GPU machine, container or image cannot run
// a model on its fast path, and prints the exact fix.
package main

import (
	"os"

	"github.com/fastpath-dev/fastpath/internal/cli"
)

func main() {
	stop := startTrace() // a no-op unless built with -tags fastpath_trace (trace_on.go)
	rc := cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(int(rc))
}
