package imagesource

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/imagesource/registry"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Caps on what an image's bookkeeping may make fastpath read or hold. Real
// manifests and configs are a few KB; real indexes list a few dozen images.
const (
	maxManifestBytes = 4 << 20
	maxConfigBytes   = 16 << 20
	maxCandidates    = 1024    // images an index may list, nested indexes and repeats included
	maxIndexEntries  = 4096    // descriptors one walk of an index visits, images and indexes, repeats included
	maxIndexDepth    = 4       // nested indexes
	maxArchiveFiles  = 1 << 20 // members of a docker-save archive
	maxListed        = 10      // names quoted in an error
	// maxLayers: layers an image may have. Docker builds at most 127 and
	// overlayfs mounts at most 500 lower folders; a 4 MB manifest.json
	// naming one tiny member a million times cost a minute and GBs of
	// allocation, one pass per layer.
	maxLayers = 1000
)

func checkLayerCount(n int) error {
	if n > maxLayers {
		return fmt.Errorf("the image has %d layers, more than the %d fastpath reads (no runtime mounts that many)", n, maxLayers)
	}
	return nil
}

// resolved is the image chosen from a reference, before its layers are read.
type resolved struct {
	manifestDigest string // "" where the image has no manifest blob
	config         []byte
	layers         []*layerBlob
}

// selector is what follows a local path: ":TAG" or "@sha256:…".
type selector struct {
	tag, digest string
}

func (s selector) String() string {
	switch {
	case s.digest != "":
		return "@" + s.digest
	case s.tag != "":
		return ":" + s.tag
	}
	return ""
}

// localRef splits ref into an existing local path and a selector. ok is
// false when no prefix of ref (the whole of it, or the part before an "@"
// or a ":") exists on disk.
func localRef(ref string) (p string, sel selector, ok bool) {
	if _, err := os.Stat(ref); err == nil {
		return ref, selector{}, true
	}
	if i := strings.LastIndex(ref, "@"); i > 0 {
		if _, err := os.Stat(ref[:i]); err == nil {
			return ref[:i], selector{digest: ref[i+1:]}, true
		}
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] != ':' || i == 0 {
			continue
		}
		if _, err := os.Stat(ref[:i]); err == nil {
			return ref[:i], selector{tag: ref[i+1:]}, true
		}
	}
	return "", selector{}, false
}

// looksLikePath reports whether ref is meant as a file or folder: it starts
// with "/", "." or "~", or names a tar archive. Such a reference is never
// sent to a registry, even when nothing exists there (a typo must not
// become a request to Docker Hub with the user's credentials). Registry
// references with slashes (ghcr.io/org/img, pytorch/pytorch) stay
// references: they never start with these and name no archive.
func looksLikePath(ref string) bool {
	if strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, ".") || strings.HasPrefix(ref, "~") || strings.Contains(ref, "/.") {
		return true
	}
	base := ref
	if i := strings.IndexAny(base, "@"); i >= 0 {
		base = base[:i]
	}
	for _, part := range []string{base, strings.SplitN(base, ":", 2)[0]} {
		for _, ext := range []string{".tar", ".tar.gz", ".tgz", ".tar.zst", ".oci"} {
			if strings.HasSuffix(part, ext) {
				return true
			}
		}
	}
	return false
}

