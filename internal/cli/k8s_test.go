package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestK8sManifest decodes every document of the manifest with a YAML
// parser and checks the kinds, the GPU node selector, the host mounts and
// the loop that writes both files.
func TestK8sManifest(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"k8s", "manifest", "--image", "registry.example/train:2025-11", "--namespace", "gpu-health", "--interval", "5m", "--model", "Qwen/Qwen3.5-27B"}
	if code := Main(args, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	dec := yaml.NewDecoder(bytes.NewReader(out.Bytes()))
	kinds := map[string]string{}
	var ds map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("YAML: %v\n%s", err, out.String())
		}
		kind, _ := doc["kind"].(string)
		kinds[kind], _ = doc["apiVersion"].(string)
		if kind == "DaemonSet" {
			ds = doc
		}
		if md, _ := doc["metadata"].(map[string]any); kind != "Namespace" && md["namespace"] != "gpu-health" {
			t.Errorf("%s in namespace %v", kind, md["namespace"])
		}
	}
	want := map[string]string{"Namespace": "v1", "ServiceAccount": "v1", "DaemonSet": "apps/v1"}
	for k, v := range want {
		if kinds[k] != v {
			t.Errorf("kind %s: apiVersion %q, want %q (all: %v)", k, kinds[k], v, kinds)
		}
	}
	if len(kinds) != len(want) {
		t.Errorf("kinds %v", kinds)
	}
	get := func(v any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[k]
			case int:
				s, _ := v.([]any)
				if k >= len(s) {
					return nil
				}
				v = s[k]
			}
		}
		return v
	}
	spec := get(ds, "spec", "template", "spec")
	if get(spec, "nodeSelector", "nvidia.com/gpu.present") != "true" {
		t.Errorf("nodeSelector %v", get(spec, "nodeSelector"))
	}
	if get(ds, "spec", "selector", "matchLabels", "app.kubernetes.io/name") != get(ds, "spec", "template", "metadata", "labels", "app.kubernetes.io/name") {
		t.Error("the selector does not select the pods")
	}
	c := get(spec, "containers", 0)
	if get(c, "image") != "registry.example/train:2025-11" {
		t.Errorf("image %v", get(c, "image"))
	}
	script, _ := get(c, "args", 0).(string)
	for _, s := range []string{"--format $f", "/out/textfile/fastpath.prom", "/out/features.d/fastpath", "sleep 300", "--model Qwen/Qwen3.5-27B", `mv -f "$out.tmp" "$out"`} {
		if !strings.Contains(script, s) {
			t.Errorf("loop lacks %q:\n%s", s, script)
		}
	}
	hostPaths := map[string]string{}
	for _, v := range get(spec, "volumes").([]any) {
		if p, ok := get(v, "hostPath", "path").(string); ok {
			hostPaths[get(v, "name").(string)] = p
		}
	}
	mounts := map[string]string{}
	for _, m := range get(c, "volumeMounts").([]any) {
		mounts[get(m, "name").(string)] = get(m, "mountPath").(string)
	}
	for name, host := range map[string]string{"nvidia-proc": "/proc/driver/nvidia", "sys": "/sys", "textfile": "/var/lib/node_exporter/textfile_collector", "features": "/etc/kubernetes/node-feature-discovery/features.d"} {
		if hostPaths[name] != host || mounts[name] == "" {
			t.Errorf("volume %s: host %q mounted at %q", name, hostPaths[name], mounts[name])
		}
	}
}

func TestK8sAndFormatUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
		out  string
	}{
		{[]string{"k8s", "manifest"}, ExitFailure, "--image is required"},
		{[]string{"k8s", "manifest", "--image", "x", "--interval", "10s"}, ExitFailure, "at least 1m"},
		{[]string{"doctor", "--format", "yaml"}, ExitFailure, `--format "yaml"`},
		{[]string{"doctor", "--format", "prom", "--json"}, ExitFailure, "none of the others can be"},
		{[]string{"remote", "x"}, ExitFailure, "--via TEMPLATE is required"},
		{[]string{"remote", "--via", "ssh host", "x"}, ExitFailure, "no {}"},
		{[]string{"remote", "--via", "ssh {}"}, ExitFailure, "no targets"},
		{[]string{"remote", "--via", "ssh {}", "-oProxyCommand=x"}, ExitFailure, "unknown shorthand flag"},
		{[]string{"remote", "--via", "ssh {}", "--", "-oProxyCommand=x"}, ExitFailure, "starts with -"},
		{[]string{"remote", "--via", "ssh {} | cat", "h"}, ExitFailure, "shell syntax |"},
		{[]string{"diff", "one.json"}, ExitFailure, "requires at least 2 arg"},
		{[]string{"diff", "/nonexistent/a.json", "/nonexistent/b.json"}, ExitFailure, "no such file"},
	} {
		var out, errb bytes.Buffer
		got := Main(tc.args, strings.NewReader(""), &out, &errb)
		if got != tc.want || !strings.Contains(out.String()+errb.String(), tc.out) {
			t.Errorf("fastpath %q: exit %d, output %q; want %d and %q", tc.args, got, out.String()+errb.String(), tc.want, tc.out)
		}
	}
}

// TestDoctorFormats: --format json and markdown are --json and --markdown;
// prom and nfd write the cluster files; all keep doctor's exit status.
func TestDoctorFormats(t *testing.T) {
	root := seedRoot(t, "")
	base := []string{"doctor", "--root", root, "--gpu", "12.0", "--env", "PATH=/root/venv/bin:/usr/bin:/bin", "--env", "VIRTUAL_ENV=/root/venv"}
	outputs := map[string]string{}
	for _, f := range []string{"--json", "--format=json", "--markdown", "--format=markdown", "--format=text", "--format=prom", "--format=nfd"} {
		var out, errb bytes.Buffer
		if code := Main(append(base, f), nil, &out, &errb); code != ExitFindings {
			t.Fatalf("%s: exit %d: %s", f, code, errb.String())
		}
		outputs[f] = out.String()
	}
	if outputs["--json"] != outputs["--format=json"] || outputs["--markdown"] != outputs["--format=markdown"] {
		t.Error("--format json/markdown differ from --json/--markdown")
	}
	for f, want := range map[string]string{
		"--format=text": "[no-cuda-compiler]",
		"--format=prom": `fastpath_finding{id="no-cuda-compiler",severity="error"} 1`,
		"--format=nfd":  "fastpath.io/fast-path-ready=false\n",
	} {
		if !strings.Contains(outputs[f], want) {
			t.Errorf("%s lacks %q:\n%s", f, want, outputs[f])
		}
	}
}
