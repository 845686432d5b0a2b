package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fastpath-dev/fastpath/internal/cli"
	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// TestMain lets the scripts run `fastpath` as a real command.
func TestMain(m *testing.M) {
	if root := os.Getenv(fdTableChildEnv); root != "" {
		os.Exit(fdTableChild(root)) // descriptors_test.go
	}
	testscript.Main(m, map[string]func(){
		"fastpath": func() { os.Exit(int(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))) },
	})
}

// TestScripts runs the end-to-end scenarios in testdata/script: each builds
// its machine with the fixture commands below and runs the real binary.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// The scripts match whole lines of the text reports: no wrapping
		// (internal/render's tests cover it; seed.txtar checks width 100).
		Setup: func(env *testscript.Env) error {
			env.Setenv("COLUMNS", "1000")
			return nil
		},
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
			// exits N PROG ARGS...: run PROG and require exit status N
			// exactly (testscript's ! only says "not 0"); stdout and stderr
			// are kept for the next stdout/stderr checks.
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits N PROG [ARGS...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: %q is not a status", args[0])
				}
				got := 0
				var ee *exec.ExitError
				switch err := ts.Exec(args[1], args[2:]...); {
				case errors.As(err, &ee):
					got = ee.ExitCode()
				case err != nil:
					ts.Fatalf("exits: %v", err)
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
				}
			},
			// link ROOT PATH TARGET: a symbolic link inside root (parents made).
			"link": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: link ROOT PATH TARGET")
				}
				ts.Check(fixture.New(ts.MkAbs(args[0])).Symlink(args[1], args[2]).Err())
			},
			// gcc ROOT MAJOR: a Debian-style gcc-MAJOR as /usr/bin/gcc and g++.
			"gcc": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: gcc ROOT MAJOR")
				}
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				ts.Check(fixture.New(ts.MkAbs(args[0])).GCC("x86_64-linux-gnu", n).Err())
			},
			// torch ROOT VERSION CUDA: reinstall torch in the seed venv ("-" for a CPU build).
			"torch": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: torch ROOT VERSION CUDA")
				}
				root := ts.MkAbs(args[0])
				site := filepath.Join(root, "root/venv/lib/python3.12/site-packages")
				old, _ := filepath.Glob(filepath.Join(site, "torch-*.dist-info"))
				for _, o := range append(old, filepath.Join(site, "torch")) {
					ts.Check(os.RemoveAll(o))
				}
				cuda := args[2]
				if cuda == "-" {
					cuda = ""
				}
				tr := fixture.New(root)
				tr.Torch("/root/venv/lib/python3.12/site-packages", args[1], cuda, "cp312")
				ts.Check(tr.Err())
			},
			// driver ROOT VERSION [PCIDEVICE NAME]...: the NVIDIA driver's /proc and /sys files.
			"driver": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 1 || len(args)%2 != 0 {
					ts.Fatalf("usage: driver ROOT VERSION [PCIDEVICE NAME]...")
				}
				var gpus []fixture.GPU
				for i := 2; i+1 < len(args); i += 2 {
					gpus = append(gpus, fixture.GPU{BusID: fmt.Sprintf("0000:%02x:00.0", 0x18+len(gpus)), PCIDevice: args[i], Name: args[i+1],
						UUID: fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", len(gpus))})
				}
				ts.Check(fixture.New(ts.MkAbs(args[0])).NvidiaDriver(args[1], gpus).Err())
			},
			// realbins DIR: copy the real nvcc 13.0 builds of internal/fatbin/testdata/real into DIR.
			"realbins": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: realbins DIR")
				}
				ts.Check(os.CopyFS(ts.MkAbs(args[0]), os.DirFS("../../internal/fatbin/testdata/real/nvcc-13.0")))
			},
			// jsonset FILE KEY.PATH JSON: set a value in a JSON file (to edit saved facts).
			"jsonset": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 {
					ts.Fatalf("usage: jsonset FILE KEY.PATH JSON")
				}
				ts.Check(jsonSet(ts.MkAbs(args[0]), strings.Split(args[1], "."), args[2]))
			},
		},
	})
}

func jsonSet(file string, keys []string, value string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("value %q: %w", value, err)
	}
	m := doc
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not an object", k)
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}
