package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fastpath-dev/fastpath/internal/cli"
	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// TestMain lets the scripts run `fastpath` as a real command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fastpath": func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the end-to-end scenarios in testdata/script: each builds
// its machine with the fixture commands below and runs the real binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// seed DIR: write the seed container into DIR.
			"seed": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: seed DIR")
				}
				ts.Check(fixture.Seed(ts.MkAbs(args[0])))
			},
			// toolkit DIR HOME VERSION: a CUDA toolkit at HOME inside root DIR.
			"toolkit": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: toolkit ROOT HOME VERSION")
				}
				ts.Check(fixture.New(ts.MkAbs(args[0])).Toolkit(args[1], args[2]).Err())
			},
			// symlink ROOT PATH TARGET: a link inside root.
			"symlink": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: symlink ROOT PATH TARGET")
				}
				ts.Check(fixture.New(ts.MkAbs(args[0])).Symlink(args[1], args[2]).Err())
			},
			// rm ROOT PATH: remove a file or folder inside root.
			"rmtree": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: rmtree ROOT PATH")
				}
				ts.Check(os.RemoveAll(filepath.Join(ts.MkAbs(args[0]), args[1])))
			},
		},
	})
}
