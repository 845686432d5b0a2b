package osinfo

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/google/go-cmp/cmp"
)

const meminfo = "MemTotal:       263842112 kB\nMemFree:        12345678 kB\nMemAvailable:   250000000 kB\nBuffers:          102400 kB\n"

func cpuinfo(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("processor\t: " + string(rune('0'+i)) + "\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu vme de pse\n\n")
	}
	return b.String()
}

func TestCollect(t *testing.T) {
	tests := []struct {
		name  string
		tree  func(tr *fixture.Tree)
		want  facts.OS
		warns []string
	}{
		{
			name: "Ubuntu 24.04, merged /usr, with a /proc",
			tree: func(tr *fixture.Tree) {
				tr.Symlink("/bin", "usr/bin").Symlink("/lib", "usr/lib").Symlink("/lib64", "usr/lib64")
				tr.File("/usr/lib/os-release", "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nVERSION=\"24.04.3 LTS (Noble Numbat)\"\nID=ubuntu\nID_LIKE=debian\n")
				tr.Symlink("/etc/os-release", "../usr/lib/os-release")
				tr.ELFExec("/usr/bin/dash", elf.EM_X86_64).Symlink("/usr/bin/sh", "dash")
				tr.Libc("/usr/lib/x86_64-linux-gnu/libc.so.6", elf.EM_X86_64, "2.39")
				tr.File("/proc/cpuinfo", cpuinfo(4)).File("/proc/meminfo", meminfo).File("/proc/sys/kernel/osrelease", "6.8.0-87-generic\n")
			},
			want: facts.OS{ID: "ubuntu", VersionID: "24.04", IDLike: "debian", PrettyName: "Ubuntu 24.04.3 LTS", Arch: "x86_64", Glibc: "2.39",
				Libc: "/lib/x86_64-linux-gnu/libc.so.6", Kernel: "6.8.0-87-generic", CPUs: 4, MemTotal: 263842112 * 1024, MemAvail: 250000000 * 1024},
		},
		{
			name: "arm64 rootfs without a shell; empty /proc",
			tree: func(tr *fixture.Tree) {
				tr.OSRelease("ubuntu", "22.04", "Ubuntu 22.04.5 LTS").Dir("/proc")
				tr.Libc("/lib/aarch64-linux-gnu/libc.so.6", elf.EM_AARCH64, "2.35")
			},
			want: facts.OS{ID: "ubuntu", VersionID: "22.04", PrettyName: "Ubuntu 22.04.5 LTS", Arch: "aarch64", Glibc: "2.35", Libc: "/lib/aarch64-linux-gnu/libc.so.6"},
		},
		{
			name: "RHEL 9: lib64, os-release in /usr/lib only, CPUs from /sys",
			tree: func(tr *fixture.Tree) {
				tr.File("/usr/lib/os-release", "NAME=\"Red Hat Enterprise Linux\"\nVERSION_ID=\"9.4\"\nID=\"rhel\"\nID_LIKE=\"fedora\"\nPRETTY_NAME=\"Red Hat Enterprise Linux 9.4 (Plow)\"\n")
				tr.Symlink("/lib64", "usr/lib64").Libc("/usr/lib64/libc.so.6", elf.EM_X86_64, "2.34")
				tr.ELFExec("/usr/bin/env", elf.EM_X86_64)
				tr.File("/sys/devices/system/cpu/online", "0-63,128-191\n")
			},
			want: facts.OS{ID: "rhel", VersionID: "9.4", IDLike: "fedora", PrettyName: "Red Hat Enterprise Linux 9.4 (Plow)", Arch: "x86_64", Glibc: "2.34", Libc: "/lib64/libc.so.6", CPUs: 128},
		},
		{
			name: "Alpine: musl",
			tree: func(tr *fixture.Tree) {
				tr.File("/etc/os-release", "NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=3.22.1\nPRETTY_NAME=\"Alpine Linux v3.22\"\n")
				tr.ELFExec("/bin/busybox", elf.EM_AARCH64).Symlink("/bin/sh", "/bin/busybox")
				tr.ELFExec("/lib/ld-musl-aarch64.so.1", elf.EM_AARCH64).Symlink("/lib/libc.musl-aarch64.so.1", "ld-musl-aarch64.so.1")
			},
			want: facts.OS{ID: "alpine", VersionID: "3.22.1", PrettyName: "Alpine Linux v3.22", Arch: "aarch64", Libc: "musl"},
		},
		{
			name: "fixture stand-ins, a junk libc, no os-release",
			tree: func(tr *fixture.Tree) {
				tr.Exec("/bin/sh", "\x7fELF fixture sh\n")
				tr.File("/lib/x86_64-linux-gnu/libc.so.6", "\x7fELF fixture libc\n")
			},
			want:  facts.OS{},
			warns: []string{"osinfo: no /etc/os-release or /usr/lib/os-release", "osinfo: /lib/x86_64-linux-gnu/libc.so.6: "},
		},
		{
			name: "a libc without symbol versions is not glibc; a looping link is skipped",
			tree: func(tr *fixture.Tree) {
				tr.OSRelease("debian", "12", "Debian GNU/Linux 12 (bookworm)")
				tr.Symlink("/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu")
				tr.File("/usr/lib64/libc.so.6", string(fixture.ELF{Machine: elf.EM_X86_64, SOName: "libc.so.6", Versions: []string{"MUSL_1"}}.Bytes()))
			},
			want:  facts.OS{ID: "debian", VersionID: "12", PrettyName: "Debian GNU/Linux 12 (bookworm)"},
			warns: []string{"osinfo: /usr/lib64/libc.so.6: defines no GLIBC_ symbol versions"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := fixture.New(t.TempDir())
			tt.tree(tr)
			if tr.Err() != nil {
				t.Fatal(tr.Err())
			}
			src, err := source.Root(tr.Root, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, warns := Collect(context.Background(), src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("OS facts (-want +got):\n%s", diff)
			}
			if len(warns) != len(tt.warns) {
				t.Fatalf("warnings %q, want %q", warns, tt.warns)
			}
			for i := range warns {
				if !strings.HasPrefix(warns[i], tt.warns[i]) {
					t.Errorf("warning %q, want %q...", warns[i], tt.warns[i])
				}
			}
		})
	}
}

// TestHostGlibc reads this machine's libc.so.6 and compares with what its
// glibc says of itself (`ldd --version`).
func TestHostGlibc(t *testing.T) {
	ldd, err := exec.Command("ldd", "--version").Output()
	if err != nil {
		t.Skipf("ldd --version: %v (not a glibc host)", err)
	}
	m := regexp.MustCompile(`(?m)^ldd .* ([0-9]+\.[0-9]+)$`).FindSubmatch(ldd)
	if m == nil {
		t.Skipf("ldd --version says %q: not glibc's ldd", firstLine(string(ldd)))
	}
	src, err := source.Host(source.ProcessEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	o, warns := Collect(context.Background(), src)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	if o.Glibc != string(m[1]) {
		t.Errorf("glibc %q from %s, ldd --version says %s", o.Glibc, o.Libc, m[1])
	}
	if o.Arch != goArch(runtime.GOARCH) {
		t.Errorf("arch %q, this binary is %s", o.Arch, runtime.GOARCH)
	}
	if o.Kernel == "" || o.CPUs < 1 || o.MemTotal <= 0 || o.ID == "" {
		t.Errorf("host facts incomplete: %+v", o)
	}
	if want, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil && o.Kernel != strings.TrimSpace(string(want)) {
		t.Errorf("kernel %q, /proc says %q", o.Kernel, want)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func TestGlibcVersion(t *testing.T) {
	tests := []struct {
		name    string
		file    []byte
		want    string
		wantErr bool
	}{
		{"x86_64 2.39", fixture.ELF{Machine: elf.EM_X86_64, SOName: "libc.so.6", Versions: fixture.GlibcVersions(elf.EM_X86_64, "2.39")}.Bytes(), "2.39", false},
		{"aarch64 2.17 only", fixture.ELF{Machine: elf.EM_AARCH64, SOName: "libc.so.6", Versions: fixture.GlibcVersions(elf.EM_AARCH64, "2.17")}.Bytes(), "2.17", false},
		{"order does not matter, micro versions count", fixture.ELF{Machine: elf.EM_X86_64, Versions: []string{"GLIBC_2.28", "GLIBC_PRIVATE", "GLIBC_2.3.4", "GLIBC_2.28.1", "GLIBC_2.9", "GLIBC_X.1"}}.Bytes(), "2.28.1", false},
		{"no versions", fixture.ELF{Machine: elf.EM_X86_64}.Bytes(), "", true},
		{"header only", fixture.ELF{Machine: elf.EM_X86_64, Versions: []string{"GLIBC_2.39"}}.Bytes()[:64], "", true},
		{"truncated", fixture.ELF{Machine: elf.EM_X86_64, Versions: []string{"GLIBC_2.39"}}.Bytes()[:200], "", true},
		{"not ELF", []byte("#!/bin/sh\necho hi\n"), "", true},
		{"empty", nil, "", true},
	}
	for _, tt := range tests {
		got, err := GlibcVersion(bytes.NewReader(tt.file), int64(len(tt.file)))
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("%s: GlibcVersion = %q, %v; want %q (error %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestELFArch(t *testing.T) {
	tests := []struct {
		file []byte
		want string
	}{
		{fixture.ELF{Machine: elf.EM_X86_64}.Bytes(), "x86_64"},
		{fixture.ELF{Machine: elf.EM_AARCH64}.Bytes(), "aarch64"},
		{fixture.ELF{Machine: elf.EM_PPC64}.Bytes(), "ppc64le"},
		{fixture.ELF{Machine: elf.EM_SPARCV9}.Bytes(), ""},
		{[]byte("\x7fELF fixture python 3.12.3\n"), ""},
		{[]byte("\x7fELF"), ""},
	}
	for _, tt := range tests {
		if got, _ := ELFArch(bytes.NewReader(tt.file)); got != tt.want {
			t.Errorf("ELFArch(%q...) = %q, want %q", tt.file[:min(len(tt.file), 20)], got, tt.want)
		}
	}
}

func TestParseOSRelease(t *testing.T) {
	got := ParseOSRelease("# comment\nNAME=\"Fedora Linux\"\nVERSION_ID=42\nID='fedora'\nPRETTY_NAME=\"Fedora \\\"Linux\\\" 42 \\$HOME\"\nBROKEN\n=x\n  ID_LIKE = \"rhel\"  \n")
	want := map[string]string{"NAME": "Fedora Linux", "VERSION_ID": "42", "ID": "fedora", "PRETTY_NAME": `Fedora "Linux" 42 $HOME`, "ID_LIKE": "rhel"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCountCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{{"0-7\n", 8}, {"0", 1}, {"0-63,128-191", 128}, {"0,2,4", 3}, {"3-1", 0}, {"x", 0}, {"", 0}, {"0-99999999999", 0}}
	for _, tt := range tests {
		if got := CountCPUList(tt.in); got != tt.want {
			t.Errorf("CountCPUList(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		in           string
		total, avail int64
	}{
		{meminfo, 263842112 * 1024, 250000000 * 1024},
		{"MemTotal: 1024 kB\n", 1 << 20, 0},
		{"MemTotal: lots kB\nMemAvailable:\n", 0, 0},
		{"MemTotal: 99999999999999999999 kB\n", 0, 0},
	}
	for _, tt := range tests {
		total, avail := ParseMeminfo(tt.in)
		if total != tt.total || avail != tt.avail {
			t.Errorf("ParseMeminfo(%q) = %d, %d; want %d, %d", tt.in, total, avail, tt.total, tt.avail)
		}
	}
}

// FuzzGlibcVersion feeds junk to the libc reader: it must return, never
// panic or allocate without bound.
func FuzzGlibcVersion(f *testing.F) {
	good := fixture.ELF{Machine: elf.EM_X86_64, SOName: "libc.so.6", Versions: fixture.GlibcVersions(elf.EM_X86_64, "2.39")}.Bytes()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(fixture.ELF{Machine: elf.EM_AARCH64}.Bytes())
	f.Add([]byte("\x7fELF fixture libc\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := GlibcVersion(bytes.NewReader(b), int64(len(b)))
		if err == nil && v == "" {
			t.Error("no version and no error")
		}
		ELFArch(bytes.NewReader(b))
	})
}
