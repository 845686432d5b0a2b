package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cli"
)

// The README is the first screen a user meets: short, with every detail one
// link away in docs/. These tests keep it short and keep every link there.

const (
	repoRoot          = "../.."
	readmeMaxLines    = 170
	readmeMaxLineLen  = 120
	dockerDestination = "/usr/local/bin/fastpath"
)

// markdownFiles are the pages whose links are checked: the README, SECURITY.md
// and everything under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "SECURITY.md")}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	// [text](target) and ![alt](target); the target ends at a space (a title
	// follows) or the closing parenthesis.
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	linkText   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// proseLines returns the lines of a Markdown file outside fenced code
// blocks, with inline code removed, numbered from 1.
func proseLines(b []byte) map[int]string {
	out := map[int]string{}
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue // an indented code block (or a continuation: links there are rare)
		}
		out[n] = inlineCode.ReplaceAllString(line, "")
	}
	return out
}

// anchors returns the fragments a Markdown renderer gives the file's
// headings (GitHub's rule, with -1, -2 ... for repeats) and explicit anchors.
func anchors(b []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fence = !fence
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		if fence {
			continue
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchor(linkText.ReplaceAllString(m[1], "$1"))
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// pendingPages are pages a branch links before another branch adds them: a
// link to one of them is accepted while it is missing. It is empty on main.
var pendingPages = map[string]bool{}

func TestDocsLinksResolve(t *testing.T) {
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(b)
		return cache[path], nil
	}
	checked := 0
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, file)
		for n, line := range proseLines(b) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						if r, _ := filepath.Rel(repoRoot, dest); pendingPages[filepath.ToSlash(r)] {
							t.Logf("%s:%d: link %q: %s is not here yet (pendingPages)", rel, n, target, r)
							continue
						}
						t.Errorf("%s:%d: link %q: %s does not exist", rel, n, target, path)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				as, err := anchorsOf(dest)
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", rel, n, target, err)
					continue
				}
				if !as[frag] {
					t.Errorf("%s:%d: link %q: no heading with anchor #%s in %s", rel, n, target, frag, path)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d links checked: the scanner is broken", checked)
	}
}

func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move the detail to a page under docs/", len(lines), readmeMaxLines)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > readmeMaxLineLen {
			t.Errorf("README.md:%d: %d characters, at most %d", i+1, n, readmeMaxLineLen)
		}
	}
	// CI's checklist and .ci/run look for the two set-up commands, first.
	text := string(b)
	demo := strings.Index(text, "go run ./cmd/fastpath demo")
	test := strings.Index(text, "go test ./...")
	if demo < 0 || test < 0 {
		t.Fatalf("README.md lacks `go run ./cmd/fastpath demo` or `go test ./...`")
	}
	for _, cmd := range []string{"go install ", "docker ", "curl "} {
		if i := strings.Index(text, cmd); i >= 0 && i < demo {
			t.Errorf("README.md: %q comes before the set-up commands", cmd)
		}
	}
	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"go test -short", "go test -count=1 -timeout 30m ./..."} {
		if !strings.Contains(string(ci), cmd) {
			t.Errorf(".ci/run does not run %q", cmd)
		}
	}
}

// dockerCopy is the README's Dockerfile snippet: the COPY of the release
// binary into a training image.
func dockerCopy(t *testing.T) (src, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```dockerfile"):
			in = true
		case in && strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, "COPY "):
			f := strings.Fields(line)
			if len(f) != 3 {
				t.Fatalf("README.md: COPY line %q: want COPY SRC DST", line)
			}
			return f[1], f[2]
		}
	}
	t.Fatal("README.md: no ```dockerfile block with a COPY line")
	return "", ""
}

// TestDockerfileSnippetPaths checks that the README's Dockerfile copies a
// file scripts/release.sh makes, for each architecture, to the path the
// Kubernetes manifest runs.
func TestDockerfileSnippetPaths(t *testing.T) {
	src, dst := dockerCopy(t)
	if dst != dockerDestination {
		t.Errorf("README's Dockerfile copies to %s, want %s", dst, dockerDestination)
	}
	var manifest, stderr bytes.Buffer
	if code := cli.Main([]string{"k8s", "manifest", "--image", "example.org/train:1"}, strings.NewReader(""), &manifest, &stderr); code != 0 {
		t.Fatalf("k8s manifest: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(manifest.String(), dst+" doctor") {
		t.Errorf("the k8s manifest does not run %s: the Dockerfile and the DaemonSet disagree", dst)
	}
	if !strings.Contains(src, "${TARGETARCH}") {
		t.Errorf("README's Dockerfile copies %s: want the release name with ${TARGETARCH}", src)
	}
	out, err := exec.Command("bash", filepath.Join(repoRoot, "scripts", "release.sh"), "--names").Output()
	if err != nil {
		t.Fatalf("scripts/release.sh --names: %v", err)
	}
	names := map[string]bool{}
	for _, n := range strings.Fields(string(out)) {
		names[n] = true
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if n := strings.ReplaceAll(src, "${TARGETARCH}", arch); !names[n] {
			t.Errorf("README's Dockerfile copies %s for %s, but scripts/release.sh makes %v", n, arch, strings.Fields(string(out)))
		}
	}
}

// TestReleaseBuildsStaticBinaries runs scripts/release.sh (two cross builds)
// and checks its artifacts: the names the Dockerfile copies, static ELF
// files of the right machine, and checksums that match.
func TestReleaseBuildsStaticBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two release binaries: not under -short")
	}
	dist := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "release.sh"), dist)
	cmd.Env = append(os.Environ(), "VERSION=v0.0.0-test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, out)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	src, _ := dockerCopy(t)
	for _, arch := range []string{"amd64", "arm64"} {
		name := strings.ReplaceAll(src, "${TARGETARCH}", arch)
		b, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		// Static: no program interpreter, no shared library needed.
		ef, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ef.Machine != machine[arch] || ef.Type != elf.ET_EXEC {
			t.Errorf("%s is %v %v, want an %v executable", name, ef.Machine, ef.Type, machine[arch])
		}
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s has a %v program header: not static", name, p.Type)
			}
		}
		if libs, _ := ef.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("%s needs shared libraries %v: not static", name, libs)
		}
		sum := sha256.Sum256(b)
		if !strings.Contains(string(sums), hex.EncodeToString(sum[:])+"  "+name) {
			t.Errorf("SHA256SUMS has no line for %s with its checksum", name)
		}
	}
}
