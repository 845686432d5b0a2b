// Package sitedist finds one named distribution in a site-packages folder,
// cheaply: one directory listing and the header of one METADATA file. The
// compiler collectors use it to tell which wheel installed a tool (pip's
// ninja, cmake, nvidia-cuda-nvcc) without needing the full pyenv listing.
package sitedist

import (
	"bufio"
	"io"
	"path"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// Dist is an installed distribution.
type Dist struct {
	Name        string // as METADATA spells it
	Version     string // as METADATA spells it
	MetadataDir string
}

// Normalize is the PEP 503 form of a distribution name: runs of -, _ and
// . become one -, letters lower case. A scan, not a regexp: doctor calls it
// for every distribution, and the regexp was a measurable part of a run on
// the seed tree (issue 17); TestNormalizeIsTheRegexp compares the two.
func Normalize(name string) string {
	plain := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '.' || c == '-' && i+1 < len(name) && isSeparator(name[i+1]) || c >= 0x80 || 'A' <= c && c <= 'Z' {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		if isSeparator(name[i]) {
			for i+1 < len(name) && isSeparator(name[i+1]) {
				i++
			}
			b.WriteByte('-')
			continue
		}
		b.WriteByte(name[i])
	}
	return strings.ToLower(b.String())
}

func isSeparator(c byte) bool { return c == '-' || c == '_' || c == '.' }

// normalizedIs reports whether Normalize(name) == want, without building
// Normalize(name) when name is ASCII: Find asks it of every dist-info
// folder of a site (5,000 at scale), several times a run.
func normalizedIs(name, want string) bool {
	j := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 {
			return Normalize(name) == want
		}
		if isSeparator(c) {
			if i > 0 && isSeparator(name[i-1]) {
				continue
			}
			c = '-'
		} else if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if j >= len(want) || want[j] != c {
			return false
		}
		j++
	}
	return j == len(want)
}

// metadataCap bounds how much of METADATA is read: the headers come first
// and are small; the long description after them is never needed.
const metadataCap = 64 << 10

// Find returns the distribution called name (any spelling) installed in
// site, from its .dist-info folder. ok is false when there is none; err
// reports a folder or METADATA that could not be read.
func Find(src source.Source, site, name string) (d Dist, ok bool, err error) {
	ents, err := src.ReadDir(site)
	if err != nil {
		return Dist{}, false, err
	}
	want := Normalize(name)
	for _, e := range ents {
		stem, isDistInfo := strings.CutSuffix(e.Name(), ".dist-info")
		if !isDistInfo {
			continue
		}
		// pip names the folder {name}-{version}.dist-info with "-" escaped
		// out of both parts, so the first "-" splits them.
		n, v, _ := strings.Cut(stem, "-")
		if !normalizedIs(n, want) {
			continue
		}
		dir := path.Join(site, e.Name())
		d := Dist{Name: n, Version: v, MetadataDir: dir}
		mn, mv, merr := readHeader(src, path.Join(dir, "METADATA"))
		if merr != nil {
			return d, true, merr
		}
		if mn != "" {
			d.Name = mn
		}
		if mv != "" {
			d.Version = mv
		}
		return d, true, nil
	}
	return Dist{}, false, nil
}

// readHeader reads Name and Version from the RFC 822 header of METADATA.
func readHeader(src source.Source, file string) (name, version string, err error) {
	f, err := src.Open(file)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, metadataCap))
	sc.Buffer(make([]byte, 0, 4096), metadataCap)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break // end of the header
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "name":
			name = strings.TrimSpace(v)
		case "version":
			version = strings.TrimSpace(v)
		}
		if name != "" && version != "" {
			break
		}
	}
	return name, version, nil
}
