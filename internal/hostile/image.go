package hostile

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// Image inputs: OCI layouts and docker-save archives written by hand at
// test time (small: a seed layer of about 1 MB, shared by every image),
// judged by the binary through --image as a user runs it.

// EvilDistNames are distribution names a hostile METADATA gives an
// extension fastpath offers to rebuild: an option for pip, and shell code.
var EvilDistNames = []string{"--index-url=http://evil.example/simple", "x;touch${IFS}pwned"}

// imageRuns are the commands run on every hostile image: every command
// that takes --image, and fix --apply, which must refuse.
func imageRuns(ref string) [][]string {
	fl := []string{"--image", ref, "--gpu", "12.0"}
	with := func(args ...string) []string { return append(args, fl...) }
	return [][]string{
		with("doctor"),
		with("doctor", "--json"),
		with("facts"),
		with("packages"),
		with("plan", "--offline", "--model", fixture.SeedModel),
		with("model", fixture.SeedModel),
		with("fix", "--offline"),
		with("fix", "--apply", "--yes", "--offline"), // F1: refused
	}
}

// tarEntry is one member of a layer written by hand.
type tarEntry struct {
	hdr  tar.Header
	body []byte
}

func regEntry(name, body string) tarEntry {
	return tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, []byte(body)}
}

func linkEntry(typ byte, name, target string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: typ, Name: name, Linkname: target, Mode: 0o777}}
}

// tarOf writes entries as an uncompressed tar.
func tarOf(entries ...tarEntry) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return b.Bytes(), err
}

// gzipOf compresses b.
func gzipOf(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// imageConfig is an image config for linux/amd64 with env.
func imageConfig(env []string) []byte {
	b, _ := json.Marshal(map[string]any{"os": "linux", "architecture": "amd64",
		"config": map[string]any{"Env": env}, "rootfs": map[string]any{"type": "layers"}})
	return b
}

type ociDesc struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ociLayout writes an OCI layout at dir whose one image, tagged v1, has
// config cfg and the layers given (each written once however often it is
// listed). It returns the layer descriptors' digests, in order, so that a
// case can replace a blob with something else.
func (w *writer) ociLayout(dir string, cfg []byte, layers ...[]byte) []string {
	w.do(os.MkdirAll(filepath.Join(dir, "blobs", "sha256"), 0o755))
	put := func(b []byte) ociDesc {
		s := sha256.Sum256(b)
		h := hex.EncodeToString(s[:])
		p := filepath.Join(dir, "blobs", "sha256", h)
		if _, err := os.Lstat(p); err != nil {
			w.do(os.WriteFile(p, b, 0o644))
		}
		return ociDesc{Digest: "sha256:" + h, Size: int64(len(b))}
	}
	c := put(cfg)
	c.MediaType = "application/vnd.oci.image.config.v1+json"
	ls := make([]ociDesc, len(layers))
	digests := make([]string, len(layers))
	for i, l := range layers {
		ls[i] = put(l)
		ls[i].MediaType = "application/vnd.oci.image.layer.v1.tar"
		digests[i] = ls[i].Digest
	}
	m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": c, "layers": ls})
	md := put(m)
	md.MediaType = "application/vnd.oci.image.manifest.v1+json"
	md.Annotations = map[string]string{"org.opencontainers.image.ref.name": "v1"}
	idx, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []ociDesc{md}})
	w.do(os.WriteFile(filepath.Join(dir, "index.json"), idx, 0o644))
	w.do(os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644))
	return digests
}

// dockerArchive writes a docker-save archive at p: manifest.json naming
// config and layers (member names, written as given), then members.
func (w *writer) dockerArchive(p, config string, layers []string, members map[string][]byte) {
	mj, _ := json.Marshal([]map[string]any{{"Config": config, "RepoTags": []string{"hostile/image:v1"}, "Layers": layers}})
	entries := []tarEntry{regEntry("manifest.json", string(mj))}
	for name, b := range members {
		entries = append(entries, tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b))}, b})
	}
	b, err := tarOf(entries...)
	w.do(err)
	w.bytes(p, b)
}

