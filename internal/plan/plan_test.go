package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// seedInput collects the seed container and judges its model, as plan does.
func seedInput(t *testing.T) Input {
	t.Helper()
	return seedWorld(t).input()
}

// seedWorld is the seed container, collected, with its model read.
func seedWorld(t *testing.T) world {
	t.Helper()
	dir := t.TempDir()
	if err := fixture.Seed(dir); err != nil {
		t.Fatal(err)
	}
	env, _ := source.ParseEnv(fixture.SeedEnv)
	src, err := source.Root(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	f := collect.Collect(context.Background(), src, collect.Options{GPUs: fixture.SeedGPUs})
	loc, cfg, err := modelread.Load(src, fixture.SeedModel)
	if err != nil {
		t.Fatal(err)
	}
	return world{name: "seed", f: f, loc: loc, cfg: cfg}
}

func stepByID(pl *Plan, id string) *Step {
	for i := range pl.Steps {
		if pl.Steps[i].ID == id {
			return &pl.Steps[i]
		}
	}
	return nil
}

func ids(pl *Plan) string {
	var out []string
	for _, s := range pl.Steps {
		out = append(out, fmt.Sprintf("%s(%d,viable=%v)", s.ID, s.Option, s.Viable))
	}
	return strings.Join(out, " ")
}

const seedWheel = "causal_conv1d-1.7.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"

func TestSeedOffline(t *testing.T) {
	in := seedInput(t)
	pl := Build(context.Background(), in, Options{Offline: true})

	// The compiler: apt's CUDA 12.8 nvcc first (the pip wheel for cu12 has
	// no nvcc, and says so), with CUDA_HOME.
	apt := stepByID(pl, "no-cuda-compiler/apt")
	if apt == nil || apt.Option != 1 || !apt.Viable {
		t.Fatalf("apt route is not the first viable compiler step: %s", ids(pl))
	}
	cmds := strings.Join(apt.Commands, "\n")
	for _, want := range []string{"cuda-nvcc-12-8", "export CUDA_HOME=/usr/local/cuda-12.8", "ubuntu2404"} {
		if !strings.Contains(cmds, want) {
			t.Errorf("apt step lacks %q:\n%s", want, cmds)
		}
	}
	pip := stepByID(pl, "no-cuda-compiler/pip")
	if pip == nil || pip.Viable || len(pip.Commands) != 0 {
		t.Fatalf("the cu12 pip compiler must be shown as not viable: %+v", pip)
	}
	if d := pip.Preconditions[0].Detail; pip.Preconditions[0].OK || !strings.Contains(d, "nvidia-cuda-nvcc-cu12==12.8.*") || !strings.Contains(d, "no bin/nvcc") {
		t.Errorf("why no pip compiler: %+v", pip.Preconditions[0])
	}

	// The kernel package: its own wheel name for this environment, first,
	// unverified; building ranks below it, and every step has its checks.
	w := stepByID(pl, "causal-conv1d/wheel-github")
	if w == nil || w.Option != 1 || w.Verified || !strings.Contains(w.Verification, "unverified") {
		t.Fatalf("wheel step: %+v\n%s", w, ids(pl))
	}
	if !strings.Contains(w.Title, seedWheel) || !strings.Contains(w.Commands[0], "/root/venv/bin/python3 -m pip install https://github.com/Dao-AILab/causal-conv1d/releases/download/v1.7.0/"+seedWheel) {
		t.Errorf("wheel step: %s %v", w.Title, w.Commands)
	}
	// causal-conv1d's setup.py hard-codes 9 targets for nvcc 12.8 and
	// ignores TORCH_CUDA_ARCH_LIST: first its own sdist narrowed to the
	// GPU here (sm_120), then the stock build, which does not pretend
	// TORCH_CUDA_ARCH_LIST narrows anything.
	n := stepByID(pl, "causal-conv1d/build-narrowed-apt")
	if n == nil || n.Option != 2 || !n.Viable {
		t.Fatalf("narrowed build with apt's compiler: %+v\n%s", n, ids(pl))
	}
	ncmds := strings.Join(n.Commands, "\n")
	for _, want := range []string{"export FASTPATH_SDIST_DIR=\"$(mktemp -d)\"", "pip download --no-deps --no-build-isolation -d \"$FASTPATH_SDIST_DIR\" --no-binary causal-conv1d causal-conv1d==1.7.0",
		"\"$FASTPATH_SDIST_DIR\"/causal_conv1d-1.7.0/setup.py 120", "MAX_JOBS=1 CAUSAL_CONV1D_FORCE_BUILD=TRUE /root/venv/bin/python3 -m pip wheel --no-deps --no-build-isolation -w \"$FASTPATH_SDIST_DIR\"/wheels \"$FASTPATH_SDIST_DIR\"/causal_conv1d-1.7.0", "/root/venv/bin/python3 -m pip install \"$FASTPATH_SDIST_DIR\"/wheels/causal_conv1d-1.7.0-*.whl"} {
		if !strings.Contains(ncmds, want) {
			t.Errorf("narrowed build lacks %q:\n%s", want, ncmds)
		}
	}
	if !strings.Contains(n.Title, "sm_120 instead of its 6 targets") || !strings.Contains(n.Cost.Basis, "1 target with nvcc 12.8") {
		t.Errorf("narrowed build: %s / %s", n.Title, n.Cost.Basis)
	}
	b := stepByID(pl, "causal-conv1d/build-apt")
	if b == nil || b.Option != 3 || !b.Viable {
		t.Fatalf("build with apt's compiler: %+v", b)
	}
	last := b.Commands[len(b.Commands)-1]
	if !strings.Contains(last, "MAX_JOBS=1 CAUSAL_CONV1D_FORCE_BUILD=TRUE") || strings.Contains(last, "TORCH_CUDA_ARCH_LIST") || !strings.Contains(last, "--no-build-isolation") {
		t.Errorf("build command: %s", last)
	}
	if !strings.Contains(b.Cost.Basis, "6 targets with nvcc 12.8") {
		t.Errorf("stock build estimate: %s", b.Cost.Basis)
	}
	for _, s := range pl.Steps {
		if s.RankReason == "" || s.Preconditions == nil || s.Commands == nil {
			t.Errorf("step %s lacks rank reason or lists: %+v", s.ID, s)
		}
	}
}

// TestBuildChecks: the preconditions follow the facts (memory to MAX_JOBS,
// an nvcc too old for sm_120, a g++ too new).
func TestBuildChecks(t *testing.T) {
	in := seedInput(t)
	in.Facts.OS.MemAvail = 40 << 30
	in.Facts.OS.CPUs = 4
	pl := Build(context.Background(), in, Options{Offline: true, Euid: ptr(1000), DiskFree: func(string) (int64, error) { return 1 << 30, nil }})
	b := stepByID(pl, "causal-conv1d/build-apt")
	if b == nil {
		t.Fatal(ids(pl))
	}
	if !strings.Contains(b.Commands[len(b.Commands)-1], "MAX_JOBS=4 ") {
		t.Errorf("40 GiB and 4 CPUs: %s", b.Commands[len(b.Commands)-1])
	}
	fails := map[string]bool{}
	for _, pc := range b.Preconditions {
		if !pc.OK && !pc.Unknown {
			fails[pc.Check] = true
		}
	}
	if !fails["root (dpkg and apt-get need it)"] || !fails["free disk (about 2.0 GiB)"] || b.Viable {
		t.Errorf("uid 1000 and 1 GiB free must fail: %+v", b.Preconditions)
	}

	in.Facts.Toolchain.GXX.Version = "15.1.0"
	in.Facts.Torch.CUDA = "12.6"
	pl = Build(context.Background(), in, Options{Offline: true, Euid: ptr(0)})
	apt := stepByID(pl, "no-cuda-compiler/apt")
	got := map[string]string{}
	for _, pc := range apt.Preconditions {
		if !pc.OK {
			got[pc.Check] = pc.Detail
		}
	}
	if !strings.Contains(got["nvcc 12.6 can target the GPUs"], "sm_120") || got["g++ within nvcc 12.6's limit (13)"] == "" || apt.Viable {
		t.Errorf("CUDA 12.6 for sm_120 with g++ 15: %+v", apt.Preconditions)
	}
}

func TestNothingToFix(t *testing.T) {
	in := seedInput(t)
	pl := Build(context.Background(), Input{Facts: in.Facts}, Options{Offline: true})
	if pl.Steps == nil || len(pl.Steps) != 0 {
		t.Errorf("no findings: %+v", pl)
	}
	b, _ := json.Marshal(pl)
	if string(b) != `{"steps":[]}` {
		t.Errorf("json %s", b)
	}
}

// TestLookups runs the lookups against real HTTP servers on loopback: a
// PEP 691 JSON index, a PEP 503 HTML index, a find-links page, and a
// releases API shaped like GitHub's (whose asset answers HEAD).
func TestLookups(t *testing.T) {
	var (
		mu   sync.Mutex
		head []string
	)
	mux := http.NewServeMux()
	mux.HandleFunc("/json/causal-conv1d/", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "application/vnd.pypi.simple.v1+json") {
			http.Error(w, "want PEP 691", http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
		fmt.Fprintf(w, `{"meta": {"api-version": "1.1"}, "name": "causal-conv1d", "files": [
			{"filename": "causal_conv1d-1.6.0.tar.gz", "url": "../../files/causal_conv1d-1.6.0.tar.gz", "hashes": {}},
			{"filename": %q, "url": "/files/%s", "hashes": {"sha256": "00"}}]}`, seedWheel, seedWheel)
	})
	mux.HandleFunc("/html/causal-conv1d/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!DOCTYPE html><html><body>\n<a href=\"../../files/causal_conv1d-1.6.0.tar.gz#sha256=aa\">causal_conv1d-1.6.0.tar.gz</a><br/>\n"+
			"<A HREF='../../files/%s#sha256=bb' data-requires-python=\"&gt;=3.9\">%s</A>\n</body></html>", seedWheel, seedWheel)
	})
	mux.HandleFunc("/links/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><a href="causal_conv1d-1.6.0+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl">x</a>`+
			`<a href="causal_conv1d-1.6.0+cu12torch2.11cxx11abiFALSE-cp312-cp312-linux_x86_64.whl">y</a></html>`)
	})
	mux.HandleFunc("/api/repos/Dao-AILab/causal-conv1d/releases/latest", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/vnd.github+json" {
			http.Error(w, "accept", http.StatusBadRequest)
			return
		}
		base := "http://" + r.Host + "/download/v1.8.0/"
		fmt.Fprintf(w, `{"tag_name": "v1.8.0", "name": "v1.8.0", "assets": [
			{"name": "causal_conv1d-1.8.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", "browser_download_url": "%[1]scausal_conv1d-1.8.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"},
			{"name": "causal_conv1d-1.8.0+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl", "browser_download_url": "%[1]scausal_conv1d-1.8.0+cu12torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"}]}`, base)
	})
	mux.HandleFunc("/download/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		head = append(head, r.Method+" "+r.URL.Path)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	in := seedInput(t)
	ctx := context.Background()

	t.Run("PEP 691 JSON index", func(t *testing.T) {
		pl := Build(ctx, in, Options{IndexURLs: []string{srv.URL + "/json"}, GitHubAPI: srv.URL + "/api"})
		s := stepByID(pl, "causal-conv1d/wheel-index")
		if s == nil || s.Option != 1 || !s.Verified || !s.Viable {
			t.Fatalf("%+v\n%s", s, ids(pl))
		}
		want := "--index-url " + srv.URL + "/json " + srv.URL + "/files/" + seedWheel
		if !strings.Contains(s.Commands[0], want) {
			t.Errorf("command %s lacks %s", s.Commands[0], want)
		}
		// A wheel found where the user asked: no GitHub lookup needed.
		if stepByID(pl, "causal-conv1d/wheel-github") != nil {
			t.Errorf("GitHub looked up although the index had the wheel: %s", ids(pl))
		}
	})
	t.Run("PEP 503 HTML index", func(t *testing.T) {
		pl := Build(ctx, in, Options{IndexURLs: []string{srv.URL + "/html/"}, GitHubAPI: srv.URL + "/api"})
		s := stepByID(pl, "causal-conv1d/wheel-index")
		if s == nil || !s.Verified || !strings.HasSuffix(s.Commands[0], " '"+srv.URL+"/files/"+seedWheel+"#sha256=bb'") {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("find-links page and GitHub releases", func(t *testing.T) {
		mu.Lock()
		head = nil
		mu.Unlock()
		pl := Build(ctx, in, Options{FindLinks: []string{srv.URL + "/links/"}, GitHubAPI: srv.URL + "/api"})
		idx := stepByID(pl, "causal-conv1d/wheel-index")
		if idx == nil || idx.Viable || !strings.Contains(idx.Preconditions[0].Detail, "lists 2 causal-conv1d file(s), none a wheel pip would install here") {
			t.Errorf("find-links without an exact wheel: %+v", idx)
		}
		gh := stepByID(pl, "causal-conv1d/wheel-github")
		if gh == nil || !gh.Verified || gh.Option != 1 || !strings.Contains(gh.Title, "causal_conv1d-1.8.0+cu12torch2.11cxx11abiTRUE") {
			t.Fatalf("GitHub step: %+v\n%s", gh, ids(pl))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(head) != 1 || head[0] != "HEAD /download/v1.8.0/causal_conv1d-1.8.0+cu12torch2.11cxx11abiTRUE-cp312-cp312-linux_x86_64.whl" {
			t.Errorf("HEAD requests: %v", head)
		}
		// The torch 2.10 wheel on the page: offered last, ABI unknown.
		var near []Step
		for _, s := range pl.Steps {
			if s.ID == "causal-conv1d/wheel-neighbour" {
				near = append(near, s)
			}
		}
		if len(near) != 1 || near[0].Verified || !strings.Contains(near[0].Verification, "ABI unknown") || near[0].Option <= stepByID(pl, "causal-conv1d/build-image").Option {
			t.Errorf("neighbour: %+v\n%s", near, ids(pl))
		}
	})
	t.Run("release without this environment's wheel", func(t *testing.T) {
		in := seedInput(t)
		in.Facts.Python.Selected.Version = "3.13.1"
		pl := Build(ctx, in, Options{GitHubAPI: srv.URL + "/api"})
		gh := stepByID(pl, "causal-conv1d/wheel-github")
		if gh == nil || gh.Viable || gh.Verified {
			t.Fatalf("%+v", gh)
		}
		var failed []string
		for _, pc := range gh.Preconditions {
			if !pc.OK {
				failed = append(failed, pc.Check+": "+pc.Detail)
			}
		}
		if len(failed) != 1 || !strings.Contains(failed[0], "release v1.8.0 has a wheel for cp313") || !strings.Contains(failed[0], "its 2 assets have no causal_conv1d-1.8.0+cu12torch2.11cxx11abiTRUE-cp313-cp313") {
			t.Errorf("%v", failed)
		}
	})
}

// TestLookupFailures: a refused connection and a server that never answers
// give messages that say so, in the notes and the step. The two are looked
// up in separate plans: the refused one under a timeout it cannot reach (a
// closed port refuses at once, however loaded the machine), the stalled one
// under a short timeout it always reaches (the server never answers).
func TestLookupFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	stall := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stall:
		}
	}))
	defer slow.Close()
	defer close(stall)
	in := seedInput(t)

	pl := Build(context.Background(), in, Options{IndexURLs: []string{refused + "/simple"}, GitHubAPI: refused, Timeout: time.Minute})
	notes := strings.Join(pl.Notes, "\n")
	if want := "GET " + refused + "/simple/causal-conv1d/: connection refused"; !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
	idx := stepByID(pl, "causal-conv1d/wheel-index")
	if idx == nil || idx.Viable || !strings.Contains(idx.Preconditions[0].Detail, "connection refused") {
		t.Errorf("index step: %+v", idx)
	}

	pl = Build(context.Background(), in, Options{IndexURLs: []string{slow.URL + "/simple"}, GitHubAPI: slow.URL, Timeout: 300 * time.Millisecond})
	notes = strings.Join(pl.Notes, "\n")
	if want := "GET " + slow.URL + "/repos/Dao-AILab/causal-conv1d/releases/latest: timed out after 300ms"; !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
	gh := stepByID(pl, "causal-conv1d/wheel-github")
	if gh == nil || gh.Verified || !strings.Contains(gh.Verification, "timed out") {
		t.Errorf("github step: %+v", gh)
	}
}

func TestFindLinksFolder(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{seedWheel, "causal_conv1d-1.7.0.tar.gz"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := seedInput(t)
	pl := Build(context.Background(), in, Options{FindLinks: []string{dir}, NoIndex: true})
	s := stepByID(pl, "causal-conv1d/wheel-index")
	if s == nil || !s.Verified || s.Commands[0] != "/root/venv/bin/python3 -m pip install --no-index --find-links "+dir+" "+filepath.Join(dir, seedWheel) {
		t.Fatalf("%+v", s)
	}
	if stepByID(pl, "causal-conv1d/wheel-github") != nil {
		t.Error("--no-index must not look up GitHub")
	}
	// Under --root nothing says whether apt may run: its step stays first.
	best := pl.Best()
	if len(best) != 2 || best[0].ID != "no-cuda-compiler/apt" || best[1].ID != "causal-conv1d/wheel-index" || best[1].Finding != finding.FastPathFallback {
		t.Errorf("best: %+v", best)
	}
}

func ptr(i int) *int { return &i }
