package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestK8sManifestGolden: the manifest, YAML and JSON, is what fastpath
// printed when it built the objects from k8s.io/api's types and wrote them
// with sigs.k8s.io/yaml (c149d65). The files under testdata/k8s were written
// by that build; they are a record, not output to refresh: -update does not
// touch them. JSON, and YAML for ordinary flag values, are byte for byte the
// same. For values that YAML must quote (hostile: true), fastpath's own
// writer (manifestyaml.go) may quote differently: its YAML must then decode
// to the same objects as the record's.
func TestK8sManifestGolden(t *testing.T) {
	for _, c := range []struct {
		golden  string
		args    []string
		hostile bool
	}{
		{"strict", []string{"--pod-image", "registry.example/train:2025-11", "--namespace", "gpu-health", "--interval", "5m", "--model", "Qwen/Qwen3.5-27B"}, false},
		{"hostile", []string{"--pod-image", "reg.example/x:1\n---\nkind: Secret\n\"'{}: #", "--model", "it's $(touch /tmp/x) `id`", "--textfile-dir", "/var/lib/a b: c"}, true},
		{"legacy-image", []string{"--image", "registry.example/train:1"}, false},
		{"pod-image", []string{"--pod-image", "registry.example/train:1"}, false},
		{"model", []string{"--pod-image", "registry.example/train:1", "--model", "Qwen/Qwen3.5-27B"}, false},
		{"docs-image", []string{"--image", "example.org/train:1"}, false},
		{"plain-looking", []string{"--pod-image", "true", "--model", "", "--model", "a b", "--model", "x'y", "--namespace", "n1", "--interval", "90s", "--features-dir", "/x", "--textfile-dir", "/y: z"}, true},
		{"whitespace", []string{"--pod-image", "tab\there   ", "--model", "line1\nline2\n", "--textfile-dir", "/ lead", "--features-dir", "/trail "}, true},
		{"yaml-specials", []string{"--pod-image", "123", "--model", "- dash", "--model", ": colon", "--model", "#hash", "--model", "null", "--model", "~", "--textfile-dir", "/é ünïcode", "--interval", "1h"}, false},
		{"controls", []string{"--pod-image", "@at", "--features-dir", "/a\r\nb", "--model", "\x01ctl", "--model", "0x1F", "--model", "1e3", "--model", "yes", "--model", "on"}, true},
	} {
		for _, ext := range []string{"yaml", "json"} {
			args := append([]string{"k8s", "manifest"}, c.args...)
			if ext == "json" {
				args = append(args, "--format", "json")
			}
			var out, errb bytes.Buffer
			if code := Main(args, nil, &out, &errb); code != ExitOK {
				t.Fatalf("%q: exit %d: %s", args, code, errb.String())
			}
			want, err := os.ReadFile(filepath.Join("testdata", "k8s", c.golden+"."+ext))
			if err != nil {
				t.Fatal(err)
			}
			if ext == "yaml" && c.hostile {
				if got, rec := manifestDocsJSON(t, out.String()), manifestDocsJSON(t, string(want)); !slices.Equal(got, rec) {
					t.Errorf("%s.%s: the manifest decodes to\n%s\nthe record to\n%s", c.golden, ext, strings.Join(got, "\n"), strings.Join(rec, "\n"))
				}
				continue
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("%s.%s: the manifest differs from the one the API types printed:\n%s", c.golden, ext, out.String())
			}
		}
	}
}

// apiManifestObjects builds the manifest from k8s.io/api's own types, as
// fastpath did before it had its own (k8s_types.go): the oracle that
// TestK8sManifestMatchesAPITypes compares with.
func apiManifestObjects(o *K8sOptions, loop string) []any {
	const name = "fastpath-doctor"
	labels := map[string]string{"app.kubernetes.io/name": name}
	no := false
	yes := true
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	hostPath := func(vol, path string, typ *corev1.HostPathType) corev1.Volume {
		return corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: typ}}}
	}
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Namespace},
	}
	sa := &corev1.ServiceAccount{
		TypeMeta:                     metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta:                   metav1.ObjectMeta{Name: "fastpath", Namespace: o.Namespace},
		AutomountServiceAccountToken: &no,
	}
	ds := &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName:           "fastpath",
					AutomountServiceAccountToken: &no,
					NodeSelector:                 map[string]string{"nvidia.com/gpu.present": "true"},
					Tolerations:                  []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					PriorityClassName:            "system-node-critical",
					Containers: []corev1.Container{{
						Name:    "doctor",
						Image:   o.PodImage,
						Command: []string{"/bin/sh", "-c"},
						Args:    []string{loop},
						Env:     []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "void"}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
						},
						SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: &yes, AllowPrivilegeEscalation: &no},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "nvidia-proc", MountPath: "/proc/driver/nvidia", ReadOnly: true},
							{Name: "sys", MountPath: "/sys", ReadOnly: true},
							{Name: "textfile", MountPath: "/out/textfile"},
							{Name: "features", MountPath: "/out/features.d"},
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []corev1.Volume{
						hostPath("nvidia-proc", "/proc/driver/nvidia", nil),
						hostPath("sys", "/sys", nil),
						hostPath("textfile", o.TextfileDir, &dirOrCreate),
						hostPath("features", o.FeaturesDir, &dirOrCreate),
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
	return []any{ns, sa, ds}
}

