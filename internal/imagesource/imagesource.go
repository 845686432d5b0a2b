// Package imagesource reads a container image as a source.Source without a
// Docker daemon and without unpacking it: an OCI layout folder, a `docker
// save` archive, or a registry reference (the user's docker credentials,
// through our own registry client, internal/imagesource/registry).
//
// Opening an image reads each layer once, from the top layer down, in one
// streaming pass: it keeps an index of the file headers that survive the
// union (whiteouts, opaque folders and hard links as overlayfs and `umoci
// unpack` honour them) and, of the files the caller declared it will read
// (Options.Needs), small ones whole and ELF files in the ranges their
// readers ask for (capture.go). Reads after that pass are served from what
// was kept; an uncompressed layer in a local file or a registry is read in
// place by byte range instead. A read of something not kept streams its
// layer again (Stats.Rereads), so a missing need costs time, never a wrong
// answer. Nothing is ever written to disk, and the bytes kept are capped
// (Options.MaxCache).
package imagesource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fastpath-dev/fastpath/internal/imagesource/registry"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Keychain finds registry credentials (registry host -> credentials).
type Keychain = registry.Keychain

// Credentials are what a Keychain finds for a registry.
type Credentials = registry.Credentials

// DefaultPlatform is the platform picked from a multi-platform image when
// none is asked for: the one CI runners and GPU nodes mostly are, and
// go-containerregistry's own default, so a verdict does not depend on the
// machine fastpath happens to run on.
const DefaultPlatform = "linux/amd64"

// DefaultMaxCache caps the file bytes kept in memory per image: what the
// one pass keeps of declared files, and pages read later.
const DefaultMaxCache = 256 << 20

// DefaultTimeout bounds each wait on a registry: connecting, the TLS
// handshake, and the response headers of every request.
const DefaultTimeout = 30 * time.Second

// maxWarnings caps the warnings kept; the rest are counted in one line.
const maxWarnings = 200

// Options tune Open.
type Options struct {
	// Platform ("linux/arm64", "linux/arm64/v8") picks an image from a
	// multi-platform index; "" means DefaultPlatform there, and any platform
	// for a single image. A variant is optional on either side.
	Platform string
	// Env overrides the image config's environment (--env).
	Env source.Env
	// Needs are the files the caller will read (collect.Needs): the one
	// pass over each layer keeps them.
	Needs []source.Need
	// Keychain finds registry credentials when a registry refuses an
	// anonymous pull; nil: the user's docker config
	// (registry.DockerConfig: config.json's auths, credHelpers and
	// credsStore).
	Keychain Keychain
	// Transport is the HTTP transport for registries; nil: one with
	// Timeout on connecting, TLS and response headers.
	Transport http.RoundTripper
	// Timeout bounds each wait on a registry; 0: DefaultTimeout.
	Timeout time.Duration
	// MaxCache caps the file bytes kept in memory; 0: DefaultMaxCache.
	MaxCache int64
}

// Stats count what reading an image cost.
type Stats struct {
	NetworkBytes    int64 // HTTP response body bytes from the registry (remote images)
	CompressedBytes int64 // layer blob bytes streamed, as stored
	StreamBytes     int64 // uncompressed layer bytes streamed
	RangeBytes      int64 // bytes read in place from uncompressed layer blobs
	LayerPasses     int64 // times a layer was streamed from its start (one per layer, plus Rereads)
	Rereads         int64 // passes for reads of parts the one pass did not keep
	RangeReads      int64 // ranged reads opened on uncompressed blobs
	KeptReads       int64 // reads served from what the one pass kept
	KeptBytes       int64 // bytes kept by the one pass
}

type counters struct {
	network, compressed, stream, ranged, passes, rereads, rangeReads, keptReads atomic.Int64
}

// Source is an image as a source.Source. It is safe for concurrent use.
type Source struct {
	info   source.Info
	env    source.Env
	layers []*layerBlob
	idx    *index
	links  *source.Resolver
	cache  *pageCache
	keep   *budget
	max    int64
	stats  counters

	mu          sync.Mutex
	warnings    []string
	lostWarning int
	unverified  error // a registry layer whose bytes did not match its digest
}

var _ source.Source = (*Source)(nil)

