package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "ssh {}", want: []string{"ssh", "{}"}},
		{in: "  ssh   -p 2222 -o StrictHostKeyChecking=no {}  ", want: []string{"ssh", "-p", "2222", "-o", "StrictHostKeyChecking=no", "{}"}},
		{in: `kubectl exec -i {} --`, want: []string{"kubectl", "exec", "-i", "{}", "--"}},
		{in: `ssh -o 'ProxyCommand=ssh -W %h:%p bastion' {}`, want: []string{"ssh", "-o", "ProxyCommand=ssh -W %h:%p bastion", "{}"}},
		{in: `sh -c "sleep 1; echo \"hi\" \$x" {}`, want: []string{"sh", "-c", `sleep 1; echo "hi" $x`, "{}"}},
		{in: `a\ b c\\d ''`, want: []string{"a b", `c\d`, ""}},
		{in: "docker exec -i root@{}", want: []string{"docker", "exec", "-i", "root@{}"}},
		{in: "a 'b", err: "without closing quote `'`"},
		{in: `a "b`, err: "without closing quote `\"`"},
		{in: `a \`, err: `trailing \`},
		{in: "ssh {} | tee", err: "shell syntax |"},
		{in: "ssh $HOST", err: "shell syntax $"},
		{in: `ssh "$HOST"`, err: "expansions"},
		{in: "", want: nil},
		{in: "ssh {}\n", want: []string{"ssh", "{}"}},
		{in: "ssh \\\n  -p 22 {}", want: []string{"ssh", "-p", "22", "{}"}},
		{in: `sh -c "a\b \` + "`" + `x\` + "`" + `" ~/{} a{b,c} *`, want: []string{"sh", "-c", `a\b ` + "`x`", "~/{}", "a{b,c}", "*"}},
		{in: "ssh {} # note", err: "shell syntax #"},
		{in: "ssh {};", err: "shell syntax ;"},
		{in: "ssh {}\nrm -rf /", err: "a second command"},
		{in: "ssh {} && rm x", err: "shell syntax &&"},
		{in: "ssh {} &", err: "shell syntax &"},
		{in: "ssh {} >log", err: "shell syntax >"},
		{in: "(ssh {})", err: "shell syntax Subshell"},
		{in: "! ssh {}", err: "shell syntax !"},
		{in: "TERM=dumb ssh {}", err: "NAME=value"},
		{in: "ssh $'{}'", err: "shell syntax $"},
		{in: "ssh {}$(id)", err: "shell syntax $("},
		{in: "ssh `id` {}", err: "shell syntax $( or `"},
		{in: "ssh $((1+1)) {}", err: "shell syntax $"},
		{in: `ssh "a$(id)" {}`, err: "expansions"},
		{in: `ssh "{}` + "`id`" + `"`, err: "expansions"},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Split(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Split(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Split(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "two words", "it's", `a"b\c$d` + "`e`", "new\nline", "--env=K=V"} {
		got, err := Split(Quote(s))
		if err != nil && !strings.Contains(s, "$") && !strings.Contains(s, "`") {
			t.Errorf("Split(Quote(%q)): %v", s, err)
			continue
		}
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != s {
			t.Errorf("sh reads Quote(%q) as %q", s, out)
		}
		if got != nil && (len(got) != 1 || got[0] != s) {
			t.Errorf("Split(Quote(%q)) = %q", s, got)
		}
	}
}

func TestTemplate(t *testing.T) {
	if _, err := ParseTemplate("ssh host"); err == nil || !strings.Contains(err.Error(), "no {}") {
		t.Errorf("a template without {} = %v, want an error", err)
	}
	tests := []struct{ tmpl, target, want string }{
		{"ssh -p 2222 {}", "root@n1", `ssh|-p|2222|root@n1|sh -c 'echo it'\''s'`},
		{"/usr/bin/ssh {}", "n1", `/usr/bin/ssh|n1|sh -c 'echo it'\''s'`},
		{"docker exec -i {}", "c1", `docker|exec|-i|c1|sh|-c|echo it's`},
		{"kubectl exec -i {} --", "pod/p", `kubectl|exec|-i|pod/p|--|sh|-c|echo it's`},
		{"env FASTPATH_TARGET={}", "t", `env|FASTPATH_TARGET=t|sh|-c|echo it's`},
	}
	for _, tt := range tests {
		tp, err := ParseTemplate(tt.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(tp.Command(tt.target, "echo it's"), "|"); got != tt.want {
			t.Errorf("%q: Command = %s, want %s", tt.tmpl, got, tt.want)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	for _, bad := range []string{"", "-oProxyCommand=x", "a b", "a\nb"} {
		if CheckTarget(bad) == nil {
			t.Errorf("CheckTarget(%q) accepted", bad)
		}
	}
	for _, good := range []string{"root@10.0.0.1", "node-7", "pod/trainer-0", "ctr_1:rw"} {
		if err := CheckTarget(good); err != nil {
			t.Errorf("CheckTarget(%q): %v", good, err)
		}
	}
}

// fakeFastpath stands in for the fastpath binary: a shell script, so these
// tests exercise the transport, the cache and the receiver without a
// build. It records its runs and arguments in $HOME, prints a doctor
// report and exits with $HOME/exit if present.
const fakeFastpath = `#!/bin/sh
echo run >> "$HOME/runs"
printf '%s\n' "$@" > "$HOME/args"
code=0
[ -f "$HOME/exit" ] && code=$(cat "$HOME/exit")
printf '{"schema":"fastpath.v1","facts":{"schema":"fastpath.v1","tool":"fake","python":{"selected":{"kind":"venv","interpreter":"%s","prefix":"/","site_path":[],"python_h":"","num_distributions":0}}},"findings":[],"models":[]}\n' "$HOME"
exit $code
`

func homes(t *testing.T, n int) []string {
	base := t.TempDir()
	var hs []string
	for i := range n {
		h := filepath.Join(base, fmt.Sprintf("t%03d", i))
		if err := os.Mkdir(h, 0o755); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return hs
}

func countLines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestRunSendsOnceThenReuses(t *testing.T) {
	hs := homes(t, 3)
	if err := os.WriteFile(filepath.Join(hs[1], "exit"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	tp, err := ParseTemplate("env HOME={}")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--env", "NOTE=it's a \"test\" $HOME", "--gpu", "9.0"}
	cfg := Config{Template: tp, Binary: []byte(fakeFastpath), Version: "1.2.3-dev", DoctorArgs: args, Timeout: 20 * time.Second}
	for round, wantSent := range []bool{true, false} {
		rs := Run(context.Background(), cfg, hs)
		for i, r := range rs {
			want := StatusOK
			if i == 1 {
				want = StatusFindings
			}
			if r.Status != want || r.SentBinary != wantSent || r.Doctor == nil {
				t.Fatalf("round %d, %s: status %s sent %v doctor %v (%s; %s), want %s sent %v", round, r.Target, r.Status, r.SentBinary, r.Doctor != nil, r.Error, r.StderrTail, want, wantSent)
			}
			if got := r.Doctor.Facts.Python.Selected.Interpreter; got != hs[i] {
				t.Errorf("%s answered for %q", r.Target, got)
			}
		}
	}
	for _, h := range hs {
		cached := filepath.Join(h, ".cache/fastpath", BuildID("1.2.3-dev", []byte(fakeFastpath)), "fastpath")
		if b, err := os.ReadFile(cached); err != nil || string(b) != fakeFastpath {
			t.Errorf("cache %s: %v", cached, err)
		}
		if n := countLines(t, filepath.Join(h, "runs")); n != 2 {
			t.Errorf("%s ran %d times, want 2", h, n)
		}
		got, _ := os.ReadFile(filepath.Join(h, "args"))
		want := strings.Join(append([]string{"doctor", "--json"}, args...), "\n") + "\n"
		if string(got) != want {
			t.Errorf("arguments on the target:\n%s\nwant:\n%s", got, want)
		}
	}
	// Another build of the same version is a different cache entry.
	cfg.Binary = []byte(fakeFastpath + "# rebuilt\n")
	if rs := Run(context.Background(), cfg, hs[:1]); !rs[0].SentBinary || rs[0].Status != StatusOK {
		t.Errorf("a rebuilt binary was not sent: %+v", rs[0])
	}
}

// TestRunThroughSSHQuoting runs the one-string form a template whose
// program is ssh gets, through a stand-in ssh that does what ssh does with
// its arguments: join them with spaces for the remote shell.
func TestRunThroughSSHQuoting(t *testing.T) {
	bin := t.TempDir()
	fakeSSH := "#!/bin/sh\nHOME=$1; export HOME; shift; exec sh -c \"$*\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fakeSSH), 0o755); err != nil {
		t.Fatal(err)
	}
	tp, err := ParseTemplate(filepath.Join(bin, "ssh") + " {}")
	if err != nil {
		t.Fatal(err)
	}
	hs := homes(t, 1)
	args := []string{"--env", "NOTE=it's; $(touch /tmp/never) \"q\""}
	rs := Run(context.Background(), Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", DoctorArgs: args}, hs)
	if rs[0].Status != StatusOK || !rs[0].SentBinary {
		t.Fatalf("%+v", rs[0])
	}
	got, _ := os.ReadFile(filepath.Join(hs[0], "args"))
	if want := "doctor\n--json\n--env\n" + args[1] + "\n"; string(got) != want {
		t.Errorf("arguments through ssh quoting:\n%s\nwant:\n%s", got, want)
	}
}

func TestRunFailuresDoNotStopOthers(t *testing.T) {
	hs := homes(t, 2)
	bin := t.TempDir()
	// One transport per target, chosen by the target's name.
	transport := "#!/bin/sh\ncase $1 in\n" +
		"*hang) shift; sleep 300 & sleep 300 ;;\n" + // a hung connection and a child holding the pipes
		"*refuse) echo 'ssh: connect to host 127.0.0.1 port 9: Connection refused' >&2; exit 255 ;;\n" +
		"*garbage) echo 'not json'; exit 0 ;;\n" +
		"*) HOME=$1; export HOME; shift; exec \"$@\" ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(bin, "via"), []byte(transport), 0o755); err != nil {
		t.Fatal(err)
	}
	tp, err := ParseTemplate(filepath.Join(bin, "via") + " {}")
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{hs[0], "x-hang", "x-refuse", "x-garbage", hs[1]}
	cfg := Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", Timeout: 2 * time.Second, Parallel: 5}
	rs := Run(context.Background(), cfg, targets)
	want := []struct{ status, reason string }{
		{StatusOK, ""},
		{StatusTimeout, "no answer within 2s"},
		{StatusFailed, "Connection refused"},
		{StatusFailed, "without a doctor report"},
		{StatusOK, ""},
	}
	for i, w := range want {
		r := rs[i]
		if r.Target != targets[i] || r.Status != w.status || !strings.Contains(r.Error, w.reason) {
			t.Errorf("%s: status %s error %q, want %s %q", r.Target, r.Status, r.Error, w.status, w.reason)
		}
	}
	if !strings.Contains(rs[2].StderrTail, "Connection refused") || rs[2].ExitCode != 255 {
		t.Errorf("refused target: exit %d, stderr %q", rs[2].ExitCode, rs[2].StderrTail)
	}
}

func TestRunWrongArch(t *testing.T) {
	tp, _ := ParseTemplate("env HOME={}")
	rs := Run(context.Background(), Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", GOARCH: "s390x"}, homes(t, 1))
	if rs[0].Status != StatusFailed || !strings.Contains(rs[0].Error, "this fastpath is for s390x") || rs[0].SentBinary {
		t.Errorf("%+v", rs[0])
	}
}

// TestRun200Targets: every one of 200 targets gets the binary exactly
// once, through 16 transports at a time, and answers.
func TestRun200Targets(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 40 // still more targets than transports at a time
	}
	hs := homes(t, n)
	tp, _ := ParseTemplate("env HOME={}")
	var calls int
	cfg := Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", Parallel: 16,
		Progress: func(done, total int, r *Result) { calls++ }}
	rs := Run(context.Background(), cfg, hs)
	sent := 0
	for _, r := range rs {
		if r.Status != StatusOK {
			t.Fatalf("%s: %s %s", r.Target, r.Status, r.Error)
		}
		if r.SentBinary {
			sent++
		}
	}
	if sent != n || calls != n {
		t.Errorf("sent %d binaries, %d progress calls; want %d each", sent, calls, n)
	}
	for _, h := range hs {
		if n := countLines(t, filepath.Join(h, "runs")); n != 1 {
			t.Errorf("%s ran %d times", h, n)
		}
	}
}

func TestRunRecordsDuration(t *testing.T) {
	tp, _ := ParseTemplate("sh -c 'sleep 0.2; exit 3' {}")
	rs := Run(context.Background(), Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v"}, []string{"t"})
	if rs[0].Seconds <= 0 || rs[0].Status != StatusFailed || rs[0].Error != "exit 3" {
		t.Errorf("%+v", rs[0])
	}
}

// hostileTargets are target names a careless or hostile target list holds:
// shell syntax, options, globs, paths out of place, control characters.
var hostileTargets = []string{
	"c1;touch${IFS}/tmp/pwned;true", "c1$(touch /tmp/pwned)", "c1`touch /tmp/pwned`", "c1|sh", "c1&&id", "c1&",
	"c1>x", "c1<x", "'c1'", `"c1"`, "c1\\", "c1 c2", "c1\tc2", "c1\nc2", "c1\x00", "c1\x1b[2J", "-oProxyCommand=sh",
	"--", "~root", "c*", "c?", "[c1]", "c{1,2}", "c1#", "c1!", "c1=x", "a@b@c", "@host", "user@", "pod//x", "/../etc",
	"node/..", ".hidden", "h\u00e9te", "c1%0a", "c1,c2", "c1+c2", "(c1)", strings.Repeat("a", MaxTargetLen+1),
}

// TestF4TargetInjection is issue 11's F4: a target substituted into a
// template whose words an ssh server hands to a shell ran `touch`. Every
// hostile target is refused by the grammar, and were one to slip past it,
// the template shell-quotes it in the words that reach a shell.
func TestF4TargetInjection(t *testing.T) {
	for _, bad := range hostileTargets {
		if err := CheckTarget(bad); err == nil {
			t.Errorf("CheckTarget(%q) accepted", bad)
		}
	}
	for _, good := range []string{"gpu-01", "root@10.0.0.1", "ubuntu@gpu-01.example.com", "::1", "pod/trainer-0", "ml-team/trainer-0",
		"101", "3f2a9c1b0d4e", "ctr_1:rw", "/tmp/fleet/t001", "svc_ml@node-7", strings.Repeat("a", MaxTargetLen)} {
		if err := CheckTarget(good); err != nil {
			t.Errorf("CheckTarget(%q): %v", good, err)
		}
	}

	// The reproduction: --via 'ssh gw env CONTAINER={}', through a
	// stand-in ssh that does what sshd does: drop the destination and hand
	// the rest, joined by spaces, to a shell.
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	fakeSSH := "#!/bin/sh\nshift 5; exec sh -c \"$*\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fakeSSH), 0o755); err != nil {
		t.Fatal(err)
	}
	pwned := filepath.Join(dir, "pwned")
	tp, err := ParseTemplate(filepath.Join(bin, "ssh") + " -p 22 -o BatchMode=yes gw env CONTAINER={}")
	if err != nil {
		t.Fatal(err)
	}
	attack := "c1;touch${IFS}" + pwned + ";true"
	rs := Run(context.Background(), Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", Timeout: 5 * time.Second}, []string{attack, "c2$(touch " + pwned + ")"})
	for _, r := range rs {
		if r.Status != StatusFailed || !strings.Contains(r.Error, "a target is [user@]host") {
			t.Errorf("%q: %s %q, want refused by the grammar", r.Target, r.Status, r.Error)
		}
	}
	// Below the grammar: the argv itself, run through the stand-in ssh.
	for _, hostile := range []string{attack, "c2$(touch " + pwned + ")", "c3`touch " + pwned + "`", "c4'; touch " + pwned + "; '"} {
		argv := tp.Command(hostile, `printf '%s' "$CONTAINER"`)
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatalf("%q: %v", hostile, err)
		}
		if string(out) != hostile {
			t.Errorf("the remote shell read target %q as %q", hostile, out)
		}
	}
	// A local shell's -c script is shell text too.
	sh, err := ParseTemplate("sh -c 'printf %s {}; exec \"$@\"' x")
	if err != nil {
		t.Fatal(err)
	}
	argv := sh.Command(attack, "true")
	if out, err := exec.Command(argv[0], argv[1:]...).Output(); err != nil || string(out) != attack {
		t.Errorf("sh -c read %q as %q (%v)", attack, out, err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a target ran a command")
	}
}

func TestSSHDestination(t *testing.T) {
	for _, tt := range []struct {
		tmpl string
		want int
	}{
		{"ssh {}", 1}, {"ssh -p 2222 {}", 3}, {"ssh -p2222 -tt {}", 3}, {"ssh -o ProxyJump=bastion -i key gw env X={}", 5},
		{"ssh -46 {}", 2}, {"ssh -- {}", 2}, {"ssh -l root {} true", 3},
	} {
		words, _ := Split(tt.tmpl)
		if got := sshDestination(words); got != tt.want {
			t.Errorf("%q: destination %d, want %d", tt.tmpl, got, tt.want)
		}
	}
}

// TestRemoteOutputCap: a target that prints without end is cut at
// MaxStdout, fails with the cap named, and never costs more memory.
func TestRemoteOutputCap(t *testing.T) {
	tp, _ := ParseTemplate("sh -c 'yes fastpath-is-not-this; true' {}")
	rs := Run(context.Background(), Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", Timeout: 20 * time.Second}, []string{"t"})
	if rs[0].Status != StatusFailed || !strings.Contains(rs[0].Error, "4 MiB cap") {
		t.Errorf("%+v", rs[0])
	}
}

// pidsWithArg lists processes whose command line holds arg.
func pidsWithArg(t *testing.T, arg string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		// A zombie has an empty command line and no longer runs.
		if strings.Contains(string(b), arg) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestTimeoutKillsSetsidGrandchild: a transport whose child moved to a
// session of its own (setsid) is still killed at the timeout, found by
// the mark in its environment.
func TestTimeoutKillsSetsidGrandchild(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	tag := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	tp, _ := ParseTemplate("sh -c 'setsid sleep " + tag + " & setsid sh -c \"sleep " + tag + "\" </dev/null >/dev/null 2>&1 & sleep 300' {}")
	rs := Run(context.Background(), Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", Timeout: 1 * time.Second}, []string{"t"})
	if rs[0].Status != StatusTimeout {
		t.Errorf("%+v", rs[0])
	}
	if left := pidsWithArg(t, "sleep\x00"+tag); len(left) > 0 {
		t.Errorf("processes outlived the timeout: %v", left)
		for _, p := range left {
			pid, _ := strconv.Atoi(p)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestInterruptKillsChildren: cancelling Run (what Ctrl-C and SIGTERM do
// in `fastpath remote`) kills every running transport and its children,
// and starts no more targets.
func TestInterruptKillsChildren(t *testing.T) {
	tag := fmt.Sprintf("%d.%d", 2000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	dir := t.TempDir()
	tp, _ := ParseTemplate("sh -c 'touch " + dir + "/$0; setsid sleep " + tag + " & sleep " + tag + "' {}")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 200; i++ {
			if ents, _ := os.ReadDir(dir); len(ents) >= 2 {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	rs := Run(ctx, Config{Template: tp, Binary: []byte(fakeFastpath), Version: "v", Parallel: 2, Timeout: time.Minute}, []string{"a", "b", "c", "d"})
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Run took %s after the interrupt", d)
	}
	for i, r := range rs {
		want := "interrupted; its processes were killed"
		if i >= 2 {
			want = "not started: interrupted"
		}
		if r.Status != StatusFailed || r.Error != want {
			t.Errorf("%s: %s %q, want failed %q", r.Target, r.Status, r.Error, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("%d targets started, want 2", len(ents))
	}
	if left := pidsWithArg(t, "sleep\x00"+tag); len(left) > 0 {
		t.Errorf("processes outlived the interrupt: %v", left)
		for _, p := range left {
			pid, _ := strconv.Atoi(p)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
