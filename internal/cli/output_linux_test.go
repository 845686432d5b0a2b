package cli

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ptyPair opens a pseudo-terminal (Linux /dev/ptmx) of cols columns and
// returns its terminal end and a function that returns everything written
// to it so far (read from the other end as it comes, so a long output
// never blocks on a full pty buffer).
func ptyPair(t *testing.T, cols int) (*os.File, func() string) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: 50}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&buf, ptmx) // ends with EIO once pts is closed
		close(done)
	}()
	return pts, func() string {
		pts.Close()
		<-done
		ptmx.Close()
		// The terminal's line discipline writes \r\n for \n.
		return strings.ReplaceAll(buf.String(), "\r\n", "\n")
	}
}

// On a terminal, doctor (here the demo) is coloured and wrapped to the
// terminal's width; NO_COLOR turns the colour off and keeps the width;
// a pipe gets neither colour nor the terminal's width.
func TestTerminalOutput(t *testing.T) {
	t.Setenv("COLUMNS", "")
	for _, c := range []struct {
		name    string
		noColor string
		colour  bool
	}{
		{"terminal", "", true},
		{"NO_COLOR", "1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", c.noColor)
			tty, read := ptyPair(t, 72)
			var errb bytes.Buffer
			if code := Main([]string{"demo"}, strings.NewReader(""), tty, &errb); code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			out := read()
			if got := strings.Contains(out, "\x1b[31m"); got != c.colour {
				t.Errorf("colour %v, want %v:\n%q", got, c.colour, out)
			}
			plain := out
			for _, code := range []string{"\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[34m"} {
				plain = strings.ReplaceAll(plain, code, "")
			}
			if !strings.Contains(plain, "searched 22 places") {
				t.Errorf("not the default level:\n%s", plain)
			}
			for _, l := range strings.Split(plain, "\n") {
				// Only commands may run past the terminal's 72 columns.
				if len([]rune(l)) > 72 && !strings.HasPrefix(strings.TrimSpace(l), "$ ") {
					t.Errorf("line of %d columns on a 72-column terminal: %q", len([]rune(l)), l)
				}
			}
		})
	}
}
