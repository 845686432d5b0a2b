package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// maxPage caps what is read of an index page or API answer: a project page
// of PyPI's largest projects is a few MiB; anything bigger is not an index.
const maxPage = 16 << 20

// Link is one file offered by an index, find-links page or release.
type Link struct {
	File string // the file name
	URL  string // where to get it (a local path for find-links folders)
	From string // the index, page or release it was listed in
}

// fetcher does the plan's few HTTP requests, each with a timeout.
type fetcher struct {
	client  *http.Client
	timeout time.Duration
}

// get fetches u with accept, returning the body (capped) and its content type.
func (f *fetcher) get(ctx context.Context, u, accept string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", u, err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "fastpath")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, "", netError("GET", u, f.timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("GET %s: HTTP %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPage+1))
	if err != nil {
		return nil, "", netError("GET", u, f.timeout, err)
	}
	if len(b) > maxPage {
		return nil, "", fmt.Errorf("GET %s: answer larger than %d MiB, not read", u, maxPage>>20)
	}
	return b, resp.Header.Get("Content-Type"), nil
}

// head checks that u can be downloaded (following redirects, as pip does).
func (f *fetcher) head(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return fmt.Errorf("HEAD %s: %w", u, err)
	}
	req.Header.Set("User-Agent", "fastpath")
	resp, err := f.client.Do(req)
	if err != nil {
		return netError("HEAD", u, f.timeout, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("HEAD %s: HTTP %s", u, resp.Status)
	}
	return nil
}

// netError words a transport failure so a user knows what to do next.
func netError(method, u string, timeout time.Duration, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%s %s: connection refused (nothing listens there: is the index running, the URL right?)", method, u)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%s %s: timed out after %s (no answer: a firewall, a proxy, or no network; --offline skips lookups)", method, u, timeout)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("%s %s: cannot resolve %s (no network or DNS; --offline skips lookups)", method, u, dns.Name)
	}
	return fmt.Errorf("%s %s: %v", method, u, err)
}

// simpleAccept asks for PEP 691 JSON, taking PEP 503 HTML as well.
const simpleAccept = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"

// IndexFiles lists the files an index (PEP 503 HTML or PEP 691 JSON) offers
// for project.
func (f *fetcher) IndexFiles(ctx context.Context, index, project string) ([]Link, error) {
	page := strings.TrimSuffix(index, "/") + "/" + canonical(project) + "/"
	body, ctype, err := f.get(ctx, page, simpleAccept)
	if err != nil {
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	if strings.HasSuffix(mt, "json") {
		links, err := parseSimpleJSON(body, page)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", page, err)
		}
		return links, nil
	}
	return parseLinks(body, page), nil
}

// FindLinks lists the files of a --find-links location: a local folder, or
// a page of links.
func (f *fetcher) FindLinks(ctx context.Context, loc string) ([]Link, error) {
	if u, err := url.Parse(loc); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		body, _, err := f.get(ctx, loc, "text/html")
		if err != nil {
			return nil, err
		}
		return parseLinks(body, loc), nil
	}
	dir := strings.TrimPrefix(loc, "file://")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--find-links %s: %w", loc, err)
	}
	var out []Link
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, Link{File: e.Name(), URL: filepath.Join(dir, e.Name()), From: loc})
		}
	}
	return out, nil
}

// parseSimpleJSON reads a PEP 691 project page.
func parseSimpleJSON(body []byte, page string) ([]Link, error) {
	var doc struct {
		Meta struct {
			APIVersion string `json:"api-version"`
		} `json:"meta"`
		Files []struct {
			Filename string `json:"filename"`
			URL      string `json:"url"`
		} `json:"files"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not a PEP 691 project page: %w", err)
	}
	var out []Link
	for _, fl := range doc.Files {
		if fl.Filename == "" || fl.URL == "" {
			continue
		}
		out = append(out, Link{File: fl.Filename, URL: resolve(page, fl.URL), From: page})
	}
	return out, nil
}

// parseLinks reads the anchors of a PEP 503 page or a find-links page: the
// file name is the last path segment of each href (what pip takes too).
// anchorHrefs reads the page as the HTML5 tokenizer does (entities in
// attribute values, unquoted and upper-case attributes, anchors inside
// comments or scripts left alone).
func parseLinks(body []byte, page string) []Link {
	var out []Link
	for _, href := range anchorHrefs(body) {
		if l, ok := linkTo(page, href); ok {
			out = append(out, l)
		}
	}
	return out
}

// linkTo resolves an anchor's href against page and names the file it
// offers; ok is false for an anchor that names none.
func linkTo(page, href string) (Link, bool) {
	if href == "" {
		return Link{}, false
	}
	full := resolve(page, href)
	u, err := url.Parse(full)
	if err != nil {
		return Link{}, false
	}
	name := u.Path[strings.LastIndexByte(u.Path, '/')+1:]
	if unq, err := url.PathUnescape(name); err == nil {
		name = unq
	}
	if name == "" {
		return Link{}, false
	}
	return Link{File: name, URL: full, From: page}, true
}

func resolve(page, href string) string {
	base, err := url.Parse(page)
	if err != nil {
		return href
	}
	ref, err := url.Parse(href)
	if err != nil {
		return href
	}
	return base.ResolveReference(ref).String()
}

// Release is the part of GitHub's releases API answer the plan reads.
type Release struct {
	TagName string `json:"tag_name"`
	Assets  []struct {
		Name string `json:"name"`
		URL  string `json:"browser_download_url"`
	} `json:"assets"`
}

// LatestRelease asks a GitHub-shaped API for repo's latest release.
func (f *fetcher) LatestRelease(ctx context.Context, api, repo string) (*Release, error) {
	u := strings.TrimSuffix(api, "/") + "/repos/" + repo + "/releases/latest"
	body, _, err := f.get(ctx, u, "application/vnd.github+json")
	if err != nil {
		return nil, err
	}
	var r Release
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("GET %s: not a GitHub release: %w", u, err)
	}
	if r.TagName == "" {
		return nil, fmt.Errorf("GET %s: the answer has no tag_name", u)
	}
	return &r, nil
}
