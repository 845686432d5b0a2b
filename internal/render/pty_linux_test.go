package render

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair (Linux /dev/ptmx) and returns its
// terminal end, sized cols x 24, so Terminal and TerminalWidth are tested
// on a real terminal, not a stand-in.
func openPTY(t *testing.T, cols int) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
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
	t.Cleanup(func() { pts.Close() })
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: 24}); err != nil {
		t.Fatalf("set window size: %v", err)
	}
	return pts
}

func TestTerminalColourAndWidth(t *testing.T) {
	tty := openPTY(t, 72)
	if !Terminal(tty) {
		t.Fatal("a pty is a terminal")
	}
	if w := TerminalWidth(tty); w != 72 {
		t.Errorf("TerminalWidth = %d, want 72", w)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if o := Detect(tty, env(nil), 0, Normal); !o.Color || o.Width != 72 {
		t.Errorf("terminal: %+v, want colour and width 72", o)
	}
	if o := Detect(tty, env(map[string]string{"NO_COLOR": "1", "COLUMNS": "200"}), 0, Normal); o.Color || o.Width != 72 {
		t.Errorf("terminal with NO_COLOR: %+v, want no colour, the terminal's width", o)
	}
	if o := Detect(tty, env(nil), 120, Normal); o.Width != 120 {
		t.Errorf("--width 120 on a terminal: %+v", o)
	}
}
