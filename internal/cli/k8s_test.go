package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/google/go-cmp/cmp"

	"github.com/fastpath-dev/fastpath/internal/remote"
)

// decodeManifest splits the manifest into its documents and decodes each
// strictly into the Kubernetes API type its kind names: a field the API
// does not know, a duplicate field or a wrong type is an error.
func decodeManifest(t *testing.T, manifest string) (*corev1.Namespace, *corev1.ServiceAccount, *appsv1.DaemonSet) {
	t.Helper()
	var (
		ns *corev1.Namespace
		sa *corev1.ServiceAccount
		ds *appsv1.DaemonSet
	)
	for _, doc := range strings.Split(manifest, "\n---\n") {
		var tm metav1.TypeMeta
		if err := sigsyaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("YAML: %v\n%s", err, doc)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 Namespace":
			ns = &corev1.Namespace{}
			obj = ns
		case "v1 ServiceAccount":
			sa = &corev1.ServiceAccount{}
			obj = sa
		case "apps/v1 DaemonSet":
			ds = &appsv1.DaemonSet{}
			obj = ds
		default:
			t.Fatalf("unexpected kind %q %q", tm.APIVersion, tm.Kind)
		}
		if err := sigsyaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Errorf("strict decode of %s: %v\n%s", tm.Kind, err, doc)
		}
	}
	if ns == nil || sa == nil || ds == nil {
		t.Fatalf("manifest lacks a kind:\n%s", manifest)
	}
	return ns, sa, ds
}

// validateNames checks every name and label the manifest sets with the
// API server's own validation (k8s.io/apimachinery).
func validateNames(ns *corev1.Namespace, sa *corev1.ServiceAccount, ds *appsv1.DaemonSet) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, msgs(field.NewPath("Namespace", "metadata", "name"), ns.Name, apivalidation.ValidateNamespaceName(ns.Name, false))...)
	errs = append(errs, msgs(field.NewPath("ServiceAccount", "metadata", "name"), sa.Name, apivalidation.ValidateServiceAccountName(sa.Name, false))...)
	errs = append(errs, msgs(field.NewPath("DaemonSet", "metadata", "name"), ds.Name, apivalidation.NameIsDNSSubdomain(ds.Name, false))...)
	for _, n := range []string{sa.Namespace, ds.Namespace} {
		errs = append(errs, msgs(field.NewPath("metadata", "namespace"), n, apivalidation.ValidateNamespaceName(n, false))...)
	}
	spec := ds.Spec.Template.Spec
	errs = append(errs, metavalidation.ValidateLabels(ds.Labels, field.NewPath("DaemonSet", "metadata", "labels"))...)
	errs = append(errs, metavalidation.ValidateLabels(ds.Spec.Template.Labels, field.NewPath("spec", "template", "metadata", "labels"))...)
	errs = append(errs, metavalidation.ValidateLabelSelector(ds.Spec.Selector, metavalidation.LabelSelectorValidationOptions{}, field.NewPath("spec", "selector"))...)
	errs = append(errs, metavalidation.ValidateLabels(spec.NodeSelector, field.NewPath("spec", "template", "spec", "nodeSelector"))...)
	errs = append(errs, msgs(field.NewPath("serviceAccountName"), spec.ServiceAccountName, apivalidation.ValidateServiceAccountName(spec.ServiceAccountName, false))...)
	for _, tol := range spec.Tolerations {
		errs = append(errs, msgs(field.NewPath("tolerations", "key"), tol.Key, validation.IsQualifiedName(tol.Key))...)
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
		errs = append(errs, msgs(field.NewPath("volumes", "name"), v.Name, validation.IsDNS1123Label(v.Name))...)
	}
	for _, c := range spec.Containers {
		errs = append(errs, msgs(field.NewPath("containers", "name"), c.Name, validation.IsDNS1123Label(c.Name))...)
		for _, e := range c.Env {
			errs = append(errs, msgs(field.NewPath("env", "name"), e.Name, validation.IsEnvVarName(e.Name))...)
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				errs = append(errs, field.NotFound(field.NewPath("volumeMounts", "name"), m.Name))
			}
		}
	}
	return errs
}

