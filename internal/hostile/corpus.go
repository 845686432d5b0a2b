package hostile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// Env describes where a corpus lives and what it plants on the "host".
type Env struct {
	// Dir holds the inputs (roots, files); nothing else may change in it.
	Dir string
	// Host is a folder outside every root standing for the host's files:
	// its files hold Canary, and the roots link to it every way they can.
	Host   string
	Canary string
	// Marker is the file a planted executable creates if anything runs it.
	Marker string
}

// Case is one hostile input and the commands to run on it.
type Case struct {
	Class string // the attack class (F2, F3, F5, ..., a table row)
	Name  string
	// Runs are fastpath argument lists.
	Runs [][]string
	// Check, when set, finds problems particular to the case in a run's
	// standard output (args are the run's arguments).
	Check func(args []string, stdout string) []string
}

// NewEnv makes a corpus environment below dir, with a fresh canary.
func NewEnv(dir string) (*Env, error) {
	var b [8]byte
	rand.Read(b[:])
	e := &Env{
		Dir:    filepath.Join(dir, "inputs"),
		Host:   filepath.Join(dir, "host"),
		Canary: "hostcanary" + hex.EncodeToString(b[:]),
		Marker: filepath.Join(dir, "EXECUTED"),
	}
	for _, d := range []string{e.Dir, e.Host} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	// The host's files: an os-release, a model config, a site-packages
	// with one distribution, all carrying the canary.
	w := &writer{}
	w.file(filepath.Join(e.Host, "os-release"), "ID="+e.Canary+"\nPRETTY_NAME=\""+e.Canary+"\"\n", 0o644)
	w.file(filepath.Join(e.Host, "config.json"), `{"model_type":"`+e.Canary+`","num_hidden_layers":2}`, 0o644)
	w.file(filepath.Join(e.Host, "canary.txt"), e.Canary+"\n", 0o644)
	di := filepath.Join(e.Host, "site", e.Canary+"-1.0.dist-info")
	w.file(filepath.Join(di, "METADATA"), "Metadata-Version: 2.1\nName: "+e.Canary+"\nVersion: 1.0\n", 0o644)
	w.file(filepath.Join(di, "INSTALLER"), "pip\n", 0o644)
	w.file(filepath.Join(e.Host, "site", "torch", "version.py"), "__version__ = '"+e.Canary+"'\n", 0o644)
	return e, w.err
}

// Escapes is what a hostile author puts in text fields: clear the screen,
// retitle the terminal, set the clipboard (OSC 52), a C1 CSI, a carriage
// return, a bidi override.
const Escapes = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07\u009b31m\r\u202e"

// writer collects the first error of many file operations.
type writer struct{ err error }

func (w *writer) do(err error) {
	if w.err == nil && err != nil {
		w.err = err
	}
}

func (w *writer) file(p, content string, mode os.FileMode) {
	w.do(os.MkdirAll(filepath.Dir(p), 0o755))
	os.Remove(p)
	w.do(os.WriteFile(p, []byte(content), mode))
}

func (w *writer) bytes(p string, b []byte) {
	w.do(os.MkdirAll(filepath.Dir(p), 0o755))
	os.Remove(p)
	w.do(os.WriteFile(p, b, 0o644))
}

func (w *writer) link(p, target string) {
	w.do(os.MkdirAll(filepath.Dir(p), 0o755))
	os.RemoveAll(p)
	w.do(os.Symlink(target, p))
}

func (w *writer) fifo(p string) {
	w.do(os.MkdirAll(filepath.Dir(p), 0o755))
	os.RemoveAll(p)
	w.do(syscall.Mkfifo(p, 0o644))
}

