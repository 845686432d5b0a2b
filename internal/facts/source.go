package facts

// SourceKind names what the inspected source stands for: "host", "root" or
// "image" (the constants are source.KindHost, KindRoot and KindImage).
type SourceKind string

// SourceInfo describes the source the facts were collected from. It lives
// here rather than in internal/source so that facts, the bottom layer,
// imports nothing of ours (internal/layering); source.Info is this type.
type SourceInfo struct {
	Kind SourceKind `json:"kind"`
	Root string     `json:"root,omitempty"` // the directory standing for "/" (root sources)
	Live bool       `json:"live"`           // programs may be run (host only)
	// Image sources: the reference, archive or OCI layout as given, the
	// manifest digest of the image read, and its platform (os/arch).
	Image    string `json:"image,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Platform string `json:"platform,omitempty"`
	// ImageID is the digest of the image's config (what `docker images`
	// shows as its ID); Digest is the manifest's digest, and empty where
	// the image has no manifest blob (an old docker-save archive).
	ImageID string `json:"image_id,omitempty"`
}

// ReadStats is what one view asked of its source.
type ReadStats struct {
	// Opens are files opened; Bytes the bytes read from the source for
	// them (a small file's whole content on its first open, nothing on
	// later ones; a large file's every read in place).
	Opens int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// Lookups are stat, lstat, readlink, readdir and resolve calls; Cached
	// how many of them, and of the opens, the cache answered without
	// touching the source.
	Lookups int64 `json:"lookups"`
	Cached  int64 `json:"cached"`
	// Execs are programs run (live host only) and their wall time.
	Execs  int64   `json:"execs,omitempty"`
	ExecMS float64 `json:"exec_ms,omitempty"`
}