// Open reads the image ref names: an OCI layout folder or a docker-save
// archive, each optionally followed by ":TAG" or "@sha256:…", or else a
// registry reference. Anything that looks like a path (see looksLikePath)
// is one, and fails here when it does not exist. The layers are read
// before Open returns; problems with single entries or layers become
// Warnings, not errors.
func Open(ctx context.Context, ref string, o Options) (*Source, error) {
	var want *platform
	if o.Platform != "" {
		p, err := parsePlatform(o.Platform)
		if err != nil {
			return nil, err
		}
		want = p
	}
	if o.MaxCache <= 0 {
		o.MaxCache = DefaultMaxCache
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	s := &Source{cache: newPageCache(o.MaxCache), keep: newBudget(o.MaxCache), max: o.MaxCache}
	var r *resolved
	var err error
	if p, sel, ok := localRef(ref); ok {
		if isDir(p) {
			r, err = openLayout(p, sel, want)
		} else {
			r, err = openArchive(p, sel, want)
		}
		if err != nil {
			return nil, fmt.Errorf("--image %s: %w", trunc(ref), err)
		}
	} else if looksLikePath(ref) {
		return nil, fmt.Errorf("--image %s: no such file or folder (a path is never looked up in a registry)", trunc(ref))
	} else if r, err = s.openRemote(ctx, ref, want, o); err != nil {
		return nil, err
	}
	cfg, err := parseConfig(r.config)
	if err != nil {
		return nil, fmt.Errorf("--image %s: config: %w", trunc(ref), err)
	}
	have := &platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}
	if want != nil && !have.matches(want) {
		return nil, fmt.Errorf("--image %s is %s, not %s", trunc(ref), have, want)
	}
	s.info = source.Info{Kind: source.KindImage, Image: ref, Digest: r.manifestDigest, ImageID: digestOf(r.config), Platform: have.String()}
	s.env = imageEnv(cfg.Config.Env, o.Env)
	for _, l := range r.layers {
		l.ctx, l.stats = ctx, &s.stats
		l.detectRaw()
	}
	s.layers = r.layers
	s.idx = buildIndex(s.layers, source.CompileNeeds(o.Needs), s.keep, s.warn)
	s.links = source.NewResolver(s.lstatMode, s.readLinkRaw)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("--image %s: %w", trunc(ref), err)
	}
	s.mu.Lock()
	unverified := s.unverified
	s.mu.Unlock()
	if unverified != nil {
		return nil, fmt.Errorf("--image %s: %w", trunc(ref), unverified)
	}
	return s, nil
}

func isDir(p string) bool {
	fi, err := statPath(p)
	return err == nil && fi.IsDir()
}

// registryTransport is the default transport with every wait bounded: a
// registry that accepts a connection and never answers fails a request
// after timeout, as does one that never finishes a handshake.
func registryTransport(timeout time.Duration) http.RoundTripper {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		ForceAttemptHTTP2:     true,
	}
}

func (s *Source) openRemote(ctx context.Context, ref string, want *platform, o Options) (*resolved, error) {
	r, err := registry.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("--image %s: neither a file, an OCI layout folder nor an image reference: %w", trunc(ref), err)
	}
	base := o.Transport
	if base == nil {
		base = registryTransport(o.Timeout)
	}
	var kc registry.Keychain = registry.DockerConfig{Timeout: o.Timeout}
	if o.Keychain != nil {
		kc = o.Keychain
	}
	c := registry.New(r, registry.Options{Transport: &countingTransport{base: base, n: &s.stats.network}, Keychain: kc, Timeout: o.Timeout})
	m, err := c.Manifest(ctx, r.Identifier(), maxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("--image %s: %w", ref, err)
	}
	isIndex, err := isIndexDoc(m)
	if err != nil {
		return nil, fmt.Errorf("--image %s: %w", ref, err)
	}
	// From here on the registry is read as a layout folder is: the same
	// walk of nested indexes, platform choice and manifest checks
	// (local.go), through a store that fetches each manifest once.
	store := &registryStore{ctx: ctx, c: c, s: s, client: c.HTTPClient(), manifests: map[string][]byte{m.Digest: m.Body}}
	digest := m.Digest
	if isIndex {
		cands, err := walkIndex(store, []ociDesc{{MediaType: registry.MediaOCIIndex, Digest: m.Digest}})
		if err != nil {
			return nil, fmt.Errorf("--image %s: %w", ref, err)
		}
		chosen, err := choose(store, cands, selector{}, want)
		if err != nil {
			return nil, fmt.Errorf("--image %s: %w", ref, err)
		}
		digest = chosen.desc.Digest
	}
	res, err := resolveManifest(store, digest)
	if err != nil {
		return nil, fmt.Errorf("--image %s: %w", ref, err)
	}
	return res, nil
}

// registryStore is a registry's repository as a blobStore: manifests (each
// fetched once, by digest, and checked against it), configs (checked), and
// layers streamed or read by range.
type registryStore struct {
	ctx       context.Context
	c         *registry.Client
	s         *Source
	client    *http.Client
	manifests map[string][]byte
}

