// Package osinfo collects the operating system's facts: os-release, the
// architecture, glibc's version, CPUs and memory.
package osinfo

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/elfdyn"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// maxTextFile caps what is read of os-release and /proc files; cpuinfo of a
// 512-CPU machine is under 1 MiB.
const maxTextFile = 8 << 20

// maxLibc caps the size of a libc.so.6 worth reading (glibc's is ~2 MiB).
const maxLibc = 64 << 20

// maxSection caps an ELF section read for version definitions (libc's
// .dynsym is ~70 KiB).
const maxSection = 16 << 20

// Collect reads the OS facts of src.
func Collect(ctx context.Context, src source.Source) (facts.OS, []string) {
	c := collector{src: src}
	c.osRelease()
	c.o.Arch = c.archFromBinaries()
	c.libc()
	if c.o.Arch == "" && src.Info().Live {
		c.o.Arch = goArch(runtime.GOARCH)
	}
	c.proc()
	return c.o, c.warns
}

type collector struct {
	src   source.Source
	o     facts.OS
	warns []string
}

func (c *collector) warn(format string, args ...any) {
	c.warns = append(c.warns, "osinfo: "+fmt.Sprintf(format, args...))
}

// osRelease reads os-release(5): /etc/os-release, else /usr/lib/os-release.
func (c *collector) osRelease() {
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		b, err := source.ReadFile(c.src, p, maxTextFile)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				c.warn("%s: %v", p, err)
			}
			continue
		}
		kv := ParseOSRelease(string(b))
		c.o.ID, c.o.VersionID, c.o.PrettyName, c.o.IDLike = kv["ID"], kv["VERSION_ID"], kv["PRETTY_NAME"], kv["ID_LIKE"]
		return
	}
	c.warn("no /etc/os-release or /usr/lib/os-release")
}

// ParseOSRelease reads os-release's shell-style KEY=value lines: values may
// be double- or single-quoted, with backslash escapes inside double quotes.
func ParseOSRelease(text string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			continue
		}
		kv[strings.TrimSpace(k)] = unquote(strings.TrimSpace(v))
	}
	return kv
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("\"\\$`", v[i+1]) >= 0 {
				i++
			}
			b.WriteByte(v[i])
		}
		return b.String()
	}
	return v
}

// archBinaries are programs nearly every Linux image has: their ELF header
// names the architecture the image was built for.
var archBinaries = []string{"/bin/sh", "/usr/bin/env", "/bin/busybox", "/usr/bin/python3"}

func (c *collector) archFromBinaries() string {
	for _, p := range archBinaries {
		if a := c.elfArch(p); a != "" {
			return a
		}
	}
	return ""
}

// elfArch reads the architecture from an ELF header; "" for anything else
// (fixture stand-ins, scripts, missing files).
func (c *collector) elfArch(p string) string {
	f, err := c.src.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	a, _ := ELFArch(f)
	return a
}

// ELFArch reads e_machine (and the class and byte order it depends on) from
// the first 20 bytes of an ELF file and names it as `uname -m` does.
func ELFArch(r io.ReaderAt) (string, error) {
	var h [20]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return "", err
	}
	if string(h[:4]) != elf.ELFMAG {
		return "", errors.New("not an ELF file")
	}
	var bo binary.ByteOrder
	switch elf.Data(h[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		bo = binary.LittleEndian
	case elf.ELFDATA2MSB:
		bo = binary.BigEndian
	default:
		return "", errors.New("ELF byte order unknown")
	}
	class := elf.Class(h[elf.EI_CLASS])
	m := elf.Machine(bo.Uint16(h[18:]))
	switch {
	case m == elf.EM_X86_64 && class == elf.ELFCLASS64:
		return "x86_64", nil
	case m == elf.EM_AARCH64:
		return "aarch64", nil
	case m == elf.EM_386:
		return "i686", nil
	case m == elf.EM_ARM:
		return "armv7l", nil
	case m == elf.EM_PPC64 && bo == binary.LittleEndian:
		return "ppc64le", nil
	case m == elf.EM_PPC64:
		return "ppc64", nil
	case m == elf.EM_S390:
		return "s390x", nil
	case m == elf.EM_RISCV && class == elf.ELFCLASS64:
		return "riscv64", nil
	}
	return "", fmt.Errorf("ELF machine %v not known", m)
}

// goArch names Go's GOARCH as `uname -m` does.
func goArch(a string) string {
	switch a {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	}
	return a
}

