package plan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunnerCarriesExports: export lines set variables (expanded by the
// shell, as in the user's shell) that later commands and steps see, and
// that come back for doctor's second look.
func TestRunnerCarriesExports(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	r := &Runner{Env: []string{"PATH=/usr/bin:/bin", "HOME=" + dir}, Out: &out}
	steps := []Step{
		{ID: "a", Finding: "no-cuda-compiler", Title: "set", Commands: []string{
			"export CUDA_HOME='" + dir + "/cu 13'",
			`export PATH="$CUDA_HOME/bin:$PATH"`,
			`mkdir -p "$CUDA_HOME/lib" && ln -sfn lib "$CUDA_HOME/lib64"`,
		}},
		// The build step repeats the compiler's exports (it must work on its
		// own): PATH keeps $CUDA_HOME/bin once.
		{ID: "b", Finding: "fast-path-fallback", Title: "use", Commands: []string{`export PATH="$CUDA_HOME/bin:$PATH"`,
			`echo "home=$CUDA_HOME path=$PATH" > "$HOME/seen"`, "unset HOME"}},
	}
	res := r.Run(context.Background(), steps)
	if res.Failed != nil {
		t.Fatalf("failed: %s: %v\n%s", res.Command, res.Err, out.String())
	}
	home := dir + "/cu 13"
	want := []string{"CUDA_HOME=" + home, "PATH=" + home + "/bin:/usr/bin:/bin"}
	if strings.Join(res.Exports, "\n") != strings.Join(want, "\n") {
		t.Errorf("exports %q, want %q", res.Exports, want)
	}
	seen, err := os.ReadFile(filepath.Join(dir, "seen"))
	if err != nil || strings.TrimSpace(string(seen)) != "home="+home+" path="+home+"/bin:/usr/bin:/bin" {
		t.Errorf("the second step saw %q (%v)", seen, err)
	}
	if fi, err := os.Lstat(filepath.Join(home, "lib64")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("lib64 link: %v", err)
	}
	if _, ok := lookupEnv(res.Env, "HOME"); ok {
		t.Error("unset HOME did not unset it")
	}
	if !strings.Contains(out.String(), "==> no-cuda-compiler: set\n$ export CUDA_HOME=") || len(res.Ran) != 2 {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestRunnerStopsAtFailure: the first failing command ends the run; its
// output comes back; later commands and steps never run.
func TestRunnerStopsAtFailure(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	r := &Runner{Env: []string{"PATH=/usr/bin:/bin"}, Out: &out}
	steps := []Step{
		{ID: "ok", Title: "fine", Commands: []string{"echo first"}},
		{ID: "bad", Title: "breaks", Commands: []string{"echo 'ERROR: No matching distribution found for causal-conv1d' >&2; exit 3", "touch " + dir + "/after"}},
		{ID: "never", Title: "never", Commands: []string{"touch " + dir + "/never"}},
	}
	res := r.Run(context.Background(), steps)
	if res.Failed == nil || res.Failed.ID != "bad" || !strings.Contains(res.Output, "No matching distribution found") || !strings.Contains(res.Err.Error(), "exit status 3") {
		t.Fatalf("%+v", res)
	}
	if len(res.Ran) != 1 {
		t.Errorf("ran %v", res.Ran)
	}
	for _, f := range []string{"after", "never"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s ran after the failure", f)
		}
	}
}