// apiManifestYAML is how fastpath printed an API object: JSON, less status
// and metadata.creationTimestamp (zeros a client never sets), as YAML.
func apiManifestYAML(t *testing.T, obj any) ([]byte, error) {
	t.Helper()
	return sigsyaml.Marshal(apiManifestMap(t, obj))
}

// apiManifestMap is an API object as the JSON object the manifest holds:
// no status, no empty creationTimestamp.
func apiManifestMap(t *testing.T, obj any) map[string]any {
	t.Helper()
	j, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "status")
	var drop func(v any)
	drop = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if md, ok := x["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
				delete(md, "creationTimestamp")
			}
			for _, c := range x {
				drop(c)
			}
		case []any:
			for _, c := range x {
				drop(c)
			}
		}
	}
	drop(m)
	return m
}

// manifestDocsJSON decodes each YAML document of a manifest with
// sigs.k8s.io/yaml (what kubectl reads manifests with) into JSON.
func manifestDocsJSON(t *testing.T, manifest string) []string {
	t.Helper()
	var docs []string
	for _, doc := range strings.Split(manifest, "\n---\n") {
		j, err := sigsyaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("the manifest is not YAML: %v\n%s", err, doc)
		}
		docs = append(docs, string(j))
	}
	return docs
}

// TestK8sManifestMatchesAPITypes: for random flag values (any bytes YAML,
// JSON or a shell might read otherwise), each object our types make is
// written as YAML that sigs.k8s.io/yaml (what kubectl reads with) decodes
// to exactly the object, which is the API types' object, and the manifest
// decodes strictly into the API types.
func TestK8sManifestMatchesAPITypes(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	alphabet := []rune("ab09 :-#'\"\\\n\t\r{}[]&*!|>%@`,?~=$.é€😀ab09 :-#'\"\\\n\t\r{}[]&*!|>%@`,?~=$.é€😀\x00\x7f\u0085\u2028\ufeff")
	text := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	n := 300
	if testing.Short() {
		n = 50
	}
	refused, lost := 0, 0
	for i := range n {
		o := &K8sOptions{PodImage: text(), Namespace: "ns", TextfileDir: "/" + text(), FeaturesDir: "/" + text(), Interval: time.Duration(1+r.IntN(100)) * time.Minute}
		loop := "while :; do " + text() + "\n  " + text() + "\ndone"
		ours, api := manifestObjects(o, loop), apiManifestObjects(o, loop)
		var doc strings.Builder
		for k := range ours {
			got, err := manifestYAML(ours[k])
			if err != nil {
				t.Fatalf("case %d object %d: %v", i, k, err)
			}
			gotJSON, err := sigsyaml.YAMLToJSON(got)
			if err != nil {
				t.Fatalf("case %d object %d: not YAML: %v\n%s", i, k, err, got)
			}
			m, err := manifestMap(ours[k])
			if err != nil {
				t.Fatal(err)
			}
			objJSON, _ := json.Marshal(m)
			if !bytes.Equal(gotJSON, objJSON) {
				t.Fatalf("case %d object %d: the YAML decodes to\n%s\nnot to the object\n%s\n%s", i, k, gotJSON, objJSON, got)
			}
			if apiJSON, _ := json.Marshal(apiManifestMap(t, api[k])); !bytes.Equal(gotJSON, apiJSON) {
				t.Fatalf("case %d object %d: ours decodes to\n%s\nthe API types' object is\n%s", i, k, gotJSON, apiJSON)
			}
			// sigs.k8s.io/yaml, which wrote the manifest before, refuses
			// some control characters and reads NEL, LS and PS back as
			// spaces; ours keeps them (escaped).
			if want, err := apiManifestYAML(t, api[k]); err != nil {
				refused++
			} else if wantJSON, err := sigsyaml.YAMLToJSON(want); err != nil || !bytes.Equal(wantJSON, gotJSON) {
				lost++
			}
			if k > 0 {
				doc.WriteString("---\n")
			}
			doc.Write(got)
		}
		decodeManifest(t, doc.String())
	}
	t.Logf("%d random manifests written and decoded; sigs.k8s.io/yaml refused %d of their objects and changed %d", n, refused, lost)
}

// TestDNS1123LabelMatchesAPI: --namespace is checked, message for message,
// as k8s.io/apimachinery's IsDNS1123Label checks it.
func TestDNS1123LabelMatchesAPI(t *testing.T) {
	cases := []string{"", "a", "gpu-health", "GPU_health", "-a", "a-", "a.b", "a..b", ".a", "a.", "0", "a--b", "é", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 64) + ".b", strings.Repeat("-", 70)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = "az09-._A\xff"[r.IntN(9)]
		}
		cases = append(cases, string(b))
	}
	for _, v := range cases {
		got, want := dns1123LabelErrors(v), validation.IsDNS1123Label(v)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q: got %q, the API says %q", v, got, want)
		}
	}
}
