package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestEveryCommandDocumentsExitStatus walks the command tree: each command
// has an exit table, and its long help ends with the section generated from
// it (once, in the one format), so no hand-written copy can drift.
func TestEveryCommandDocumentsExitStatus(t *testing.T) {
	n := 0
	walkCommands(NewRootCommand(&IO{}), func(c *cobra.Command) {
		n++
		s, ok := ExitStatusOf(c)
		if !ok {
			t.Errorf("%s: no entry in exitStatuses (exit.go)", c.CommandPath())
			return
		}
		if s.OK == "" {
			t.Errorf("%s: the exit table says nothing about 0", c.CommandPath())
		}
		if got := strings.Count(c.Long, exitHeading); got != 1 {
			t.Errorf("%s: %q appears %d times in the long help, want once", c.CommandPath(), exitHeading, got)
		}
		if !strings.HasSuffix(c.Long, "\n\n"+s.Help()) {
			t.Errorf("%s: the long help does not end with the generated exit section:\n%s", c.CommandPath(), c.Long)
		}
		for _, line := range strings.Split(s.Help(), "\n") {
			if len(line) > 80 {
				t.Errorf("%s: exit help line over 80 columns: %q", c.CommandPath(), line)
			}
		}
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Help(); err != nil || !strings.Contains(out.String(), s.Help()) {
			t.Errorf("%s --help lacks the exit section (err %v)", c.CommandPath(), err)
		}
	})
	if n < 15 {
		t.Errorf("walked only %d commands", n)
	}
	for path := range exitStatuses {
		found := false
		walkCommands(NewRootCommand(&IO{}), func(c *cobra.Command) { found = found || c.CommandPath() == path })
		if !found {
			t.Errorf("exitStatuses has %q, which is no command", path)
		}
	}
}

// placeholderOf maps a flag's value type to the one placeholder it takes.
var placeholderOf = map[string]string{"duration": "DURATION", "int": "N", "intSlice": "N"}

// TestFlagPlaceholders: every flag that takes a value names it with a
// backquoted placeholder in capitals (pflag shows it in the usage line),
// durations are DURATION and counts N, and a flag name means the same
// placeholder on every command.
func TestFlagPlaceholders(t *testing.T) {
	byName := map[string]string{}
	capitals := regexp.MustCompile(`^[A-Z][A-Z0-9_]*([=|/][A-Z][A-Za-z0-9_.:\[\]|@/]*)*$`)
	walkCommands(NewRootCommand(&IO{}), func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				return
			}
			id := c.CommandPath() + " --" + f.Name
			if strings.Count(f.Usage, "`") < 2 {
				t.Errorf("%s: no backquoted placeholder in %q", id, f.Usage)
				return
			}
			name, _ := pflag.UnquoteUsage(f)
			if !capitals.MatchString(name) {
				t.Errorf("%s: placeholder %q is not in capitals", id, name)
			}
			if want, ok := placeholderOf[f.Value.Type()]; ok && name != want {
				t.Errorf("%s: a %s takes %s, not %s", id, f.Value.Type(), want, name)
			}
			if f.Hidden {
				return // an old name kept for scripts (k8s manifest --image)
			}
			if prev, ok := byName[f.Name]; ok && prev != name {
				t.Errorf("%s: placeholder %s, elsewhere %s", id, name, prev)
			}
			byName[f.Name] = name
		})
	})
}

// exitCase is one run of a command: its arguments, the exit status, what
// stderr must say, and whether it is a usage error (which, and only which,
// ends with a pointer to --help).
type exitCase struct {
	args   []string
	want   ExitCode
	usage  bool // ExitUsage and ExitFailure are both 2: the case says which
	stderr string
}

func usageCase(stderr string, args ...string) exitCase {
	return exitCase{args, ExitUsage, true, stderr}
}

func failureCase(stderr string, args ...string) exitCase {
	return exitCase{args, ExitFailure, false, stderr}
}