// repeat writes head, unit n times, then tail, in pieces: the corpus is
// written without holding a big input in the test process's memory (whose
// peak the kernel folds into its children's ru_maxrss).
func (w *writer) repeat(p, head, unit string, n int, tail string) {
	w.do(os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := os.Create(p)
	if err != nil {
		w.do(err)
		return
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	bw.WriteString(head)
	for i := 0; i < n; i++ {
		bw.WriteString(unit)
	}
	bw.WriteString(tail)
	w.do(bw.Flush())
	w.do(f.Close())
}

// sparse makes a file of size bytes that starts with head and takes no disk.
func (w *writer) sparse(p string, head []byte, size int64) {
	w.do(os.MkdirAll(filepath.Dir(p), 0o755))
	os.Remove(p)
	f, err := os.Create(p)
	if err != nil {
		w.do(err)
		return
	}
	_, err = f.Write(head)
	w.do(err)
	w.do(f.Truncate(size))
	w.do(f.Close())
}

// Seed paths (see internal/fixture): where the seed root keeps things.
const (
	sitePackages = fixture.SeedVenv + "/lib/python3.12/site-packages"
	snapshot     = fixture.SeedHFCache + "/models--Qwen--Qwen3.5-27B/snapshots/8f1c2a7d3b5e4c6a9d0e1f2a3b4c5d6e7f8a9b0c"
)

// rootFlags are the flags that point a command at root r.
func rootFlags(r string, extraEnv ...string) []string {
	f := []string{"--root", r, "--gpu", "12.0"}
	for _, e := range append(append([]string{}, fixture.SeedEnv...), extraEnv...) {
		f = append(f, "--env", e)
	}
	return f
}

// rootRuns are the commands run on every hostile root.
func (e *Env) rootRuns(r string, extraEnv ...string) [][]string {
	fl := rootFlags(r, extraEnv...)
	with := func(args ...string) []string { return append(args, fl...) }
	return [][]string{
		with("doctor"),
		with("doctor", "--json"),
		with("doctor", "--markdown"),
		with("doctor", "--format", "prom"),
		with("facts"),
		with("packages"),
		with("plan", "--offline", "--model", fixture.SeedModel),
		with("model", fixture.SeedModel),
		with("model", filepath.Join(e.Host, "config.json")), // F10: never the host's file
		with("fix", "--offline"),
		with("fix", "--apply", "--yes", "--offline"), // F1: refused
	}
}

// seedRoot writes the seed container's rootfs at name, with an executable
// planted wherever fastpath might be tempted to run one.
func (e *Env) seedRoot(name string) (string, *writer) {
	r := filepath.Join(e.Dir, name)
	w := &writer{}
	w.do(fixture.Seed(r))
	trap := "#!/bin/sh\necho \"$0 $*\" >> " + e.Marker + "\n"
	for _, p := range []string{
		"/usr/local/cuda/bin/nvcc", "/usr/bin/nvidia-smi", "/usr/bin/uname", "/sbin/ldconfig", "/usr/bin/pip",
		"/usr/local/bin/python3", "/usr/bin/python3.12", "/usr/bin/x86_64-linux-gnu-gcc-13",
		"/usr/bin/x86_64-linux-gnu-g++-13", fixture.SeedVenv + "/bin/ninja", fixture.SeedVenv + "/bin/pip",
	} {
		w.file(filepath.Join(r, p), trap, 0o755)
	}
	return r, w
}

// Build writes the corpus and returns its cases.
func (e *Env) Build() ([]Case, error) {
	var cases []Case
	add := func(class, name string, w *writer, runs [][]string) error {
		if w.err != nil {
			return fmt.Errorf("%s/%s: %w", class, name, w.err)
		}
		cases = append(cases, Case{Class: class, Name: name, Runs: runs})
		return nil
	}
	addChecked := func(class, name string, w *writer, runs [][]string, check func([]string, string) []string) error {
		if err := add(class, name, w, runs); err != nil {
			return err
		}
		cases[len(cases)-1].Check = check
		return nil
	}

	// Baseline: the seed itself, with the traps and host links only.
	r, w := e.seedRoot("seed")
	if err := add("baseline", "seed root", w, e.rootRuns(r)); err != nil {
		return nil, err
	}

	// F2: a 60,000-component PATH entry, 100,000 PATH entries, a .pth
	// with a 30,000-component line and one of 300,000 short lines.
	r, w = e.seedRoot("hugepath")
	// One argument can be at most 128 KiB (MAX_ARG_STRLEN): 50,000
	// components and 5,000 more entries fit. The 60,000-component entry of
	// the issue came from an image's config, which has no such limit.
	long := strings.Repeat("/a", 50000)
	w.file(filepath.Join(r, sitePackages, "deep.pth"), strings.Repeat("/b", 30000)+"\n", 0o644)
	w.file(filepath.Join(r, sitePackages, "many.pth"), strings.Repeat("/usr\n", 200000), 0o644)
	w.do(os.MkdirAll(filepath.Join(r, "a"), 0o755))
	w.link(filepath.Join(r, "a", "a"), ".") // /a/a/a/... all exist: nothing short-circuits
	hugePATH := "PATH=" + long + ":" + strings.Repeat("/x:", 5000) + fixture.SeedVenv + "/bin:/usr/bin"
	if err := add("F2", "50k-component PATH entry, 5k PATH entries, 30k-component .pth line, 200k-line .pth", w,
		e.rootRuns(r, hugePATH)); err != nil {
		return nil, err
	}

	// F3: ELF section-count bombs as libtorch_cuda.so, torch's other
	// libraries, an extension, libc and libcudart.
	r, w = e.seedRoot("elfbomb")
	bomb := ELFSectionBomb(10_000_000)
	for _, p := range []string{
		sitePackages + "/torch/lib/libtorch_cuda.so", sitePackages + "/torch/lib/libc10_cuda.so",
		sitePackages + "/markupsafe/_speedups.cpython-312-x86_64-linux-gnu.so",
		sitePackages + "/nvidia/cuda_runtime/lib/libcudart.so.12", "/usr/lib/x86_64-linux-gnu/libc.so.6",
	} {
		w.bytes(filepath.Join(r, p), bomb)
	}
	w.bytes(filepath.Join(r, sitePackages, "torch/lib/libc10.so"), ELFShnumBomb())
	// 65,535 section headers that do fit a 4 GiB sparse file: within the
	// caps, so debug/elf reads them; memory must stay bounded anyway.
	w.sparse(filepath.Join(r, sitePackages, "torch/lib/libtorch_cpu.so"), ELFFittingHeaders(4<<30), 4<<30)
	if err := add("F3", "ELF section-count bombs (10M claimed, 65535 past EOF, 65535 in a sparse 4 GiB file)", w, e.rootRuns(r)); err != nil {
		return nil, err
	}

	// F5: a FIFO at every path the issue found hanging, and more.
	r, w = e.seedRoot("fifo")
	for _, p := range []string{
		"/etc/os-release", "/proc/cpuinfo", "/proc/driver/nvidia/version", snapshot + "/config.json",
		fixture.SeedHFCache + "/models--Qwen--Qwen3.5-27B/refs/main", sitePackages + "/evil.pth", "/usr/bin/dash",
		"/usr/include/python3.12/patchlevel.h", sitePackages + "/torch/version.py",
		sitePackages + "/torch-2.11.0+cu128.dist-info/METADATA", fixture.SeedVenv + "/pyvenv.cfg",
		"/etc/debian_version", "/proc/meminfo", "/etc/ld.so.conf",
	} {
		w.fifo(filepath.Join(r, p))
	}
	if err := add("F5", "14 FIFOs (os-release, cpuinfo, driver version, config.json, refs/main, .pth, dash, patchlevel.h, ...)", w, e.rootRuns(r)); err != nil {
		return nil, err
	}

	// F7/F10 and links: loops, links that climb, absolute links to the host.
	r, w = e.seedRoot("links")
	w.link(filepath.Join(r, "etc/os-release"), filepath.Join(e.Host, "os-release"))
	w.link(filepath.Join(r, "etc/lsb-release"), "../../../../../../../../../../../.."+filepath.Join(e.Host, "os-release"))
	w.link(filepath.Join(r, sitePackages, "hostsite"), filepath.Join(e.Host, "site"))
	w.file(filepath.Join(r, sitePackages, "host.pth"), filepath.Join(e.Host, "site")+"\n../../../../../../../../../../.."+filepath.Join(e.Host, "site")+"\n", 0o644)
	w.link(filepath.Join(r, snapshot, "config.json"), filepath.Join(e.Host, "config.json"))
	w.link(filepath.Join(r, sitePackages, "torch/version.py"), "../../../../../../../../../.."+filepath.Join(e.Host, "site/torch/version.py"))
	w.link(filepath.Join(r, "usr/local/cuda"), "../../../../../../../../../../.."+e.Host)
	w.link(filepath.Join(r, "loop/a"), "b")
	w.link(filepath.Join(r, "loop/b"), "a")
	w.link(filepath.Join(r, "usr/lib/python3.12/self"), ".")
	w.link(filepath.Join(r, fixture.SeedVenv, "lib64"), "lib64")
	w.link(filepath.Join(r, "usr/bin/python3"), "/loop/a")
	w.link(filepath.Join(r, "proc/self/root"), "/")
	if err := add("F7/F10 links", "absolute and climbing links to host files, link loops, self links", w, e.rootRuns(r)); err != nil {
		return nil, err
	}

	// Deep and wide trees.
	r, w = e.seedRoot("deep")
	deep := filepath.Join(r, sitePackages, "deep")
	w.do(os.MkdirAll(deep+strings.Repeat("/d", 300), 0o755))
	w.file(filepath.Join(r, sitePackages, "deep.pth"), "deep"+strings.Repeat("/d", 300)+"\n", 0o644)
	for i := 0; i < 1000; i++ {
		w.do(os.MkdirAll(filepath.Join(r, sitePackages, fmt.Sprintf("pkg%05d-1.0.dist-info", i)), 0o755))
	}
	w.file(filepath.Join(r, sitePackages, strings.Repeat("n", 251)+".pth"), "/usr\n", 0o644)
	if err := add("deep", "300-level folders, 1000 empty dist-info folders, 255-byte names", w, e.rootRuns(r)); err != nil {
		return nil, err
	}

	// F9: escape sequences in every text field a root supplies.
	r, w = e.seedRoot("escapes")
	w.file(filepath.Join(r, "etc/os-release"), "ID=ubuntu"+Escapes+"\nVERSION_ID=\"24.04"+Escapes+"\"\nPRETTY_NAME=\"Ubuntu "+Escapes+"\"\n", 0o644)
	fx := fixture.New(r)
	fx.Dist(sitePackages, fixture.Dist{Name: "evil", Version: "1.0" + Escapes})
	w.do(fx.Err())
	w.file(filepath.Join(r, sitePackages, "torch/version.py"), "__version__ = '2.11.0+cu128"+Escapes+"'\ncuda = '12.8"+Escapes+"'\n", 0o644)
	w.file(filepath.Join(r, snapshot, "config.json"), `{"model_type":"qwen3_5`+jsonEsc(Escapes)+`","num_hidden_layers":4,"layer_types":["linear_attention`+jsonEsc(Escapes)+`"]}`, 0o644)
	w.file(filepath.Join(r, sitePackages, "esc.pth"), "/usr"+Escapes+"\n", 0o644)
	if err := add("F9", "escape sequences in os-release, METADATA, version.py, config.json, .pth", w, e.rootRuns(r)); err != nil {
		return nil, err
	}

	// Sparse giants where a small file is expected.
	r, w = e.seedRoot("sparse")
	for _, p := range []string{"/etc/os-release", sitePackages + "/torch-2.11.0+cu128.dist-info/METADATA",
		sitePackages + "/torch/version.py", snapshot + "/config.json", sitePackages + "/big.pth",
		"/usr/include/python3.12/patchlevel.h", fixture.SeedVenv + "/pyvenv.cfg"} {
		w.sparse(filepath.Join(r, p), []byte("x"), 2<<30)
	}
	if err := add("sparse", "2 GiB sparse os-release, METADATA, version.py, config.json, .pth, pyvenv.cfg", w, e.rootRuns(r)); err != nil {
		return nil, err
	}

	// ELF files given to inspect.
	elfDir := filepath.Join(e.Dir, "elf")
	w = &writer{}
	w.bytes(filepath.Join(elfDir, "bomb10M.so"), ELFSectionBomb(10_000_000))
	w.bytes(filepath.Join(elfDir, "bomb2e63.so"), ELFSectionBomb(1<<63))
	w.bytes(filepath.Join(elfDir, "shnum65535.so"), ELFShnumBomb())
	w.sparse(filepath.Join(elfDir, "fits4G.so"), ELFFittingHeaders(4<<30), 4<<30)
	w.bytes(filepath.Join(elfDir, "magic-only"), []byte("\x7fELF"))
	w.fifo(filepath.Join(elfDir, "fifo.so"))
	var elfRuns [][]string
	for _, n := range []string{"bomb10M.so", "bomb2e63.so", "shnum65535.so", "fits4G.so", "magic-only", "fifo.so"} {
		elfRuns = append(elfRuns, []string{"inspect", filepath.Join(elfDir, n)}, []string{"inspect", "--json", filepath.Join(elfDir, n)})
	}
	elfRuns = append(elfRuns, []string{"inspect", elfDir})
	if err := add("F3", "ELF files for inspect: bombs, a sparse 4 GiB file, magic only, a FIFO, their folder", w, elfRuns); err != nil {
		return nil, err
	}

	// Logs for explain.
	logDir := filepath.Join(e.Dir, "logs")
	w = &writer{}
	w.repeat(filepath.Join(logDir, "one-line-16M.log"), "", "NameError: name 'bare_metal_version' is not defined ", 16<<20/52, "")
	bin := make([]byte, 64<<10)
	rand.Read(bin)
	w.repeat(filepath.Join(logDir, "binary-8M.log"), "", string(bin), 128, "")
	w.file(filepath.Join(logDir, "escapes.log"), strings.Repeat("RuntimeError: CUDA error: no kernel image is available "+Escapes+"\n", 1000)+
		"ImportError: "+Escapes+"libcudart.so.12: cannot open shared object file\n", 0o644)
	w.repeat(filepath.Join(logDir, "many-lines.log"), "", "x\n", 2<<20, "")
	w.file(filepath.Join(logDir, "nul.log"), strings.Repeat("\x00", 1<<20)+"\nImportError: libcudart.so.12\n", 0o644)
	var logRuns [][]string
	for _, n := range []string{"one-line-16M.log", "binary-8M.log", "escapes.log", "many-lines.log", "nul.log"} {
		p := filepath.Join(logDir, n)
		logRuns = append(logRuns, []string{"explain", p}, []string{"explain", "--json", p})
	}
	if err := add("logs", "a 16 MB line, 8 MB of random bytes, escapes, 2M lines, NULs", w, logRuns); err != nil {
		return nil, err
	}

	// Model configs.
	cfgDir := filepath.Join(e.Dir, "configs")
	w = &writer{}
	cfgs := map[string]string{
		"deep-nesting.json":     strings.Repeat("[", 1<<20),
		"deep-object.json":      strings.Repeat(`{"a":`, 200000),
		"trailing.json":         `{"model_type":"llama","num_hidden_layers":2}garbage`,
		"trailing2.json":        `{"model_type":"llama","num_hidden_layers":2} {"model_type":"bert"}`,
		"huge-number.json":      `{"model_type":"llama","num_hidden_layers":1` + strings.Repeat("0", 100000) + `}`,
		"huge-exp.json":         `{"model_type":"llama","num_hidden_layers":1e999999999,"hidden_size":-1e308}`,
		"many-layers.json":      `{"model_type":"llama","num_hidden_layers":2000000000,"num_attention_heads":2000000000}`,
		"negative.json":         `{"model_type":"llama","num_hidden_layers":-5}`,
		"escapes.json":          `{"model_type":"` + jsonEsc(Escapes) + `","num_hidden_layers":2}`,
		"nan.json":              `{"model_type":"llama","num_hidden_layers":NaN,"rope_theta":Infinity}`,
		"text-config-loop.json": `{"model_type":"qwen3_5","text_config":` + strings.Repeat(`{"model_type":"qwen3_5","text_config":`, 5000) + `null` + strings.Repeat("}", 5001),
	}
	w.repeat(filepath.Join(cfgDir, "long-types.json"), `{"model_type":"qwen3_next","num_hidden_layers":4,"layer_types":[`, `"linear_attention",`, 700000, `"full_attention"]}`)
	cfgs["long-types.json"] = ""
	var cfgRuns [][]string
	for n, c := range cfgs {
		if c != "" {
			w.file(filepath.Join(cfgDir, n), c, 0o644)
		}
		p := filepath.Join(cfgDir, n)
		cfgRuns = append(cfgRuns, []string{"model", p, "--gpu", "12.0"}, []string{"model", "--json", p, "--gpu", "12.0"})
	}
	w.sparse(filepath.Join(cfgDir, "sparse-2G.json"), []byte("{"), 2<<30)
	cfgRuns = append(cfgRuns, []string{"model", filepath.Join(cfgDir, "sparse-2G.json")})
	if err := add("configs", "deep nesting, trailing garbage, huge numbers, 2e9 layers, 700k layer types, NaN, a sparse 2 GiB file", w, cfgRuns); err != nil {
		return nil, err
	}

	// Saved facts (doctor --facts, diff): escapes, nesting, huge arrays.
	factsDir := filepath.Join(e.Dir, "facts")
	w = &writer{}
	esc := jsonEsc(Escapes)
	facts := map[string]string{
		"escapes.json": `{"schema":"fastpath.v1","source":{"kind":"host","live":true},"os":{"id":"ubuntu` + esc + `","pretty_name":"` + esc + `"},` +
			`"python":{"selected":{"prefix":"/venv` + esc + `","version":"3.12` + esc + `"}},"torch":{"version":"2.11.0` + esc + `","cuda":"12.8"},` +
			`"gpu":{"devices":[{"index":0,"name":"` + esc + `","capability":"12.0"}]},"warnings":["` + esc + `"]}`,
		"deep.json": `{"schema":"fastpath.v1","os":` + strings.Repeat(`{"a":`, 100000) + `}`,
	}
	w.repeat(filepath.Join(factsDir, "array.json"), `{"schema":"fastpath.v1","warnings":[`, `"w",`, 1500000, `"w"]}`)
	w.repeat(filepath.Join(factsDir, "huge.json"), `{"schema":"fastpath.v1","warnings":[`, `"w",`, 3000000, `"w"]}`)
	facts["array.json"], facts["huge.json"] = "", ""
	var factsRuns [][]string
	for n, c := range facts {
		p := filepath.Join(factsDir, n)
		if c != "" {
			w.file(p, c, 0o644)
		}
		factsRuns = append(factsRuns, []string{"doctor", "--facts", p}, []string{"doctor", "--markdown", "--facts", p},
			[]string{"doctor", "--format", "prom", "--facts", p})
	}
	factsRuns = append(factsRuns, []string{"diff", filepath.Join(factsDir, "escapes.json"), filepath.Join(factsDir, "array.json")},
		[]string{"diff", "--markdown", filepath.Join(factsDir, "escapes.json"), filepath.Join(factsDir, "escapes.json")})
	if err := add("facts files", "escapes in every field, 100k nesting, 1.5M warnings (6 MB), a 12 MB file", w, factsRuns); err != nil {
		return nil, err
	}

	// Container images, judged through --image (image.go).
	if err := e.buildImages(addChecked); err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	return cases, nil
}

// jsonEsc writes s as the inside of a JSON string.
func jsonEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' || (r >= 0x7f && r <= 0x9f) || (r >= 0x2000 && r <= 0x206f) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
