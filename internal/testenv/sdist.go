package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Sdist makes sure PyPI's file (an sdist, or any file of the project) with
// the given sha256 is in the cache's sdists folder, downloading it once
// through PyPI's JSON simple API, and returns its path. A digest mismatch
// fails the test: the data it checks was read from that exact file.
func Sdist(t testing.TB, project, file, sha string) string {
	t.Helper()
	return cachedDownload(t, "sdists", file, sha, func() (string, error) { return pypiFileURL(project, file) })
}

// Download makes sure the file at url, with the given sha256, is in the
// cache's downloads folder as name, downloading it once, and returns its
// path: for real specimens from registries other than PyPI (crates.io,
// Maven Central, npm). A digest mismatch fails the test.
func Download(t testing.TB, url, name, sha string) string {
	t.Helper()
	return cachedDownload(t, "downloads", name, sha, func() (string, error) { return url, nil })
}

// cachedDownload returns the cached file folder/name if its sha256 is sha,
// else downloads it from the URL locate gives and checks it.
func cachedDownload(t testing.TB, folder, name, sha string, locate func() (string, error)) string {
	t.Helper()
	dir := filepath.Join(CacheDir(t), folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if got, err := fileSHA256(path); err == nil && got == sha {
		return path
	}
	url, err := locate()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := download(url, path+".part"); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if got, err := fileSHA256(path + ".part"); err != nil || got != sha {
		t.Fatalf("%s: sha256 %s, want %s (%v)", url, got, sha, err)
	}
	if err := os.Rename(path+".part", path); err != nil {
		t.Fatal(err)
	}
	return path
}

func pypiFileURL(project, file string) (string, error) {
	req, err := http.NewRequest("GET", "https://pypi.org/simple/"+project+"/", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/vnd.pypi.simple.v1+json")
	c := &http.Client{Timeout: 60 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var idx struct {
		Files []struct {
			Filename string `json:"filename"`
			URL      string `json:"url"`
		} `json:"files"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&idx); err != nil {
		return "", err
	}
	for _, f := range idx.Files {
		if f.Filename == file {
			return f.URL, nil
		}
	}
	return "", fmt.Errorf("PyPI lists no %s for %s", file, project)
}

func download(url, path string) error {
	c := &http.Client{Timeout: 10 * time.Minute}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// PyPIVersions are the release versions PyPI lists for project now (its
// JSON simple API, not cached: it is what tests for drift ask).
func PyPIVersions(t testing.TB, project string) []string {
	t.Helper()
	idx := simpleIndex(t, project)
	if len(idx.Versions) == 0 {
		t.Fatalf("PyPI lists no versions of %s", project)
	}
	return idx.Versions
}

// PyPISdist is the file name and sha256 of the sdist PyPI lists for
// project's version (its JSON simple API, not cached), and whether there
// is one.
func PyPISdist(t testing.TB, project, version string) (file, sha string, ok bool) {
	t.Helper()
	// An sdist is <normalized name>-<version>.tar.gz (PEP 625), or the
	// project's own spelling in older uploads.
	names := map[string]bool{}
	for _, n := range []string{project, strings.ReplaceAll(project, "-", "_"), strings.ReplaceAll(project, "_", "-")} {
		names[n+"-"+version+".tar.gz"] = true
	}
	for _, f := range simpleIndex(t, project).Files {
		if names[f.Filename] && f.Hashes["sha256"] != "" {
			return f.Filename, f.Hashes["sha256"], true
		}
	}
	return "", "", false
}

// pypiIndex is a project's page of PyPI's JSON simple API (PEP 691).
type pypiIndex struct {
	Versions []string `json:"versions"`
	Files    []struct {
		Filename string            `json:"filename"`
		Hashes   map[string]string `json:"hashes"`
	} `json:"files"`
}

// simpleIndex reads project's page now (not cached).
func simpleIndex(t testing.TB, project string) pypiIndex {
	t.Helper()
	Network(t)
	req, err := http.NewRequest("GET", "https://pypi.org/simple/"+project+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.pypi.simple.v1+json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", project, err)
	}
	defer resp.Body.Close()
	var idx pypiIndex
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&idx); err != nil {
		t.Fatalf("%s: %v", project, err)
	}
	return idx
}