// TestExitCodesOfEveryCommand runs each command with an unknown flag, with
// wrong arguments and with an input it cannot use, and checks the status
// and that stderr says why. A command of the tree missing from the table
// fails the test.
func TestExitCodesOfEveryCommand(t *testing.T) {
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(tmp, "one.json")
	if err := os.WriteFile(one, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(tmp, "missing")
	notDir := filepath.Join(one, "sub") // a path through a file: nothing can be made there
	cases := map[string][]exitCase{
		"fastpath": {
			usageCase(`unknown command "nosuchcommand" for "fastpath"`, "nosuchcommand"),
		},
		"fastpath doctor": {
			usageCase(`unknown command "extra" for "fastpath doctor"`, "doctor", "extra"),
			usageCase("none of the others can be", "doctor", "--json", "--markdown"),
			usageCase("two different sources", "doctor", "--root", empty, "--image", one),
			usageCase("give --live too", "doctor", "--live-timeout", "5s", "--root", empty),
			usageCase("nothing is collected", "doctor", "--timings", "--facts", one),
			failureCase("no such file", "doctor", "--facts", missing),
		},
		"fastpath facts": {
			usageCase(`unknown command "extra"`, "facts", "extra"),
			usageCase("--platform needs --image", "facts", "--platform", "linux/arm64"),
			failureCase("missing", "facts", "--image", missing+".tar"),
		},
		"fastpath packages": {
			usageCase(`unknown command "extra"`, "packages", "extra"),
			usageCase("unknown flag: --gpu", "packages", "--gpu", "9.0"),
			failureCase("no Python environment found", "packages", "--root", empty),
		},
		"fastpath inspect": {
			usageCase("requires at least 1 arg", "inspect"),
			usageCase("cannot be combined", "inspect", "--cuobjdump", "--json", one),
			usageCase("give --cuobjdump too", "inspect", "--all", one),
			failureCase("could not read", "inspect", missing),
		},
		"fastpath model": {
			usageCase("accepts 1 arg", "model"),
			failureCase("model ", "model", filepath.Join(missing, "config.json"), "--root", empty),
		},
		"fastpath explain": {
			usageCase("one log file", "explain"),
			usageCase("is a directory", "explain", empty),
			failureCase("no such file", "explain", missing),
		},
		"fastpath plan": {
			usageCase(`unknown command "extra"`, "plan", "extra"),
			failureCase("no such file", "plan", "--facts", missing),
		},
		"fastpath fix": {
			usageCase(`unknown command "extra"`, "fix", "extra"),
			usageCase("live machine only", "fix", "--apply", "--root", empty),
			usageCase("give it with --apply", "fix", "--yes", "--root", empty),
			failureCase("no such file", "fix", "--facts", missing),
		},
		"fastpath remote": {
			usageCase("no targets", "remote", "--via", "ssh {}"),
			usageCase("unknown flag: --image", "remote", "--via", "ssh {}", "--image", "x", "h"),
			usageCase("--parallel 0", "remote", "--via", "ssh {}", "--parallel", "0", "h"),
			usageCase("the JSON already holds every fact", "remote", "--via", "ssh {}", "--all", "--json", "h"),
		},
		"fastpath diff": {
			usageCase("requires at least 2 arg", "diff", one),
			usageCase("not a count of machines", "diff", "--expect", "-1", one, one),
			usageCase("the JSON already holds every fact", "diff", "--all", "--format", "json", one, one),
			usageCase("for text and Markdown", "diff", "--all", "--json", one, one),
			failureCase("no such file", "diff", missing, one),
			failureCase(`schema "", want "fastpath.v1"`, "diff", one, one),
		},
		"fastpath k8s": {
			usageCase(`unknown command "nosuch" for "fastpath k8s"`, "k8s", "nosuch"),
		},
		"fastpath k8s manifest": {
			usageCase("--pod-image is required", "k8s", "manifest"),
			usageCase(`invalid argument "soon"`, "k8s", "manifest", "--pod-image", "x", "--interval", "soon"),
			usageCase(`--format "text": want yaml or json`, "k8s", "manifest", "--pod-image", "x", "--format", "text"),
		},
		"fastpath demo": {
			usageCase(`unknown command "extra"`, "demo", "extra"),
			failureCase("not a directory", "demo", "--write-tree", notDir),
		},
		"fastpath bench": {
			usageCase("bench needs --model", "bench"),
			usageCase("unknown flag: --root", "bench", "--root", empty, "--model", one),
			usageCase(`--dtype "int3"`, "bench", "--model", one, "--dtype", "int3"),
			failureCase("model ", "bench", "--model", filepath.Join(missing, "config.json"), "--python", filepath.Join(missing, "python")),
		},
	}
	walkCommands(NewRootCommand(&IO{}), func(c *cobra.Command) {
		path := c.CommandPath()
		if len(cases[path]) == 0 {
			t.Errorf("%s: no exit cases", path)
		}
		// Every command refuses an unknown flag the same way.
		args := append(strings.Fields(path)[1:], "--no-such-flag")
		cases[path] = append(cases[path], usageCase("unknown flag: --no-such-flag", args...))
	})
	for path, cs := range cases {
		for _, tc := range cs {
			var out, errb bytes.Buffer
			got := Main(tc.args, strings.NewReader(""), &out, &errb)
			stderr := errb.String()
			if got != tc.want {
				t.Errorf("fastpath %s: exit %d, want %d\nstderr: %s", strings.Join(tc.args, " "), got, tc.want, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("fastpath %s: stderr lacks %q:\n%s", strings.Join(tc.args, " "), tc.stderr, stderr)
			}
			hint := "Run '" + path + " --help' for usage."
			if tc.usage != strings.Contains(stderr, hint) {
				t.Errorf("fastpath %s: usage error %v, but the pointer to --help is there: %v\n%s", strings.Join(tc.args, " "), tc.usage, !tc.usage, stderr)
			}
		}
	}
}
