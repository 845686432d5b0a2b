package cli

import (
	"bytes"
	"io"
	"testing"
)

// TestCommandsTableNamesEachCommand: Main builds only the subcommand whose
// name its first argument is, looked up in commands; a name there that is
// not the command's own would send that command to "unknown command".
func TestCommandsTableNamesEachCommand(t *testing.T) {
	ios := &IO{Out: io.Discard, Err: io.Discard}
	for _, c := range commands {
		if got := c.build(ios).Name(); got != c.name {
			t.Errorf("commands lists %q for a command named %q", c.name, got)
		}
		root := newRootCommand(ios, []string{c.name, "--help"})
		if n := len(root.Commands()); n != 1 {
			t.Errorf("%s: built %d subcommands, want 1", c.name, n)
		}
	}
	if n, want := len(NewRootCommand(ios).Commands()), len(commands); n != want {
		t.Errorf("the full tree has %d subcommands, commands lists %d", n, want)
	}
}

// TestMainBuildsWhatArgsReach: a command's help, --version, the full help
// and a mistyped name's suggestion are what they were with the full tree.
func TestMainBuildsWhatArgsReach(t *testing.T) {
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		Main(args, nil, &out, &errOut)
		return out.String() + errOut.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--version"}, "fastpath version " + Version},
		{[]string{"--help"}, "doctor"},
		{[]string{"--help"}, "explain"},
		{[]string{"doctr"}, "Did you mean this?\n\tdoctor"},
		{[]string{"doctor", "--help"}, "--timings"},
	} {
		if got := run(tc.args...); !bytes.Contains([]byte(got), []byte(tc.want)) {
			t.Errorf("fastpath %q printed %q, want it to contain %q", tc.args, got, tc.want)
		}
	}
}

func BenchmarkNewRootCommand(b *testing.B) {
	ios := &IO{Out: io.Discard, Err: io.Discard}
	b.ReportAllocs()
	for b.Loop() {
		NewRootCommand(ios)
	}
}

// BenchmarkNewRootCommandDoctor is what `fastpath doctor` builds.
func BenchmarkNewRootCommandDoctor(b *testing.B) {
	ios := &IO{Out: io.Discard, Err: io.Discard}
	args := []string{"doctor"}
	b.ReportAllocs()
	for b.Loop() {
		newRootCommand(ios, args)
	}
}