// libcDirs are where distributions put libc.so.6: Debian/Ubuntu's multiarch
// folders, Fedora/RHEL's lib64, and plain lib (Arch, older images).
var libcDirs = map[string][]string{
	"x86_64":  {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"},
	"aarch64": {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64"},
	"":        {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"},
}

// libc finds the C library: glibc's libc.so.6 (its version read from the
// symbol versions it defines), else musl's dynamic loader.
func (c *collector) libc() {
	seen := map[string]bool{}
	for _, dir := range append(libcDirs[c.o.Arch], libcDirs[""]...) {
		p := path.Join(dir, "libc.so.6")
		if seen[p] {
			continue
		}
		seen[p] = true
		fi, err := c.src.Stat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		v, err := c.glibcOf(p, fi.Size())
		if err != nil {
			c.warn("%s: %v", p, err)
			return
		}
		c.o.Glibc, c.o.Libc = v, p
		if c.o.Arch == "" {
			c.o.Arch = c.elfArch(p)
		}
		return
	}
	for _, pattern := range []string{"/lib/ld-musl-*.so.1", "/usr/lib/ld-musl-*.so.1"} {
		if m := source.Glob(c.src, pattern); len(m) > 0 {
			c.o.Libc = "musl"
			if c.o.Arch == "" {
				c.o.Arch = c.elfArch(m[0])
			}
			return
		}
	}
}

func (c *collector) glibcOf(p string, size int64) (string, error) {
	if size > maxLibc {
		return "", fmt.Errorf("%d bytes: larger than any libc", size)
	}
	f, err := c.src.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return GlibcVersion(f, size)
}

// GlibcVersion reads glibc's version from a libc.so.6: the newest GLIBC_2.N
// symbol version it defines (.gnu.version_d). It reads only the sections
// that takes, refuses sections larger than the file or than any libc's, and
// turns any failure of the ELF reader into an error.
func GlibcVersion(r io.ReaderAt, size int64) (v string, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = "", fmt.Errorf("malformed ELF file: %v", p)
		}
	}()
	if err := elfdyn.CheckHeader(r, size); err != nil { // F3: before debug/elf trusts the counts
		return "", err
	}
	f, err := elf.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, typ := range []elf.SectionType{elf.SHT_DYNSYM, elf.SHT_GNU_VERSYM, elf.SHT_GNU_VERDEF} {
		s := f.SectionByType(typ)
		if s == nil {
			return "", fmt.Errorf("no %v section: not a shared library with symbol versions", typ)
		}
		if err := sectionFits(f, s, size); err != nil {
			return "", err
		}
		if int(s.Link) >= len(f.Sections) {
			return "", fmt.Errorf("%s: link %d out of range", s.Name, s.Link)
		}
		if s.Link != 0 {
			if err := sectionFits(f, f.Sections[s.Link], size); err != nil {
				return "", err
			}
		}
	}
	defs, err := f.DynamicVersions()
	if err != nil {
		return "", err
	}
	best, bestNums := "", []int(nil)
	for _, d := range defs {
		nums, ok := glibcNumbers(d.Name)
		if ok && (bestNums == nil || numsLess(bestNums, nums)) {
			best, bestNums = strings.TrimPrefix(d.Name, "GLIBC_"), nums
		}
	}
	if best == "" {
		return "", errors.New("defines no GLIBC_ symbol versions: not glibc")
	}
	return best, nil
}

func sectionFits(f *elf.File, s *elf.Section, size int64) error {
	if s.Type == elf.SHT_NOBITS {
		return fmt.Errorf("section %s holds no data", s.Name)
	}
	if s.Size > maxSection || s.Offset > uint64(size) || s.Size > uint64(size)-s.Offset {
		return fmt.Errorf("section %s: %d bytes at %d do not fit the file", s.Name, s.Size, s.Offset)
	}
	return nil
}

// glibcNumbers reads GLIBC_2.2.5 as [2 2 5]; GLIBC_PRIVATE is not a version.
func glibcNumbers(name string) ([]int, bool) {
	rest, ok := strings.CutPrefix(name, "GLIBC_")
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || len(parts) > 4 {
		return nil, false
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 4 {
			return nil, false
		}
		nums[i] = n
	}
	return nums, true
}

func numsLess(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// proc reads the kernel, CPUs and memory from /proc and /sys. A root's /proc
// is usually empty (a rootfs copy): then they stay unknown, silently.
func (c *collector) proc() {
	if b, err := source.ReadFile(c.src, "/proc/sys/kernel/osrelease", maxTextFile); err == nil {
		c.o.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := source.ReadFile(c.src, "/proc/cpuinfo", maxTextFile); err == nil {
		c.o.CPUs = CountCPUInfo(string(b))
	}
	if c.o.CPUs == 0 {
		if b, err := source.ReadFile(c.src, "/sys/devices/system/cpu/online", maxTextFile); err == nil {
			c.o.CPUs = CountCPUList(string(b))
		}
	}
	if b, err := source.ReadFile(c.src, "/proc/meminfo", maxTextFile); err == nil {
		c.o.MemTotal, c.o.MemAvail = ParseMeminfo(string(b))
	}
}

// CountCPUInfo counts the "processor : N" stanzas of /proc/cpuinfo.
func CountCPUInfo(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "processor" {
			n++
		}
	}
	return n
}

// CountCPUList counts a kernel CPU list ("0-7,16-23", "0"); 0 when it is
// not one.
func CountCPUList(text string) int {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(text), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<20 {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// ParseMeminfo reads MemTotal and MemAvailable (kB in the file) as bytes.
func ParseMeminfo(text string) (total, avail int64) {
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "MemTotal" && k != "MemAvailable") {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 || n > 1<<52 {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		if k == "MemTotal" {
			total = n
		} else {
			avail = n
		}
	}
	return total, avail
}
