// Package imagesource reads a container image as a source.Source without a
// Docker daemon and without unpacking it: from a registry (the user's docker
// credentials), a `docker save` archive or an OCI layout folder, through
// github.com/google/go-containerregistry.
//
// Opening an image walks its layers once, from the top, and keeps an
// in-memory index of the file headers that survive the union (whiteouts and
// opaque folders honoured). File contents are read only when a collector
// opens a file: from an uncompressed layer in a registry or OCI layout, by
// byte range at the entry's offset; from a compressed layer, by streaming the
// layer again up to the entry. Nothing is ever written to disk, and the bytes
// kept in memory are capped (Options.MaxCache).
package imagesource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// DefaultPlatform is the platform picked from a multi-platform image when
// none is asked for: the one CI runners and GPU nodes mostly are, and
// go-containerregistry's own default, so a verdict does not depend on the
// machine fastpath happens to run on.
const DefaultPlatform = "linux/amd64"

// DefaultMaxCache caps the file bytes kept in memory per image.
const DefaultMaxCache = 64 << 20

// Options tune Open.
type Options struct {
	// Platform ("linux/arm64", "linux/arm64/v8") picks an image from a
	// multi-platform index; "" means DefaultPlatform there, and any platform
	// for a single image.
	Platform string
	// Env overrides the image config's environment (--env).
	Env source.Env
	// Keychain finds registry credentials; nil: the user's docker config
	// (authn.DefaultKeychain).
	Keychain authn.Keychain
	// Transport is the HTTP transport for registries; nil: remote.DefaultTransport.
	Transport http.RoundTripper
	// MaxCache caps the file bytes kept in memory; 0: DefaultMaxCache.
	MaxCache int64
}

// Stats count what reading an image cost.
type Stats struct {
	NetworkBytes int64 // HTTP response body bytes from the registry (remote images)
	StreamBytes  int64 // uncompressed layer bytes streamed (compressed layers, docker-save archives)
	RangeBytes   int64 // bytes read in place from uncompressed layer blobs
	LayerPasses  int64 // times a layer was streamed from its start
	RangeReads   int64 // ranged reads opened on uncompressed blobs
}

type counters struct {
	network, stream, ranged, passes, rangeReads atomic.Int64
}

// Source is an image as a source.Source. It is safe for concurrent use.
type Source struct {
	ctx      context.Context // the one Open was given: the Source interface carries none, and blobs are read lazily
	info     source.Info
	env      source.Env
	layers   []*layerBlob
	idx      *index
	links    *source.Resolver
	cache    *pageCache
	warnings []string
	stats    counters
}

var _ source.Source = (*Source)(nil)

// Open reads the image ref names: an OCI layout folder, a `docker save`
// archive (a file), or else a registry reference. The layers are indexed
// before Open returns; problems with single entries or layers become
// Warnings, not errors.
func Open(ctx context.Context, ref string, o Options) (*Source, error) {
	var want *v1.Platform
	if o.Platform != "" {
		p, err := v1.ParsePlatform(o.Platform)
		if err != nil || p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("--platform %q: want OS/ARCH, e.g. linux/arm64", o.Platform)
		}
		want = p
	}
	if o.MaxCache <= 0 {
		o.MaxCache = DefaultMaxCache
	}
	s := &Source{ctx: ctx, cache: newPageCache(o.MaxCache)}
	img, openAt, err := s.openImage(ctx, ref, want, o)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", ref, err)
	}
	if want != nil && (cfg.OS != want.OS || cfg.Architecture != want.Architecture) {
		return nil, fmt.Errorf("image %s is %s/%s, not %s", ref, cfg.OS, cfg.Architecture, want)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	plat := cfg.OS + "/" + cfg.Architecture
	if cfg.Variant != "" {
		plat += "/" + cfg.Variant
	}
	s.info = source.Info{Kind: source.KindImage, Image: ref, Digest: digest.String(), Platform: plat}
	s.env = imageEnv(cfg.Config.Env, o.Env)

	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("image %s: layers: %w", ref, err)
	}
	for i, l := range layers {
		b := &layerBlob{index: i, layer: l, stats: &s.stats, ctx: ctx}
		if d, err := l.Digest(); err == nil {
			b.digest = d.String()
		}
		if openAt != nil {
			if d, err := l.Digest(); err == nil {
				if at := openAt(d); at != nil {
					b.detectRaw(at)
				}
			}
		}
		s.layers = append(s.layers, b)
	}
	s.idx = buildIndex(s.layers, s.cache, s.warn)
	s.links = source.NewResolver(s.lstatMode, s.readLinkRaw)
	return s, nil
}

