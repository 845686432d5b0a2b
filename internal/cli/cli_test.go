package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Exit statuses are a contract: 0 clean, 1 error findings, 2 usage or failure.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want ExitCode
		out  string // substring of stdout+stderr
	}{
		{[]string{"--help"}, ExitOK, "Exit status:"},
		{[]string{"demo"}, ExitOK, "no-cuda-compiler"}, // the seed's findings, not this machine's
		{[]string{"doctor", "--root", "/nonexistent-root"}, ExitFailure, "nonexistent-root"},
		{[]string{"doctor", "--gpu", "sm_x"}, ExitFailure, "not a compute capability"},
		{[]string{"doctor", "--bogus"}, ExitFailure, "unknown flag"},
		{[]string{"doctor", "extra-arg"}, ExitFailure, "unknown command"},
		{[]string{"doctor", "--facts", "/nonexistent/facts.json"}, ExitFailure, "no such file"},
		{[]string{"doctor", "--facts", "x.json", "--root", "/"}, ExitFailure, "cannot be combined"},
		{[]string{"nosuchcommand"}, ExitFailure, "unknown command"},
	} {
		var out, errb bytes.Buffer
		got := Main(tc.args, strings.NewReader(""), &out, &errb)
		if got != tc.want {
			t.Errorf("fastpath %v: exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, got, tc.want, out.String(), errb.String())
		}
		if !strings.Contains(out.String()+errb.String(), tc.out) {
			t.Errorf("fastpath %v: output lacks %q:\n%s%s", tc.args, tc.out, out.String(), errb.String())
		}
	}
}

func TestParseCapabilityFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"facts", "--root", t.TempDir(), "--gpu", "sm_90a", "--gpu", "12.0", "--gpu", "100"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{`"capability": "9.0"`, `"capability": "12.0"`, `"capability": "10.0"`, `"overridden": true`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("facts lack %s", want)
		}
	}
}