func msgs(p *field.Path, v string, ms []string) field.ErrorList {
	var out field.ErrorList
	for _, m := range ms {
		out = append(out, field.Invalid(p, v, m))
	}
	return out
}

// TestK8sManifestStrict decodes every document of the manifest strictly
// into the Kubernetes API types, validates every name and label with the
// API's validation, and checks the GPU node selector, the host mounts and
// the loop that writes both files; then hostile flag values.
func TestK8sManifestStrict(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"k8s", "manifest", "--pod-image", "registry.example/train:2025-11", "--namespace", "gpu-health", "--interval", "5m", "--model", "Qwen/Qwen3.5-27B"}
	if code := Main(args, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// The oracle itself: a misspelt field is an error.
	if err := sigsyaml.UnmarshalStrict([]byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\nspecc: {}\n"), &corev1.Namespace{}); err == nil {
		t.Fatal("strict decoding accepted an unknown field")
	}
	ns, sa, ds := decodeManifest(t, out.String())
	for _, e := range validateNames(ns, sa, ds) {
		t.Errorf("validation: %v", e)
	}
	if ns.Name != "gpu-health" || sa.Namespace != "gpu-health" || ds.Namespace != "gpu-health" {
		t.Errorf("namespaces %q %q %q", ns.Name, sa.Namespace, ds.Namespace)
	}
	spec := ds.Spec.Template.Spec
	if spec.NodeSelector["nvidia.com/gpu.present"] != "true" {
		t.Errorf("nodeSelector %v", spec.NodeSelector)
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("the selector %v does not select the pods %v (%v)", ds.Spec.Selector, ds.Spec.Template.Labels, err)
	}
	if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken || spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("a service account token is mounted")
	}
	c := spec.Containers[0]
	if c.Image != "registry.example/train:2025-11" {
		t.Errorf("image %v", c.Image)
	}
	if len(c.Resources.Requests) == 0 || c.Resources.Limits.Memory().String() != "256Mi" {
		t.Errorf("resources %v", c.Resources)
	}
	script := c.Args[0]
	for _, s := range []string{"--format $f", "/out/textfile/fastpath.prom", "/out/features.d/fastpath", "sleep 300", "--model Qwen/Qwen3.5-27B", `mv -f "$out.tmp" "$out"`} {
		if !strings.Contains(script, s) {
			t.Errorf("loop lacks %q:\n%s", s, script)
		}
	}
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for name, host := range map[string]string{"nvidia-proc": "/proc/driver/nvidia", "sys": "/sys", "textfile": "/var/lib/node_exporter/textfile_collector", "features": "/etc/kubernetes/node-feature-discovery/features.d"} {
		if hostPaths[name] != host || mounts[name] == "" {
			t.Errorf("volume %s: host %q mounted at %q", name, hostPaths[name], mounts[name])
		}
	}

	// Text that YAML or a shell would read otherwise travels intact.
	out.Reset()
	hostile := "reg.example/x:1\n---\nkind: Secret\n\"'{}: #"
	model := "it's $(touch /tmp/x) `id`"
	if code := Main([]string{"k8s", "manifest", "--pod-image", hostile, "--model", model, "--textfile-dir", "/var/lib/a b: c"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	_, _, ds = decodeManifest(t, out.String())
	c = ds.Spec.Template.Spec.Containers[0]
	if c.Image != hostile || !strings.Contains(c.Args[0], remote.Quote(model)) || ds.Spec.Template.Spec.Volumes[2].HostPath.Path != "/var/lib/a b: c" {
		t.Errorf("hostile values changed: image %q, script %q", c.Image, c.Args[0])
	}
	// A namespace the API would refuse is refused here.
	if code := Main([]string{"k8s", "manifest", "--pod-image", "x", "--namespace", "GPU_health"}, nil, &out, &errb); code != ExitFailure || !strings.Contains(errb.String(), "RFC 1123") {
		t.Errorf("--namespace GPU_health: exit %d, %s", code, errb.String())
	}
}

func TestK8sAndFormatUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want ExitCode
		out  string
	}{
		{[]string{"k8s", "manifest"}, ExitFailure, "--pod-image is required"},
		{[]string{"k8s", "manifest", "--pod-image", "x", "--interval", "10s"}, ExitFailure, "at least 1m"},
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

// TestK8sManifestImageAlias: --image, the old name of --pod-image, still
// works (hidden, with a deprecation note on stderr); naming two different
// images is a usage error.
func TestK8sManifestImageAlias(t *testing.T) {
	var oldOut, oldErr, newOut, newErr bytes.Buffer
	if code := Main([]string{"k8s", "manifest", "--image", "registry.example/train:1"}, nil, &oldOut, &oldErr); code != ExitOK {
		t.Fatalf("--image: exit %d: %s", code, oldErr.String())
	}
	if !strings.Contains(oldErr.String(), "--pod-image") {
		t.Errorf("--image: no deprecation note naming --pod-image on stderr: %q", oldErr.String())
	}
	if code := Main([]string{"k8s", "manifest", "--pod-image", "registry.example/train:1"}, nil, &newOut, &newErr); code != ExitOK {
		t.Fatalf("--pod-image: exit %d: %s", code, newErr.String())
	}
	if oldOut.String() != newOut.String() {
		t.Error("--image and --pod-image print different manifests")
	}
	var help bytes.Buffer
	Main([]string{"k8s", "manifest", "--help"}, nil, &help, io.Discard)
	if strings.Contains(help.String(), "--image") {
		t.Errorf("the deprecated --image is listed in the help:\n%s", help.String())
	}
	var out, errb bytes.Buffer
	code := Main([]string{"k8s", "manifest", "--image", "a", "--pod-image", "b"}, nil, &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), "two different images") {
		t.Errorf("--image a --pod-image b: exit %d, stderr %q", code, errb.String())
	}
}