// zstdRLEBomb is a zstd frame holding a tar: an os-release, then a file of
// total zero bytes written as RLE blocks of 128 KiB (4 bytes each: 32,768
// to 1). 4 GiB take 128 KiB.
func zstdRLEBomb(total int64) ([]byte, error) {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	os := "ID=ubuntu\nVERSION_ID=\"24.04\"\n"
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/os-release", Size: int64(len(os)), Mode: 0o644}); err != nil {
		return nil, err
	}
	tw.Write([]byte(os))
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "big", Size: total, Mode: 0o644}); err != nil {
		return nil, err
	}
	tw.Flush()
	var b bytes.Buffer
	b.Write([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3}) // magic; no size, no checksum; 128 KiB window
	block := func(typ, size int, last bool) {
		v := uint32(size<<3 | typ<<1)
		if last {
			v |= 1
		}
		var x [4]byte
		binary.LittleEndian.PutUint32(x[:], v)
		b.Write(x[:3])
	}
	block(0, tb.Len(), false) // a raw block: the headers
	b.Write(tb.Bytes())
	n := total / (128 << 10)
	for i := int64(0); i < n; i++ {
		block(1, 128<<10, i == n-1)
		b.WriteByte(0)
	}
	return b.Bytes(), nil
}

// gzipZeros is a gzip layer holding one file of size zero bytes (deflate's
// limit, about 1030 to 1), then an os-release: written in pieces, never
// holding the expanded bytes.
func gzipZeros(size int64) ([]byte, error) {
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	bw := bufio.NewWriterSize(zw, 1<<20)
	tw := tar.NewWriter(bw)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "zeros", Size: size, Mode: 0o644}); err != nil {
		return nil, err
	}
	zero := make([]byte, 1<<20)
	for n := int64(0); n < size; n += int64(len(zero)) {
		tw.Write(zero[:min(int64(len(zero)), size-n)])
	}
	os := "ID=ubuntu\nVERSION_ID=\"24.04\"\n"
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/os-release", Size: int64(len(os)), Mode: 0o644})
	tw.Write([]byte(os))
	if err := tw.Close(); err != nil {
		return nil, err
	}
	bw.Flush()
	err := zw.Close()
	return out.Bytes(), err
}

// evilExtension is a layer adding, to the seed's site-packages, a torch
// extension with code for sm_80 only (so that on a 12.0 GPU fastpath offers
// to rebuild it) whose METADATA names it name.
func evilExtension(i int, name string) []tarEntry {
	dir := strings.TrimPrefix(sitePackages, "/") + "/"
	mod := "evil" + string(rune('a'+i))
	so := fixture.SharedObject{SOName: "_C.so", Needed: []string{"libc.so.6", "libc10.so", "libtorch_cpu.so"},
		Sections: []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80"})}}}.Bytes()
	soPath := mod + "/_C.cpython-312-x86_64-linux-gnu.so"
	di := mod + "-1.0.dist-info"
	return []tarEntry{
		{tar.Header{Typeflag: tar.TypeReg, Name: dir + soPath, Mode: 0o755, Size: int64(len(so))}, so},
		regEntry(dir+mod+"/__init__.py", ""),
		regEntry(dir+di+"/METADATA", "Metadata-Version: 2.1\nName: "+name+"\nVersion: 1.0\n"),
		regEntry(dir+di+"/INSTALLER", "pip\n"),
		regEntry(dir+di+"/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n"),
		regEntry(dir+di+"/RECORD", soPath+",,\n"+mod+"/__init__.py,,\n"+di+"/METADATA,,\n"+di+"/RECORD,,\n"),
	}
}

// commandLines are the shell lines fix and plan print ("$ ...").
func commandLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "$ ") {
			lines = append(lines, t)
		}
	}
	return lines
}