// ociDesc is an OCI content descriptor (also Docker's v2 manifests').
type ociDesc struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Platform    *platform         `json:"platform,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ociDoc is an index or a manifest: which one is told by its fields.
type ociDoc struct {
	MediaType string    `json:"mediaType"`
	Manifests []ociDesc `json:"manifests"`
	Config    *ociDesc  `json:"config"`
	Layers    []ociDesc `json:"layers"`
}

// candidate is one image an index lists.
type candidate struct {
	desc  ociDesc
	names []string // the tags of the top-level descriptor it was reached from
	top   string   // that descriptor's digest
}

func isIndexType(mt string) bool {
	return mt == "application/vnd.oci.image.index.v1+json" || mt == "application/vnd.docker.distribution.manifest.list.v2+json"
}

func isManifestType(mt string) bool {
	return mt == "application/vnd.oci.image.manifest.v1+json" || mt == "application/vnd.docker.distribution.manifest.v2+json"
}

// refNames are the tags a descriptor carries: the OCI ref.name annotation
// ("v1" or a full name), and containerd's image name.
func refNames(d ociDesc) []string {
	var out []string
	for _, k := range []string{"org.opencontainers.image.ref.name", "io.containerd.image.name"} {
		if v := d.Annotations[k]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// tagMatches reports whether a stored name answers to the tag asked for:
// "v1" matches "v1", "train/seed:v1" and "docker.io/train/seed:v1"; a full
// name matches itself.
func tagMatches(stored, tag string) bool {
	if stored == tag {
		return true
	}
	if i := strings.LastIndex(stored, ":"); i >= 0 && !strings.Contains(stored[i:], "/") && stored[i+1:] == tag {
		return true // "train/seed:v1" answers to "v1"
	}
	return strings.HasSuffix(stored, "/"+tag) // "docker.io/train/seed:v1" to "train/seed:v1"
}

// blobStore reads content-addressed blobs by digest, capped.
type blobStore interface {
	// manifest reads an index or a manifest, at most maxManifestBytes.
	manifest(digest string) ([]byte, error)
	// read reads a small blob (a config), at most max bytes.
	read(digest string, max int64) ([]byte, error)
	layer(d ociDesc) (*layerBlob, error)
}

// walkIndex lists the images reachable from the top-level descriptors,
// expanding nested indexes (each one read once, however often it is
// referenced), up to maxCandidates.
func walkIndex(bs blobStore, top []ociDesc) ([]candidate, error) {
	expanded := map[string][]ociDesc{}
	var out []candidate
	visits := 0
	var expand func(d ociDesc, depth int, names []string, topDigest string) error
	expand = func(d ociDesc, depth int, names []string, topDigest string) error {
		if len(out) >= maxCandidates {
			return fmt.Errorf("the index lists more than %d images (repeats and nested indexes included)", maxCandidates)
		}
		// An index naming one nested index thousands of times, which names
		// another thousands of times, costs one read each (expanded) but
		// could make the walk itself go on for billions of steps.
		if visits++; visits > maxIndexEntries {
			return fmt.Errorf("the index has more than %d entries (repeats and nested indexes included)", maxIndexEntries)
		}
		if registry.CheckDigest(d.Digest) != nil {
			return fmt.Errorf("descriptor digest %q is not a sha256 or sha512 digest", trunc(d.Digest))
		}
		mt := d.MediaType
		if mt == "" || !isIndexType(mt) && !isManifestType(mt) {
			// Tell by the blob itself: some writers leave the type out.
			b, err := bs.manifest(d.Digest)
			if err != nil {
				return err
			}
			var doc ociDoc
			if json.Unmarshal(b, &doc) != nil {
				return nil // not a manifest: an artifact riding along
			}
			switch {
			case doc.Manifests != nil:
				mt = "application/vnd.oci.image.index.v1+json"
			case doc.Config != nil:
				mt = "application/vnd.oci.image.manifest.v1+json"
			default:
				return nil
			}
		}
		if isManifestType(mt) {
			if d.Platform != nil && d.Platform.OS == "unknown" {
				return nil // attestations and signatures ride along in indexes
			}
			out = append(out, candidate{desc: d, names: names, top: topDigest})
			return nil
		}
		if depth >= maxIndexDepth {
			return errors.New("image indexes nested too deep")
		}
		children, ok := expanded[d.Digest]
		if !ok {
			b, err := bs.manifest(d.Digest)
			if err != nil {
				return err
			}
			var doc ociDoc
			if err := json.Unmarshal(b, &doc); err != nil {
				return fmt.Errorf("index %s: %v", shortDigest(d.Digest), err)
			}
			children = doc.Manifests
			expanded[d.Digest] = children
		}
		for _, c := range children {
			if err := expand(c, depth+1, names, topDigest); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range top {
		if err := expand(d, 0, refNames(d), d.Digest); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// choose picks one image from the candidates by the selector and platform.
func choose(bs blobStore, cands []candidate, sel selector, want *platform) (candidate, error) {
	if len(cands) == 0 {
		return candidate{}, errors.New("it holds no image")
	}
	var pool []candidate
	switch {
	case sel.digest != "":
		for _, c := range cands {
			if c.desc.Digest == sel.digest || c.top == sel.digest {
				pool = append(pool, c)
			}
		}
		if len(pool) == 0 {
			return candidate{}, fmt.Errorf("no image or index with digest %s", trunc(sel.digest))
		}
	case sel.tag != "":
		for _, c := range cands {
			for _, n := range c.names {
				if tagMatches(n, sel.tag) {
					pool = append(pool, c)
					break
				}
			}
		}
		if len(pool) == 0 {
			return candidate{}, fmt.Errorf("no image tagged %q (it has %s)", trunc(sel.tag), listNames(cands))
		}
	default:
		// Several tags: the user must say which. Untagged descriptors are
		// one multi-platform set (as `layout.Write` of an index leaves them).
		pool = cands
		names := map[string]bool{}
		for _, c := range cands {
			for _, n := range c.names {
				names[n] = true
			}
		}
		if len(names) > 1 {
			return candidate{}, fmt.Errorf("it holds %d tagged images (%s); name one as PATH:TAG or PATH@sha256:…", len(names), listNames(cands))
		}
	}
	if want == nil && len(pool) == 1 {
		return pool[0], nil
	}
	w := want
	if w == nil {
		w = mustPlatform(DefaultPlatform)
	}
	var have []string
	for _, c := range pool {
		p := c.desc.Platform
		if p == nil {
			var err error
			if p, err = platformOf(bs, c.desc); err != nil {
				return candidate{}, err
			}
		}
		if p.matches(w) {
			return c, nil
		}
		have = append(have, p.String())
	}
	sort.Strings(have)
	have = dedupe(have)
	if len(have) > maxListed {
		have = append(have[:maxListed], fmt.Sprintf("and %d more", len(have)-maxListed))
	}
	return candidate{}, fmt.Errorf("no image for platform %s (it has %s); pick one with --platform", w, strings.Join(have, ", "))
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// listNames quotes the tags the candidates carry, at most maxListed.
func listNames(cands []candidate) string {
	seen := map[string]bool{}
	var names []string
	for _, c := range cands {
		ns := c.names
		if len(ns) == 0 {
			ns = []string{shortDigest(c.top)}
		}
		for _, n := range ns {
			if !seen[n] {
				seen[n] = true
				names = append(names, trunc(n))
			}
		}
	}
	sort.Strings(names)
	if len(names) > maxListed {
		names = append(names[:maxListed], fmt.Sprintf("and %d more", len(names)-maxListed))
	}
	if len(names) == 0 {
		return "no tags"
	}
	return strings.Join(names, ", ")
}

// platformOf reads a manifest's config for its platform.
func platformOf(bs blobStore, d ociDesc) (*platform, error) {
	m, err := readManifest(bs, d.Digest)
	if err != nil {
		return nil, err
	}
	b, err := bs.read(m.Config.Digest, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	var c struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Variant      string `json:"variant"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("config %s: %v", shortDigest(m.Config.Digest), err)
	}
	return &platform{OS: c.OS, Architecture: c.Architecture, Variant: c.Variant}, nil
}

