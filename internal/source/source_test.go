package source

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tree builds a root with the link shapes real rootfs copies have.
func tree(t *testing.T) (string, Source) {
	t.Helper()
	dir := t.TempDir()
	mk := func(p, content string) {
		h := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(p, target string) {
		h := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, h); err != nil {
			t.Fatal(err)
		}
	}
	mk("usr/local/cuda-12.8/bin/nvcc", "nvcc")
	ln("etc/alternatives/cuda", "/usr/local/cuda-12.8") // absolute: re-rooted
	ln("usr/local/cuda", "/etc/alternatives/cuda")
	ln("usr/bin/up", "../../../../../../etc/passwd") // climbs: clamped at /
	mk("etc/passwd", "root:x:0:0::/root:/bin/sh\n")
	ln("loop/a", "b")
	ln("loop/b", "a")
	ln("dangling", "/nowhere/at/all")
	ln("lib64", "usr/lib64")
	mk("usr/lib64/libc.so.6", "elf")
	// Outside the root: a link to it must never reach it.
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln("escape", outside)
	src, err := Root(dir, Env{"PATH": "/usr/local/cuda/bin:relative/bin:/usr/bin"})
	if err != nil {
		t.Fatal(err)
	}
	return outside, src
}

func TestResolveInsideRoot(t *testing.T) {
	outside, src := tree(t)
	for _, tc := range []struct{ in, want string }{
		{"/usr/local/cuda/bin/nvcc", "/usr/local/cuda-12.8/bin/nvcc"},
		{"/usr/local/cuda", "/usr/local/cuda-12.8"},
		{"/usr/bin/up", "/etc/passwd"},
		{"/lib64/libc.so.6", "/usr/lib64/libc.so.6"},
		{"/usr/local/cuda/../cuda-12.8/bin", "/usr/local/cuda-12.8/bin"},
		{"/../../..", "/"},
		{"/dangling", "/nowhere/at/all"},
		{"/escape", outside}, // re-rooted: the same path inside the root, which does not exist there
	} {
		got, err := src.Resolve(tc.in)
		if err != nil {
			t.Errorf("Resolve(%s): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Resolve(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if b, err := ReadFile(src, "/usr/bin/up", 1<<10); err != nil || !strings.HasPrefix(string(b), "root:") {
		t.Errorf("reading through a climbing link: %q, %v", b, err)
	}
	if b, err := ReadFile(src, "/escape", 1<<10); err == nil {
		t.Fatalf("a link out of the root was followed: read %q", b)
	}
}

func TestLoopsAndDanglingLinks(t *testing.T) {
	_, src := tree(t)
	_, err := src.Stat("/loop/a")
	if !errors.Is(err, syscall.ELOOP) {
		t.Errorf("Stat of a link loop: %v, want ELOOP", err)
	}
	if _, err := src.Open("/loop/a/x"); err == nil {
		t.Error("Open through a loop succeeded")
	}
	if _, err := src.Stat("/dangling"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a dangling link: %v, want not-exist", err)
	}
	fi, err := src.Lstat("/dangling")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat of a dangling link: %v %v", fi, err)
	}
	if tgt, err := src.ReadLink("/usr/local/cuda"); err != nil || tgt != "/etc/alternatives/cuda" {
		t.Errorf("ReadLink = %q, %v", tgt, err)
	}
	if _, err := src.Resolve("relative/path"); err == nil {
		t.Error("relative paths must be refused")
	}
}

func TestLookPathGlobAndExec(t *testing.T) {
	_, src := tree(t)
	p, ok := LookPath(src, src.Env().Get("PATH"), "nvcc")
	if !ok || p != "/usr/local/cuda/bin/nvcc" {
		t.Errorf("LookPath = %q, %v (want the unresolved PATH hit)", p, ok)
	}
	if _, ok := LookPath(src, src.Env().Get("PATH"), "gcc"); ok {
		t.Error("LookPath found a missing program")
	}
	got := Glob(src, "/usr/local/cuda*")
	if !slices.Equal(got, []string{"/usr/local/cuda", "/usr/local/cuda-12.8"}) {
		t.Errorf("Glob = %v", got)
	}
	if got := Glob(src, "/usr/local/cuda*/bin/nvcc"); len(got) != 2 {
		t.Errorf("Glob through a link = %v", got)
	}
	if _, err := src.Exec(context.Background(), "true"); !errors.Is(err, ErrNotLive) {
		t.Errorf("Exec under a root: %v, want ErrNotLive", err)
	}
	if src.Info().Kind != KindRoot || src.Info().Live {
		t.Errorf("Info = %+v", src.Info())
	}
	if src.Env().Get("HOME") != "/root" {
		t.Errorf("a root's default HOME = %q", src.Env().Get("HOME"))
	}
}

func TestReadFileCap(t *testing.T) {
	_, src := tree(t)
	if _, err := ReadFile(src, "/etc/passwd", 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v", err)
	}
	if _, err := ReadFile(src, "/usr/local", 1<<20); err == nil {
		t.Error("reading a folder succeeded")
	}
}

func TestUnreadableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every folder; permission errors cannot be made here")
	}
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	if err := os.MkdirAll(filepath.Join(locked, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	src, _ := Root(dir, nil)
	if _, err := src.ReadDir("/locked"); err == nil {
		t.Error("ReadDir of an unreadable folder succeeded")
	}
}

func TestHostSource(t *testing.T) {
	src, err := Host(ProcessEnv(Env{"FASTPATH_TEST": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if !src.Info().Live || src.Env().Get("FASTPATH_TEST") != "1" {
		t.Errorf("host source: %+v", src.Info())
	}
	out, err := src.Exec(context.Background(), "sh", "-c", "echo $FASTPATH_TEST")
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Errorf("Exec on the host: %q, %v", out, err)
	}
	if _, err := ParseEnv([]string{"NOEQUALS"}); err == nil {
		t.Error("ParseEnv accepted a value without =")
	}
}