// commandsCarry fails a run whose printed commands hold any of words.
func commandsCarry(words ...string) func(args []string, out string) []string {
	return func(args []string, out string) []string {
		var problems []string
		for _, l := range commandLines(out) {
			for _, w := range words {
				if strings.Contains(l, w) {
					problems = append(problems, "a printed command carries "+w+" from the image: "+l)
				}
			}
		}
		return problems
	}
}

// buildImages writes the image corpus and adds its cases.
func (e *Env) buildImages(add func(class, name string, w *writer, runs [][]string, check func([]string, string) []string) error) error {
	dir := filepath.Join(e.Dir, "images")
	// The seed layer: the seed root with its planted executables, shared
	// by every image (a layout writes it once; an archive holds a copy).
	seedDir, w := e.seedRoot("image-seed")
	if w.err != nil {
		return w.err
	}
	seed, err := fixture.TarTree(seedDir)
	if err != nil {
		return err
	}
	cfg := imageConfig(fixture.SeedEnv)
	trap := "#!/bin/sh\necho \"$0 $*\" >> " + e.Marker + "\n"

	// The host's side: a tarball whose os-release holds the canary (what a
	// link out of the image would read), and executables named like the
	// tools fastpath knows in a host folder an image's PATH names.
	hostLayer, err := tarOf(regEntry("etc/os-release", "ID="+e.Canary+"\nVERSION_ID=\"99\"\n"), regEntry("canary.txt", e.Canary+"\n"))
	if err != nil {
		return err
	}
	w = &writer{}
	w.bytes(filepath.Join(e.Host, "host-layer.tar"), hostLayer)
	for _, n := range []string{"nvidia-smi", "nvcc", "python", "python3", "pip", "uname", "ldconfig", "gcc", "g++"} {
		w.file(filepath.Join(e.Host, "bin", n), trap, 0o755)
	}
	if w.err != nil {
		return w.err
	}

	// F12: an OCI layout whose second layer blob is a link to the host's
	// tarball, and one whose config blob is a climbing link to a host file.
	w = &writer{}
	p := filepath.Join(dir, "layout-hostlink")
	d := w.ociLayout(p, cfg, seed, hostLayer)
	w.link(filepath.Join(p, "blobs", "sha256", strings.TrimPrefix(d[1], "sha256:")), filepath.Join(e.Host, "host-layer.tar"))
	p2 := filepath.Join(dir, "layout-hostlink-rel")
	d = w.ociLayout(p2, cfg, seed, hostLayer)
	rel, _ := filepath.Rel(filepath.Join(p2, "blobs", "sha256"), filepath.Join(e.Host, "host-layer.tar"))
	w.link(filepath.Join(p2, "blobs", "sha256", strings.TrimPrefix(d[1], "sha256:")), rel)
	if err := add("images", "OCI layout: a layer blob linked to a host tarball (absolute, climbing)", w,
		append(imageRuns(p+":v1"), imageRuns(p2+":v1")...), nil); err != nil {
		return err
	}

	// A docker-save archive whose manifest.json names host files with ../
	// and absolute paths, for a layer and for the config.
	w = &writer{}
	climb := strings.Repeat("../", 12) + strings.TrimPrefix(filepath.Join(e.Host, "host-layer.tar"), "/")
	a1 := filepath.Join(dir, "archive-dotdot-layer.tar")
	w.dockerArchive(a1, "c.json", []string{"seed.tar", climb}, map[string][]byte{"c.json": cfg, "seed.tar": seed})
	a2 := filepath.Join(dir, "archive-abs-layer.tar")
	w.dockerArchive(a2, "c.json", []string{"seed.tar", filepath.Join(e.Host, "host-layer.tar")}, map[string][]byte{"c.json": cfg, "seed.tar": seed})
	a3 := filepath.Join(dir, "archive-dotdot-config.tar")
	w.dockerArchive(a3, strings.Repeat("../", 12)+strings.TrimPrefix(filepath.Join(e.Host, "canary.txt"), "/"), []string{"seed.tar"}, map[string][]byte{"seed.tar": seed})
	if err := add("images", "docker-save archive: manifest.json naming ../ and absolute host paths as a layer and as the config", w,
		append(append(imageRuns(a1), imageRuns(a2)...), imageRuns(a3)...), nil); err != nil {
		return err
	}

	// F13: a zstd RLE bomb (128 KiB claiming 4 GiB) and a gzip layer at
	// deflate's limit (about 320 KB for 320 MiB), over the seed.
	w = &writer{}
	zb, err := zstdRLEBomb(4 << 30)
	w.do(err)
	gb, err := gzipZeros(320 << 20)
	w.do(err)
	pz := filepath.Join(dir, "zstd-bomb")
	w.ociLayout(pz, cfg, seed, zb)
	pg := filepath.Join(dir, "gzip-bomb")
	w.ociLayout(pg, cfg, gzipOf(seed), gb)
	if err := add("images", "a zstd bomb layer (128 KiB for 4 GiB), a gzip layer at deflate's limit (320 KB for 320 MiB)", w,
		append(imageRuns(pz+":v1"), imageRuns(pg+":v1")...), nil); err != nil {
		return err
	}

	// Whiteouts of a folder itself and its parent.
	w = &writer{}
	wh, err := tarOf(regEntry("usr/.wh..", ""), regEntry("usr/lib/.wh.", ""), regEntry("etc/.wh...", ""),
		regEntry("root/venv/.wh..wh..opq", ""), regEntry(".wh..", ""))
	w.do(err)
	pw := filepath.Join(dir, "whiteouts")
	w.ociLayout(pw, cfg, seed, wh)
	if err := add("images", "whiteouts .wh., .wh.., .wh... and an opaque venv", w, imageRuns(pw+":v1"), nil); err != nil {
		return err
	}

	// F2: 1,001 layers, in a layout and in an archive.
	w = &writer{}
	tiny, err := tarOf(regEntry("etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n"))
	w.do(err)
	many := make([][]byte, 1001)
	names := make([]string, 1001)
	for i := range many {
		many[i], names[i] = tiny, "t.tar"
	}
	pm := filepath.Join(dir, "layers-1001")
	w.ociLayout(pm, cfg, many...)
	am := filepath.Join(dir, "layers-1001.tar")
	w.dockerArchive(am, "c.json", names, map[string][]byte{"c.json": cfg, "t.tar": tiny})
	if err := add("images", "1,001 layers (layout and archive)", w, append(imageRuns(pm+":v1"), imageRuns(am)...), nil); err != nil {
		return err
	}

	// Links out: hard links to host paths (absolute, climbing), and a
	// symbolic link chain that a later layer completes to climb out.
	w = &writer{}
	hl, err := tarOf(linkEntry(tar.TypeLink, "etc/os-release", filepath.Join(e.Host, "os-release")),
		linkEntry(tar.TypeLink, "etc/lsb-release", strings.Repeat("../", 12)+strings.TrimPrefix(filepath.Join(e.Host, "os-release"), "/")),
		linkEntry(tar.TypeLink, strings.TrimPrefix(snapshot, "/")+"/config.json", filepath.Join(e.Host, "config.json")))
	w.do(err)
	chain1, err := tarOf(linkEntry(tar.TypeSymlink, "etc/os-release", "/hop/a/os-release"),
		linkEntry(tar.TypeSymlink, "usr/local/cuda", "/hop/a/bin/.."), linkEntry(tar.TypeSymlink, "hop/a", "b"))
	w.do(err)
	chain2, err := tarOf(linkEntry(tar.TypeSymlink, "hop/b", strings.Repeat("../", 12)+strings.TrimPrefix(e.Host, "/")),
		linkEntry(tar.TypeSymlink, strings.TrimPrefix(snapshot, "/")+"/config.json", "/hop/a/config.json"),
		linkEntry(tar.TypeSymlink, strings.TrimPrefix(sitePackages, "/")+"/host", "/hop/a/site"))
	w.do(err)
	ph := filepath.Join(dir, "hardlinks")
	w.ociLayout(ph, cfg, seed, hl)
	pc := filepath.Join(dir, "symlink-chain")
	w.ociLayout(pc, cfg, seed, chain1, chain2)
	if err := add("images", "hard links to host paths; a symbolic link chain completed by a later layer to climb to the host", w,
		append(imageRuns(ph+":v1"), imageRuns(pc+":v1")...), nil); err != nil {
		return err
	}

	// Special files where a file is read: a FIFO as METADATA, a character
	// device (1,5: /dev/zero) as RECORD, a block device as os-release.
	w = &writer{}
	torchDI := strings.TrimPrefix(sitePackages, "/") + "/torch-2.11.0+cu128.dist-info/"
	dev, err := tarOf(tarEntry{hdr: tar.Header{Typeflag: tar.TypeFifo, Name: torchDI + "METADATA", Mode: 0o644}},
		tarEntry{hdr: tar.Header{Typeflag: tar.TypeChar, Name: torchDI + "RECORD", Mode: 0o644, Devmajor: 1, Devminor: 5}},
		tarEntry{hdr: tar.Header{Typeflag: tar.TypeBlock, Name: "etc/os-release", Mode: 0o644, Devmajor: 8, Devminor: 0}},
		tarEntry{hdr: tar.Header{Typeflag: tar.TypeChar, Name: strings.TrimPrefix(snapshot, "/") + "/config.json", Mode: 0o644, Devmajor: 1, Devminor: 5}})
	w.do(err)
	pd := filepath.Join(dir, "devices")
	w.ociLayout(pd, cfg, seed, dev)
	if err := add("images", "a FIFO as METADATA, /dev/zero (1,5) as RECORD and config.json, a block device as os-release", w, imageRuns(pd+":v1"), nil); err != nil {
		return err
	}

	// The image config's Env: a PATH into the host's folder of planted
	// tools, LD_PRELOAD, pip's index and CUDA_HOME aimed at evil values.
	w = &writer{}
	evilEnv := []string{"PATH=" + filepath.Join(e.Host, "bin") + ":" + fixture.SeedVenv + "/bin:/usr/bin:/bin",
		"LD_PRELOAD=" + filepath.Join(e.Host, "evil.so"), "PIP_INDEX_URL=http://evil.example/simple",
		"PIP_EXTRA_INDEX_URL=http://evil.example/extra", "PIP_CONFIG_FILE=" + filepath.Join(e.Host, "pip.conf"),
		"CUDA_HOME=/opt/x$(touch${IFS}pwned)", "VIRTUAL_ENV=" + fixture.SeedVenv, "HOME=/root"}
	pe := filepath.Join(dir, "evil-env")
	w.ociLayout(pe, imageConfig(evilEnv), seed)
	if err := add("images", "config Env: PATH into a host folder of planted tools, LD_PRELOAD, PIP_INDEX_URL, PIP_CONFIG_FILE, CUDA_HOME=$(...)", w,
		imageRuns(pe+":v1"), commandsCarry("evil.example", "LD_PRELOAD", e.Host, "pwned")); err != nil {
		return err
	}

	// F14: extensions the fix offers to rebuild, whose METADATA names are
	// a pip option and shell code.
	w = &writer{}
	var ext []tarEntry
	for i, n := range EvilDistNames {
		ext = append(ext, evilExtension(i, n)...)
	}
	el, err := tarOf(ext...)
	w.do(err)
	pn := filepath.Join(dir, "evil-dist-names")
	w.ociLayout(pn, cfg, seed, el)
	if err := add("images", "extension dist-info names --index-url=http://evil.example/simple and x;touch${IFS}pwned", w,
		imageRuns(pn+":v1"), commandsCarry("evil.example", "index-url", "pwned")); err != nil {
		return err
	}
	return nil
}