func readManifest(bs blobStore, digest string) (*ociDoc, error) {
	b, err := bs.manifest(digest)
	if err != nil {
		return nil, err
	}
	var m ociDoc
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %v", shortDigest(digest), err)
	}
	if m.Config == nil || registry.CheckDigest(m.Config.Digest) != nil {
		return nil, fmt.Errorf("manifest %s: no config", shortDigest(digest))
	}
	return &m, nil
}

// resolveManifest reads the chosen manifest, its config and its layers.
func resolveManifest(bs blobStore, digest string) (*resolved, error) {
	m, err := readManifest(bs, digest)
	if err != nil {
		return nil, err
	}
	cfg, err := bs.read(m.Config.Digest, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	if err := checkLayerCount(len(m.Layers)); err != nil {
		return nil, err
	}
	r := &resolved{manifestDigest: digest, config: cfg}
	for i, ld := range m.Layers {
		if registry.CheckDigest(ld.Digest) != nil {
			return nil, fmt.Errorf("layer %d: digest %q is not a sha256 or sha512 digest", i+1, trunc(ld.Digest))
		}
		l, err := bs.layer(ld)
		if err != nil {
			return nil, fmt.Errorf("layer %d (%s): %w", i+1, shortDigest(ld.Digest), err)
		}
		l.index, l.digest, l.mediaType = i, ld.Digest, ld.MediaType
		r.layers = append(r.layers, l)
	}
	return r, nil
}

// layoutStore is an OCI image layout folder.
type layoutStore struct{ dir string }

// blobPath is a blob's path inside the layout folder. Blobs are opened
// through an os.Root handle on the folder (source.OpenRegularIn): a blob
// that is a link to a host file (a tarball of the host's /etc planted as a
// layer, /etc/shadow as a config) is refused, never read. Links that stay
// inside the folder are followed.
func (s layoutStore) blobPath(digest string) (string, error) {
	if registry.CheckDigest(digest) != nil {
		return "", fmt.Errorf("digest %q is not a sha256 or sha512 digest", trunc(digest))
	}
	alg, hexd, _ := strings.Cut(digest, ":")
	return path.Join("blobs", alg, hexd), nil
}

// read returns a small blob (an index, a manifest, a config) whose bytes
// hash to its digest: a blob that does not (a file swapped in, or a link
// to something else) is refused, as a registry client refuses it. Layers
// are read as streams (layer) and not hashed.
func (s layoutStore) manifest(digest string) ([]byte, error) { return s.read(digest, maxManifestBytes) }

func (s layoutStore) read(digest string, max int64) ([]byte, error) {
	p, err := s.blobPath(digest)
	if err != nil {
		return nil, err
	}
	b, err := source.ReadRegularIn(s.dir, p, max)
	if err != nil {
		return nil, err
	}
	if got := registry.Digest(b, digest); got != digest {
		return nil, fmt.Errorf("blob %s: its bytes hash to %s", shortDigest(digest), shortDigest(got))
	}
	return b, nil
}

func (s layoutStore) layer(d ociDesc) (*layerBlob, error) {
	p, err := s.blobPath(d.Digest)
	if err != nil {
		return nil, err
	}
	openBlob := func() (*os.File, os.FileInfo, error) { return source.OpenRegularIn(s.dir, p) }
	f, fi, err := openBlob()
	if err != nil {
		return nil, err
	}
	f.Close()
	return fileLayer(openBlob, 0, fi.Size()), nil
}

// fileLayer is a layer stored as bytes [off, off+n) of a local file, which
// openFile opens (each pass and each range opens it again).
func fileLayer(openFile func() (*os.File, os.FileInfo, error), off, n int64) *layerBlob {
	return &layerBlob{
		size: n,
		open: func() (io.ReadCloser, error) {
			f, _, err := openFile()
			if err != nil {
				return nil, err
			}
			return readCloser{io.NewSectionReader(f, off, n), f.Close}, nil
		},
		openAt: func(o, k int64) (io.ReadCloser, error) {
			f, _, err := openFile()
			if err != nil {
				return nil, err
			}
			return readCloser{io.NewSectionReader(f, off+o, min(k, n-o)), f.Close}, nil
		},
	}
}

// openLayout resolves an image in an OCI layout folder.
func openLayout(dir string, sel selector, want *platform) (*resolved, error) {
	b, err := source.ReadRegularIn(dir, "index.json", maxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("not an OCI layout folder: %w", err)
	}
	var idx ociDoc
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("index.json: %v", err)
	}
	bs := layoutStore{dir: dir}
	cands, err := walkIndex(bs, idx.Manifests)
	if err != nil {
		return nil, err
	}
	c, err := choose(bs, cands, sel, want)
	if err != nil {
		return nil, err
	}
	return resolveManifest(bs, c.desc.Digest)
}

