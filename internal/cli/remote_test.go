package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/fleet"
	"github.com/fastpath-dev/fastpath/internal/remote"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// fastpathBinary builds the real, static fastpath: remote sends the running
// binary, and a test binary is not fastpath.
func fastpathBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fastpath-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "fastpath")
		cmd := exec.Command("go", "build", "-o", builtBin, "github.com/fastpath-dev/fastpath/cmd/fastpath")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// runFastpath runs the built binary and returns stdout, stderr and the exit status.
func runFastpath(t *testing.T, args ...string) (string, string, ExitCode) {
	t.Helper()
	cmd := exec.Command(fastpathBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ExitCode(ee.ExitCode())
	}
	t.Fatal(err)
	return "", "", -1
}

func decodeReport(t *testing.T, stdout string) *fleet.Report {
	t.Helper()
	var r fleet.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("remote --json: %v\n%s", err, stdout)
	}
	return &r
}

func target(t *testing.T, r *fleet.Report, name string) remote.Result {
	t.Helper()
	for _, x := range r.Targets {
		if x.Target == name {
			return x
		}
	}
	t.Fatalf("no target %s in %+v", name, r.Targets)
	return remote.Result{}
}

// sshd is a real OpenSSH server on a loopback port, with its own host key
// and a key pair it authorises for the current user.
type sshd struct {
	port   int
	key    string
	user   string
	stderr bytes.Buffer
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startSSHD(t *testing.T) *sshd {
	t.Helper()
	bin, err := exec.LookPath("sshd")
	if err != nil {
		for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
			}
		}
	}
	if err != nil {
		t.Skip("sshd is not installed (apt-get install openssh-server; .ci/run installs it)")
	}
	for _, tool := range []string{"ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (apt-get install openssh-client)", tool)
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if u.Uid == "0" {
		// OpenSSH refuses to start as root without its privilege-separation folder.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	s := &sshd{port: freePort(t), key: filepath.Join(dir, "client_key"), user: u.Username}
	for _, k := range []string{"host_key", "client_key"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, err := os.ReadFile(s.key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile none
PermitRootLogin prohibit-password
`, s.port, filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys"))
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// -D: stay in the foreground, so the test owns the process; -e: log to stderr.
	cmd := exec.Command(bin, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.stderr.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen: %v\n%s", err, s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

func (s *sshd) template() string {
	return fmt.Sprintf("ssh -p %d -i %s -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR {}", s.port, s.key)
}

// TestSSHRemote diagnoses this machine through a real sshd: the binary goes
// over ssh once and is reused on the next run. In the same run a target
// that refuses (nothing listens on 127.0.0.2) and one that hangs (a listener
// on 127.0.0.3 that never speaks) are reported while the real one answers.
func TestSSHRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real sshd and runs ssh: not under -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("loopback addresses beyond 127.0.0.1 are a Linux feature")
	}
	s := startSSHD(t)
	bin := fastpathBinary(t)
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	// ssh logs in as this user: its cache must start without this build.
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(home, ".cache/fastpath", remote.BuildID(Version, exe))
	os.RemoveAll(cache)
	t.Cleanup(func() { os.RemoveAll(cache) })

	silent, err := net.Listen("tcp", fmt.Sprintf("127.0.0.3:%d", s.port))
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.3: %v", err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()

	good := s.user + "@127.0.0.1"
	refused := s.user + "@127.0.0.2"
	hung := s.user + "@127.0.0.3"
	stdout, stderr, code := runFastpath(t, "remote", "--via", s.template(), "--timeout", "10s", "--json", "--gpu", "9.0", good, refused, hung)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d (targets failed)\n%s", code, ExitFailure, stderr)
	}
	if !strings.Contains(stderr, "2 of 3 targets could not be diagnosed") {
		t.Errorf("stderr: %s", stderr)
	}
	r := decodeReport(t, stdout)
	g := target(t, r, good)
	if g.Doctor == nil || !g.SentBinary || (g.Status != "ok" && g.Status != "findings") {
		t.Fatalf("ssh target: %+v", g)
	}
	if g.Doctor.Facts.Tool != Version || !g.Doctor.Facts.Source.Live || g.Doctor.Facts.GPU.Devices[0].Capability != "9.0" {
		t.Errorf("facts from the target: tool %q live %v gpus %+v", g.Doctor.Facts.Tool, g.Doctor.Facts.Source.Live, g.Doctor.Facts.GPU.Devices)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "fastpath")); err != nil || !bytes.Equal(b, exe) {
		t.Errorf("the binary sent over ssh is not this build in %s: %v", cache, err)
	}
	if x := target(t, r, refused); x.Status != "failed" || x.ExitCode != 255 || !strings.Contains(x.StderrTail, "Connection refused") {
		t.Errorf("refused target: %+v", x)
	}
	if x := target(t, r, hung); x.Status != "timeout" || !strings.Contains(x.Error, "no answer within 10s") {
		t.Errorf("hung target: %+v", x)
	}
	if len(r.Diff.Machines) != 1 || r.Diff.Machines[0] != good {
		t.Errorf("compared %v", r.Diff.Machines)
	}

	// Second run: the cached binary is reused, nothing is sent.
	stdout, stderr, code = runFastpath(t, "remote", "--via", s.template(), "--json", "--gpu", "9.0", good)
	if code > ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if g := target(t, decodeReport(t, stdout), good); g.SentBinary || g.Doctor == nil {
		t.Errorf("second run: %+v", g)
	}
}

// seedRoot writes the seed container, optionally with another torch.
func seedRoot(t *testing.T, torch string) string {
	t.Helper()
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	if torch != "" {
		site := filepath.Join(root, fixture.SeedVenv, "lib/python3.12/site-packages")
		old, _ := filepath.Glob(filepath.Join(site, "torch*"))
		for _, o := range old {
			os.RemoveAll(o)
		}
		tr := fixture.New(root)
		tr.Torch(fixture.SeedVenv+"/lib/python3.12/site-packages", torch, "12.6", "cp312")
		if err := tr.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestRemoteLocalTransports: an exec-style transport (env, the shape of
// docker/kubectl exec) over two homes, each diagnosing a seed rootfs passed
// through --root; then a transport that is `sh -c` itself; then --save and
// diff over the saved reports.
func TestRemoteLocalTransports(t *testing.T) {
	root := seedRoot(t, "")
	homes := []string{t.TempDir(), t.TempDir()}
	save := t.TempDir()
	args := []string{"remote", "--via", "env HOME={}", "--root", root, "--gpu", "12.0", "--save", save, "--json"}
	for _, e := range fixture.SeedEnv {
		args = append(args, "--env", e)
	}
	stdout, stderr, code := runFastpath(t, append(args, homes...)...)
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1 (the seed has no nvcc)\n%s", code, stderr)
	}
	r := decodeReport(t, stdout)
	for _, h := range homes {
		x := target(t, r, h)
		if x.Status != "findings" || !x.SentBinary || x.Doctor.Facts.Torch == nil || x.Doctor.Facts.Torch.Version != fixture.SeedTorch {
			t.Errorf("%s: %+v", h, x)
		}
	}
	// sh -c as the transport: the target is the script's $0, our command follows.
	stdout, stderr, code = runFastpath(t, "remote", "--via", `sh -c 'HOME=$0 exec "$@"' {}`, "--root", root, "--gpu", "12.0", "--json", homes[0])
	if code != ExitFindings {
		t.Fatalf("sh -c transport: exit %d\n%s", code, stderr)
	}
	if x := decodeReport(t, stdout).Targets[0]; x.SentBinary || x.Status != "findings" {
		t.Errorf("sh -c transport reusing the cache: %+v", x)
	}
	// The saved reports diff against a machine with another torch.
	other := seedRoot(t, "2.9.1+cu126")
	dargs := []string{"doctor", "--root", other, "--gpu", "12.0", "--json"}
	for _, e := range fixture.SeedEnv {
		dargs = append(dargs, "--env", e)
	}
	otherOut, stderr, code := runFastpath(t, dargs...)
	if code != ExitFindings {
		t.Fatalf("doctor: %d %s", code, stderr)
	}
	otherFile := filepath.Join(save, "other.json")
	if err := os.WriteFile(otherFile, []byte(otherOut), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(save, strings.ReplaceAll(homes[0], "/", "_")+".json")
	stdout, stderr, code = runFastpath(t, "diff", saved, otherFile)
	if code != 0 {
		t.Fatalf("diff: %d %s", code, stderr)
	}
	for _, want := range []string{`(?m)^torch +2\.11\.0\+cu128 +2\.9\.1\+cu126$`, `(?m)^finding torch-arch-unsupported +- +error$`} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("diff lacks %q:\n%s", want, stdout)
		}
	}
}

// TestRemoteSignalKillsChildren: SIGTERM or Ctrl-C (SIGINT) during
// `fastpath remote` kills every transport and its children (a setsid one
// included), prints the report of what each target came to, and exits 2.
func TestRemoteSignalKillsChildren(t *testing.T) {
	bin := fastpathBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		dir := t.TempDir()
		tag := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, int(sig))
		cmd := exec.Command(bin, "remote", "--via", "sh -c 'touch "+dir+"/$0; setsid sleep "+tag+" & sleep "+tag+"' {}", "--json", "a", "b", "c")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 400; i++ {
			if ents, _ := os.ReadDir(dir); len(ents) == 3 {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: fastpath remote still running 30s after the signal", sig)
		}
		if code := ExitCode(cmd.ProcessState.ExitCode()); code != ExitFailure || !strings.Contains(errb.String(), "interrupted") {
			t.Errorf("%v: exit %d, stderr %q", sig, code, errb.String())
		}
		if r := decodeReport(t, out.String()); len(r.Targets) != 3 || r.Targets[0].Error != "interrupted; its processes were killed" {
			t.Errorf("%v: report %+v", sig, r.Targets)
		}
		if left := processesWithArgs("sleep\x00" + tag); len(left) > 0 {
			t.Errorf("%v: processes outlived fastpath remote: %v", sig, left)
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// processesWithArgs lists the processes whose command line holds s.
func processesWithArgs(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), s) {
			out = append(out, pid)
		}
	}
	return out
}