func (r *registryStore) manifest(digest string) ([]byte, error) {
	if b, ok := r.manifests[digest]; ok {
		return b, nil
	}
	m, err := r.c.Manifest(r.ctx, digest, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	r.manifests[digest] = m.Body
	return m.Body, nil
}

func (r *registryStore) read(digest string, max int64) ([]byte, error) {
	return r.c.Blob(r.ctx, digest, max)
}

func (r *registryStore) layer(ld ociDesc) (*layerBlob, error) {
	ctx, c, d, size := r.ctx, r.c, ld.Digest, ld.Size
	if size < 0 {
		size = -1
	}
	u, client := c.BlobURL(d), r.client
	var opened atomic.Bool
	b := &layerBlob{size: size, openAt: func(off, n int64) (io.ReadCloser, error) { return rangeGet(ctx, client, u, off, n) }}
	b.open = func() (io.ReadCloser, error) {
		rc, err := c.OpenBlob(ctx, d, size)
		if err != nil || opened.Swap(true) {
			return rc, err
		}
		return &checkedToEnd{rc: rc, fail: func(err error) { r.s.setUnverified(fmt.Errorf("%s: %w", b, err)) }}, nil
	}
	return b, nil
}

// checkedToEnd is the one pass's stream of a registry layer: closing it
// reads what the pass left of the blob (a tar ends before its gzip
// stream; a broken layer is abandoned early), so the blob's size and
// digest are always checked (registry.Client.OpenBlob checks them at the
// end of the stream) and a layer that fails is reported. Later passes
// (rereads) stop where they like.
type checkedToEnd struct {
	rc   io.ReadCloser
	fail func(error)
}

func (c *checkedToEnd) Read(p []byte) (int, error) { return c.rc.Read(p) }

func (c *checkedToEnd) Close() error {
	if _, err := io.Copy(io.Discard, c.rc); err != nil {
		c.fail(err)
	}
	return c.rc.Close()
}

// setUnverified records the first layer that did not match its digest.
func (s *Source) setUnverified(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unverified == nil {
		s.unverified = err
	}
}

// isIndexDoc tells whether a fetched manifest is an index: by its media
// type (the body's, else the Content-Type), or by its fields when neither
// names one.
func isIndexDoc(m *registry.Manifest) (bool, error) {
	var d ociDoc
	if err := json.Unmarshal(m.Body, &d); err != nil {
		return false, fmt.Errorf("manifest %s: %v", shortDigest(m.Digest), err)
	}
	mt := d.MediaType
	if mt == "" {
		mt = m.MediaType
	}
	switch {
	case isIndexType(mt):
		return true, nil
	case isManifestType(mt):
		return false, nil
	case d.Manifests != nil && d.Config == nil:
		return true, nil
	case d.Config != nil:
		return false, nil
	}
	return false, fmt.Errorf("unsupported manifest type %q", trunc(mt))
}

// imageConfig is the part of an image config (OCI image spec, config.json)
// fastpath reads.
type imageConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Variant      string `json:"variant"`
	Config       struct {
		Env []string `json:"Env"`
	} `json:"config"`
}

func parseConfig(b []byte) (*imageConfig, error) {
	var c imageConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
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

// warn records a problem met while indexing; past maxWarnings they are
// only counted, so a hostile image of many bad entries cannot flood the
// output.
func (s *Source) warn(w string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.warnings) >= maxWarnings {
		s.lostWarning++
		return
	}
	s.warnings = append(s.warnings, w)
}

// Warnings are the problems met while indexing: hostile or malformed entries
// rejected one by one, layers that are truncated or not tar archives. Never
// nil.
func (s *Source) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string{}, s.warnings...)
	if s.lostWarning > 0 {
		out = append(out, fmt.Sprintf("image: %d more problems with entries not listed", s.lostWarning))
	}
	return out
}

// Stats returns what reading the image has cost so far.
func (s *Source) Stats() Stats {
	return Stats{
		NetworkBytes:    s.stats.network.Load(),
		CompressedBytes: s.stats.compressed.Load(),
		StreamBytes:     s.stats.stream.Load(),
		RangeBytes:      s.stats.ranged.Load(),
		LayerPasses:     s.stats.passes.Load(),
		Rereads:         s.stats.rereads.Load(),
		RangeReads:      s.stats.rangeReads.Load(),
		KeptReads:       s.stats.keptReads.Load(),
		KeptBytes:       s.max - s.keep.left.Load(),
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
	case !e.mode.IsRegular() || e.body == nil:
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a regular file or directory")}
	case e.body.unreadable != "":
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New(e.body.unreadable)}
	}
	return &imageFile{src: s, e: e, name: name}, nil
}