// archiveStore is a docker-save archive: its members located once by
// reading the tar headers (bodies are skipped by seeking).
type archiveStore struct {
	file    string
	members map[string][2]int64 // clean name -> offset, size
}

func scanArchive(p string) (*archiveStore, error) {
	f, _, err := source.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a := &archiveStore{file: p, members: map[string][2]int64{}}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not a docker-save archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg { // tar.Reader reports the old TypeRegA as TypeReg
			continue
		}
		if len(a.members) >= maxArchiveFiles {
			return nil, fmt.Errorf("more than %d files in the archive", maxArchiveFiles)
		}
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, err
		}
		a.members[path.Clean(strings.TrimPrefix(h.Name, "./"))] = [2]int64{off, h.Size}
	}
	return a, nil
}

func (a *archiveStore) readMember(name string, max int64) ([]byte, error) {
	m, ok := a.members[path.Clean(name)]
	if !ok {
		return nil, fmt.Errorf("%s: not in the archive", trunc(name))
	}
	if m[1] > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d read", trunc(name), m[1], max)
	}
	f, _, err := source.OpenRegular(a.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, m[1])
	if _, err := f.ReadAt(b, m[0]); err != nil {
		return nil, err
	}
	return b, nil
}

func (a *archiveStore) manifest(digest string) ([]byte, error) {
	return a.read(digest, maxManifestBytes)
}

func (a *archiveStore) read(digest string, max int64) ([]byte, error) {
	if registry.CheckDigest(digest) != nil {
		return nil, fmt.Errorf("digest %q is not a sha256 or sha512 digest", trunc(digest))
	}
	alg, hexd, _ := strings.Cut(digest, ":")
	return a.readMember("blobs/"+alg+"/"+hexd, max)
}