// blobOpener opens a byte range of a blob in place; nil where blobs can only
// be streamed from their start.
type blobOpener func(d v1.Hash) func(off, n int64) (io.ReadCloser, error)

func (s *Source) openImage(ctx context.Context, ref string, want *v1.Platform, o Options) (v1.Image, blobOpener, error) {
	if fi, err := os.Stat(ref); err == nil {
		if fi.IsDir() {
			return openLayout(ref, want)
		}
		img, err := tarball.ImageFromPath(ref, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("--image %s: not a docker-save archive: %w", ref, err)
		}
		return img, nil, nil
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, nil, fmt.Errorf("--image %s: neither a file, an OCI layout folder nor an image reference: %w", ref, err)
	}
	base := o.Transport
	if base == nil {
		base = remote.DefaultTransport
	}
	counted := &countingTransport{base: base, n: &s.stats.network}
	kc := o.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(kc), remote.WithTransport(counted)}
	desc, err := remote.Get(r, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("--image %s: %w", ref, err)
	}
	var img v1.Image
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, nil, fmt.Errorf("--image %s: %w", ref, err)
		}
		img, err = pickPlatform(idx, want)
		if err != nil {
			return nil, nil, fmt.Errorf("--image %s: %w", ref, err)
		}
	case desc.MediaType.IsImage():
		if img, err = desc.Image(); err != nil {
			return nil, nil, fmt.Errorf("--image %s: %w", ref, err)
		}
	default:
		return nil, nil, fmt.Errorf("--image %s: unsupported manifest type %s", ref, desc.MediaType)
	}
	repo := r.Context()
	auth, err := kc.Resolve(repo)
	if err != nil {
		auth = authn.Anonymous
	}
	rt, err := transport.NewWithContext(ctx, repo.Registry, auth, counted, []string{repo.Scope(transport.PullScope)})
	if err != nil {
		// Ranged reads are an optimisation: without them every layer is streamed.
		s.warn(fmt.Sprintf("image %s: no ranged blob reads (%v); layers are streamed whole", ref, err))
		return img, nil, nil
	}
	client := &http.Client{Transport: rt}
	opener := func(d v1.Hash) func(off, n int64) (io.ReadCloser, error) {
		u := fmt.Sprintf("%s://%s/v2/%s/blobs/%s", repo.Scheme(), repo.RegistryStr(), repo.RepositoryStr(), d)
		return func(off, n int64) (io.ReadCloser, error) { return rangeGet(ctx, client, u, off, n) }
	}
	return img, opener, nil
}

func openLayout(dir string, want *v1.Platform) (v1.Image, blobOpener, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("--image %s: not an OCI layout folder: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, nil, fmt.Errorf("--image %s: %w", dir, err)
	}
	img, err := pickPlatform(idx, want)
	if err != nil {
		return nil, nil, fmt.Errorf("--image %s: %w", dir, err)
	}
	opener := func(d v1.Hash) func(off, n int64) (io.ReadCloser, error) {
		blob := path.Join(dir, "blobs", d.Algorithm, d.Hex)
		return func(off, n int64) (io.ReadCloser, error) {
			f, err := os.Open(blob)
			if err != nil {
				return nil, err
			}
			return struct {
				io.Reader
				io.Closer
			}{io.NewSectionReader(f, off, n), f}, nil
		}
	}
	return img, opener, nil
}

// pickPlatform chooses the image for want from an index (nested indexes are
// followed). Without want, a lone image is taken whatever its platform, and
// DefaultPlatform among several.
func pickPlatform(idx v1.ImageIndex, want *v1.Platform) (v1.Image, error) {
	type cand struct {
		img  func() (v1.Image, error)
		plat *v1.Platform
	}
	var cands []cand
	var walk func(idx v1.ImageIndex, depth int) error
	walk = func(idx v1.ImageIndex, depth int) error {
		if depth > 4 {
			return errors.New("image index nested too deep")
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return err
		}
		for _, d := range im.Manifests {
			switch {
			case d.MediaType.IsIndex():
				child, err := idx.ImageIndex(d.Digest)
				if err != nil {
					return err
				}
				if err := walk(child, depth+1); err != nil {
					return err
				}
			case d.MediaType.IsImage():
				if d.Platform != nil && d.Platform.OS == "unknown" {
					continue // attestations and signatures ride along in indexes
				}
				h := d.Digest
				cands = append(cands, cand{img: func() (v1.Image, error) { return idx.Image(h) }, plat: d.Platform})
			}
		}
		return nil
	}
	if err := walk(idx, 0); err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, errors.New("the index holds no image")
	}
	if want == nil {
		if len(cands) == 1 {
			return cands[0].img()
		}
		want, _ = v1.ParsePlatform(DefaultPlatform)
	}
	var have []string
	for _, c := range cands {
		if c.plat == nil {
			// A descriptor without a platform: ask the image's config.
			img, err := c.img()
			if err != nil {
				return nil, err
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				return nil, err
			}
			if p := cfg.Platform(); p != nil {
				c.plat = p
			} else {
				c.plat = &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture}
			}
		}
		if c.plat.Satisfies(*want) {
			return c.img()
		}
		have = append(have, c.plat.String())
	}
	sort.Strings(have)
	return nil, fmt.Errorf("no image for platform %s (the index has %s); pick one with --platform", want, strings.Join(have, ", "))
}