// TestK8sManifestJSONIsTheYAML: --format json prints one v1 List whose
// items are, object for object, the YAML documents (decoded by the API
// types, compared as JSON), so kubectl gets the same DaemonSet either way.
func TestK8sManifestJSONIsTheYAML(t *testing.T) {
	args := []string{"k8s", "manifest", "--pod-image", "registry.example/train:1", "--model", "Qwen/Qwen3.5-27B"}
	var y, j, errb bytes.Buffer
	if code := Main(args, nil, &y, &errb); code != ExitOK {
		t.Fatalf("yaml: exit %d: %s", code, errb.String())
	}
	if code := Main(append(args, "--format", "json"), nil, &j, &errb); code != ExitOK {
		t.Fatalf("json: exit %d: %s", code, errb.String())
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(j.Bytes(), &list); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, j.String())
	}
	if list.APIVersion != "v1" || list.Kind != "List" {
		t.Fatalf("want a v1 List, got %s %s", list.APIVersion, list.Kind)
	}
	docs := strings.Split(y.String(), "\n---\n")
	if len(docs) != len(list.Items) || len(docs) != 3 {
		t.Fatalf("%d YAML documents, %d JSON items", len(docs), len(list.Items))
	}
	for i, doc := range docs {
		fromYAML, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var a any
		if err := json.Unmarshal(fromYAML, &a); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(list.Items[i])
		var c any
		_ = json.Unmarshal(b, &c)
		if !cmp.Equal(a, c) {
			t.Errorf("object %d differs between YAML and JSON:\n%s", i, cmp.Diff(a, c))
		}
	}
	decodeManifest(t, y.String())
}