func (a *archiveStore) layer(d ociDesc) (*layerBlob, error) {
	alg, hexd, _ := strings.Cut(d.Digest, ":")
	return a.memberLayer("blobs/" + alg + "/" + hexd)
}

func (a *archiveStore) memberLayer(name string) (*layerBlob, error) {
	m, ok := a.members[path.Clean(name)]
	if !ok {
		return nil, fmt.Errorf("%s: not in the archive", trunc(name))
	}
	return fileLayer(func() (*os.File, os.FileInfo, error) { return source.OpenRegular(a.file) }, m[0], m[1]), nil
}

// dockerManifest is one image of a docker-save archive's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// openArchive resolves an image in a docker-save archive. Its layers are
// taken in manifest.json's order (bottom first), whatever the order of the
// members in the tar. The image ID is the config's digest; the manifest
// digest is known where the archive also holds an OCI index (Docker 25 and
// later) naming a manifest with that config.
func openArchive(p string, sel selector, want *platform) (*resolved, error) {
	a, err := scanArchive(p)
	if err != nil {
		return nil, err
	}
	b, err := a.readMember("manifest.json", maxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("not a docker-save archive: %w", err)
	}
	var ms []dockerManifest
	if err := json.Unmarshal(b, &ms); err != nil {
		return nil, fmt.Errorf("manifest.json: %v", err)
	}
	if len(ms) > maxCandidates {
		return nil, fmt.Errorf("manifest.json lists more than %d images", maxCandidates)
	}
	var cands []candidate
	for i, m := range ms {
		cands = append(cands, candidate{names: m.RepoTags, top: fmt.Sprint(i)})
	}
	var pick []int
	for i, m := range ms {
		switch {
		case sel.digest != "":
			cfg, err := a.readMember(m.Config, maxConfigBytes)
			if err == nil && digestOf(cfg) == sel.digest {
				pick = append(pick, i)
			}
		case sel.tag != "":
			for _, t := range m.RepoTags {
				if tagMatches(t, sel.tag) {
					pick = append(pick, i)
					break
				}
			}
		default:
			pick = append(pick, i)
		}
	}
	switch {
	case len(ms) == 0:
		return nil, errors.New("manifest.json lists no image")
	case len(pick) == 0 && sel.digest != "":
		return nil, fmt.Errorf("no image with config digest %s (give the image ID)", trunc(sel.digest))
	case len(pick) == 0:
		return nil, fmt.Errorf("no image tagged %q (it has %s)", trunc(sel.tag), listNames(cands))
	case len(pick) > 1:
		return nil, fmt.Errorf("it holds %d images (%s); name one as ARCHIVE:TAG", len(pick), listNames(cands))
	}
	m := ms[pick[0]]
	if err := checkLayerCount(len(m.Layers)); err != nil {
		return nil, err
	}
	cfg, err := a.readMember(m.Config, maxConfigBytes)
	if err != nil {
		return nil, err
	}
	r := &resolved{config: cfg}
	for i, name := range m.Layers {
		l, err := a.memberLayer(name)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		l.index, l.digest = i, layerDigestName(name)
		r.layers = append(r.layers, l)
	}
	r.manifestDigest = a.manifestFor(digestOf(cfg))
	return r, nil
}

// layerDigestName names a docker-save layer by its member name: the digest
// for blobs/sha256/HEX members, the folder for legacy HEX/layer.tar ones.
func layerDigestName(name string) string {
	if alg, hexd, ok := strings.Cut(strings.TrimPrefix(name, "blobs/"), "/"); ok && strings.HasPrefix(name, "blobs/") {
		return alg + ":" + hexd
	}
	return path.Dir(name)
}

// manifestFor finds the digest of the manifest whose config is cfgDigest
// in the archive's OCI index.json, if it has one.
func (a *archiveStore) manifestFor(cfgDigest string) string {
	b, err := a.readMember("index.json", maxManifestBytes)
	if err != nil {
		return ""
	}
	var idx ociDoc
	if json.Unmarshal(b, &idx) != nil {
		return ""
	}
	cands, err := walkIndex(a, idx.Manifests)
	if err != nil {
		return ""
	}
	for _, c := range cands {
		if m, err := readManifest(a, c.desc.Digest); err == nil && m.Config.Digest == cfgDigest {
			return c.desc.Digest
		}
	}
	return ""
}

// digestOf is b's sha256 digest: an image ID, a docker-save config's name.
func digestOf(b []byte) string { return registry.Digest(b, "sha256") }

func statPath(p string) (os.FileInfo, error) { return os.Stat(p) }