// imageEnv is the image config's environment with the overrides on top, and
// the defaults a container runtime gives where the config sets none.
func imageEnv(cfgEnv []string, overrides source.Env) source.Env {
	e := source.Env{}
	for _, kv := range cfgEnv {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			e[k] = v
		}
	}
	for k, v := range overrides {
		e[k] = v
	}
	if _, ok := e["PATH"]; !ok {
		e["PATH"] = source.DefaultContainerPATH
	}
	if _, ok := e["HOME"]; !ok {
		e["HOME"] = "/root"
	}
	return e
}

func (s *Source) warn(w string) { s.warnings = append(s.warnings, w) }

// Warnings are the problems met while indexing: hostile or malformed entries
// rejected one by one, layers that are truncated or not tar archives.
func (s *Source) Warnings() []string { return append([]string(nil), s.warnings...) }

// Stats returns what reading the image has cost so far.
func (s *Source) Stats() Stats {
	return Stats{
		NetworkBytes: s.stats.network.Load(),
		StreamBytes:  s.stats.stream.Load(),
		RangeBytes:   s.stats.ranged.Load(),
		LayerPasses:  s.stats.passes.Load(),
		RangeReads:   s.stats.rangeReads.Load(),
	}
}

// Files is the number of paths in the merged view (for reports and tests).
func (s *Source) Files() int { return len(s.idx.entries) }

func (s *Source) Info() source.Info { return s.info }
func (s *Source) Env() source.Env   { return s.env }

func (s *Source) Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	return nil, source.ErrNotLive
}

func (s *Source) lstatMode(p string) (fs.FileMode, error) {
	if e := s.idx.lookup(p); e != nil {
		return e.mode, nil
	}
	return 0, fs.ErrNotExist
}

func (s *Source) readLinkRaw(p string) (string, error) {
	e := s.idx.lookup(p)
	if e == nil {
		return "", fs.ErrNotExist
	}
	if e.mode&fs.ModeSymlink == 0 {
		return "", syscall.EINVAL
	}
	return e.link, nil
}

func (s *Source) Resolve(name string) (string, error) { return s.links.Resolve(name, true) }

func (s *Source) entry(op, name string, follow bool) (*entry, error) {
	p, err := s.links.Resolve(name, follow)
	if err != nil {
		return nil, err
	}
	e := s.idx.lookup(p)
	if e == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return e, nil
}

func (s *Source) Stat(name string) (fs.FileInfo, error) {
	e, err := s.entry("stat", name, true)
	if err != nil {
		return nil, err
	}
	return e.info(), nil
}

func (s *Source) Lstat(name string) (fs.FileInfo, error) {
	e, err := s.entry("lstat", name, false)
	if err != nil {
		return nil, err
	}
	return e.info(), nil
}

func (s *Source) ReadLink(name string) (string, error) {
	e, err := s.entry("readlink", name, false)
	if err != nil {
		return "", err
	}
	if e.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.EINVAL}
	}
	return e.link, nil
}

func (s *Source) ReadDir(name string) ([]fs.DirEntry, error) {
	e, err := s.entry("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if !e.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	names := s.idx.children[e.path]
	out := make([]fs.DirEntry, 0, len(names))
	for _, n := range names {
		if c := s.idx.lookup(path.Join(e.path, n)); c != nil {
			out = append(out, fs.FileInfoToDirEntry(c.info()))
		}
	}
	return out, nil
}

func (s *Source) Open(name string) (source.File, error) {
	e, err := s.entry("open", name, true)
	if err != nil {
		return nil, err
	}
	switch {
	case e.mode.IsDir():
		return &imageFile{src: s, e: e, name: name}, nil
	case !e.mode.IsRegular():
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a regular file or directory")}
	case e.unreadable != "":
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New(e.unreadable)}
	}
	return &imageFile{src: s, e: e, name: name}, nil
}
