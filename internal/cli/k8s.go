package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/remote"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// renderCluster writes doctor's findings for a cluster engine: Prometheus
// textfile metrics or node-feature-discovery labels. The exit status is
// doctor's (1 on error findings): a periodic writer keeps the file either way.
func renderCluster(format string, f *facts.Facts, models []*model.Report, ios *IO) error {
	findings := diagnose.RunWithModels(f, models)
	var err error
	if format == "prom" {
		err = report.Prometheus(ios.Out, f, findings, models, time.Now().Unix())
	} else {
		err = report.NFD(ios.Out, f, findings, models)
	}
	if err != nil {
		return err
	}
	for _, fd := range findings {
		if fd.Severity == finding.Error {
			return findingsError{}
		}
	}
	return nil
}

// K8sOptions are `fastpath k8s manifest`'s flags.
type K8sOptions struct {
	// PodImage is --pod-image: the image the DaemonSet's pods run (not an
	// image to diagnose, as --image is elsewhere). legacyImage is its old
	// name, --image, kept hidden so that scripts still work.
	PodImage    string
	legacyImage string
	Namespace   string
	Interval    time.Duration
	TextfileDir string
	FeaturesDir string
	Models      []string
	// Output is --format: yaml (the default, for kubectl apply -f -) or
	// json (one v1 List holding the same objects).
	Output
}

func newK8sCommand(ios *IO) *cobra.Command {
	k8s := &cobra.Command{
		Use:   "k8s",
		Short: "Kubernetes: run doctor on every GPU node",
		Args:  cobra.NoArgs, // an unknown subcommand is a usage error, not the help
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	o := &K8sOptions{}
	manifest := &cobra.Command{
		Use:   "manifest",
		Short: "Print a DaemonSet that runs doctor on every GPU node and writes metrics and node labels",
		Long: `manifest prints a Namespace, a ServiceAccount and a DaemonSet (kubectl apply -f -)
that runs fastpath doctor on every node labelled nvidia.com/gpu.present=true,
every --interval, and writes node_exporter textfile metrics (doctor --format
prom) and node-feature-discovery labels (doctor --format nfd) into the
host's collector folders. The node's driver and GPUs are read from the
host's /proc/driver/nvidia and /sys, mounted read-only; the Python
environment judged is the image's own, so use your training image with
fastpath copied to /usr/local/bin (the binary is static).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunK8sManifest(o, ios)
		},
	}
	manifest.Flags().StringVar(&o.PodImage, "pod-image", "", "the container `IMAGE` the pods run: fastpath at /usr/local/bin/fastpath and a POSIX sh (your training image; required)")
	manifest.Flags().StringVar(&o.legacyImage, "image", "", "the old name of --pod-image `IMAGE`")
	// Hidden, not MarkDeprecated: cobra swallows pflag's deprecation note;
	// RunK8sManifest prints its own.
	_ = manifest.Flags().MarkHidden("image")
	manifest.Flags().StringVar(&o.Namespace, "namespace", "fastpath", "`NAMESPACE` to create and run in")
	manifest.Flags().DurationVar(&o.Interval, "interval", 10*time.Minute, "`DURATION` between doctor runs")
	manifest.Flags().StringVar(&o.TextfileDir, "textfile-dir", "/var/lib/node_exporter/textfile_collector", "host `DIR` node_exporter's --collector.textfile.directory reads")
	manifest.Flags().StringVar(&o.FeaturesDir, "features-dir", "/etc/kubernetes/node-feature-discovery/features.d", "host `DIR` nfd-worker reads feature files from")
	manifest.Flags().StringArrayVar(&o.Models, "model", nil, "also judge this model (`CONFIG|DIR|ORG/NAME`, as seen inside the image; repeatable)")
	addOutputFlags(manifest, &o.Output, 0, "yaml", "json")
	k8s.AddCommand(manifest)
	return k8s
}

// RunK8sManifest prints the DaemonSet manifest.
func RunK8sManifest(o *K8sOptions, ios *IO) error {
	if o.legacyImage != "" {
		fmt.Fprintln(ios.Err, "fastpath: k8s manifest --image is deprecated: use --pod-image (the image the pods run; elsewhere --image is an image to diagnose)")
		if o.PodImage != "" && o.PodImage != o.legacyImage {
			return usageErrorf("--image (the old name of --pod-image) and --pod-image name two different images; give --pod-image")
		}
		o.PodImage = o.legacyImage
	}
	if o.PodImage == "" {
		return usageErrorf("--pod-image is required: an image with fastpath at /usr/local/bin/fastpath (for example your training image with the static binary copied in)")
	}
	if o.Interval < time.Minute {
		return usageErrorf("--interval %s: at least 1m", o.Interval)
	}
	for _, d := range []string{o.TextfileDir, o.FeaturesDir} {
		if !strings.HasPrefix(d, "/") {
			return usageErrorf("%q: host folders must be absolute", d)
		}
	}
	if errs := dns1123LabelErrors(o.Namespace); len(errs) > 0 {
		return usageErrorf("--namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
	}
	doctor := "/usr/local/bin/fastpath doctor"
	for _, m := range o.Models {
		doctor += " --model " + remote.Quote(m)
	}
	// Each file is written beside its target and renamed, so collectors
	// never read half a file; exit 1 (error findings) still publishes.
	loop := fmt.Sprintf(`while :; do
  for f in prom nfd; do
    case $f in prom) out=/out/textfile/fastpath.prom ;; nfd) out=/out/features.d/fastpath ;; esac
    %s --format $f > "$out.tmp"
    rc=$?
    if [ $rc -le 1 ]; then mv -f "$out.tmp" "$out"; else rm -f "$out.tmp"; echo "fastpath doctor --format $f: exit $rc" >&2; fi
  done
  sleep %d
done`, doctor, int(o.Interval.Seconds()))
	return writeManifest(ios.Out, o, loop)
}

// manifestObjects are the Namespace, ServiceAccount and DaemonSet, as
// typed objects (k8s_types.go) encoded by encoding/json: whatever the flags
// hold, the manifest is what the API server decodes, never hand-assembled
// text.
func manifestObjects(o *K8sOptions, loop string) []any {
	const name = "fastpath-doctor"
	labels := map[string]string{"app.kubernetes.io/name": name}
	no := false
	yes := true
	const dirOrCreate = "DirectoryOrCreate"
	hostPath := func(vol, path, typ string) volume {
		return volume{Name: vol, HostPath: &hostPathVolumeSource{Path: path, Type: typ}}
	}
	ns := &k8sNamespace{
		typeMeta: typeMeta{APIVersion: "v1", Kind: "Namespace"},
		Metadata: objectMeta{Name: o.Namespace},
	}
	sa := &k8sServiceAccount{
		typeMeta:                     typeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		Metadata:                     objectMeta{Name: "fastpath", Namespace: o.Namespace},
		AutomountServiceAccountToken: &no,
	}
	ds := &k8sDaemonSet{
		typeMeta: typeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		Metadata: objectMeta{Name: name, Namespace: o.Namespace, Labels: labels},
		Spec: daemonSetSpec{
			Selector:       &labelSelector{MatchLabels: labels},
			UpdateStrategy: daemonSetUpdateStrategy{Type: "RollingUpdate"},
			Template: podTemplateSpec{
				Metadata: objectMeta{Labels: labels},
				Spec: podSpec{
					ServiceAccountName:           "fastpath",
					AutomountServiceAccountToken: &no,
					NodeSelector:                 map[string]string{"nvidia.com/gpu.present": "true"},
					Tolerations:                  []toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}},
					PriorityClassName:            "system-node-critical",
					Containers: []container{{
						Name:    "doctor",
						Image:   o.PodImage,
						Command: []string{"/bin/sh", "-c"},
						Args:    []string{loop},
						// No GPU is requested (doctor must not take one from
						// the jobs); the driver and devices are read from the
						// host's files mounted below.
						Env: []envVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "void"}},
						Resources: resourceRequirements{
							Requests: map[string]string{"cpu": "10m", "memory": "64Mi"},
							Limits:   map[string]string{"memory": "256Mi"},
						},
						SecurityContext: &securityContext{ReadOnlyRootFilesystem: &yes, AllowPrivilegeEscalation: &no},
						VolumeMounts: []volumeMount{
							{Name: "nvidia-proc", MountPath: "/proc/driver/nvidia", ReadOnly: true},
							{Name: "sys", MountPath: "/sys", ReadOnly: true},
							{Name: "textfile", MountPath: "/out/textfile"},
							{Name: "features", MountPath: "/out/features.d"},
							{Name: "tmp", MountPath: "/tmp"},
						},
					}},
					Volumes: []volume{
						hostPath("nvidia-proc", "/proc/driver/nvidia", ""),
						hostPath("sys", "/sys", ""),
						hostPath("textfile", o.TextfileDir, dirOrCreate),
						hostPath("features", o.FeaturesDir, dirOrCreate),
						{Name: "tmp", EmptyDir: &struct{}{}},
					},
				},
			},
		},
	}
	return []any{ns, sa, ds}
}

func writeManifest(w io.Writer, o *K8sOptions, loop string) error {
	if o.JSON {
		// kubectl apply -f - takes a v1 List as it takes YAML documents.
		var items []any
		for _, obj := range manifestObjects(o, loop) {
			m, err := manifestMap(obj)
			if err != nil {
				return err
			}
			items = append(items, m)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# fastpath %s: doctor on every GPU node, as node_exporter metrics and NFD labels.\n", Version)
	b.WriteString("# nfd-master must allow the fastpath.io label namespace (-extra-label-ns=fastpath.io).\n")
	for i, obj := range manifestObjects(o, loop) {
		doc, err := manifestYAML(obj)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(doc)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// manifestYAML is obj as YAML: encoding/json's object, keys sorted
// (manifestyaml.go).
func manifestYAML(obj any) ([]byte, error) {
	m, err := manifestMap(obj)
	if err != nil {
		return nil, err
	}
	return manifestYAMLOf(m)
}

// manifestMap is obj as a JSON object (a map, so that its keys print
// sorted, as they did when the API types were marshalled).
func manifestMap(obj any) (map[string]any, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// dns1123LabelErrors is k8s.io/apimachinery's validation.IsDNS1123Label,
// messages included (a namespace must be one): at most 63 characters of
// [a-z0-9-], starting and ending with [a-z0-9]. TestDNS1123LabelMatchesAPI
// compares the two.
func dns1123LabelErrors(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, "must be no more than 63 characters")
	}
	if !isDNS1123Label(v) {
		if isDNS1123Subdomain(v) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
		}
	}
	return errs
}

// isDNS1123Label: [a-z0-9]([-a-z0-9]*[a-z0-9])? with no length limit (the
// limit is its own message).
func isDNS1123Label(v string) bool {
	if v == "" {
		return false
	}
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
	for i := 0; i < len(v); i++ {
		if !alnum(v[i]) && v[i] != '-' {
			return false
		}
	}
	return alnum(v[0]) && alnum(v[len(v)-1])
}

// isDNS1123Subdomain: labels joined by dots (again without the length
// limit, which only decides between two messages here).
func isDNS1123Subdomain(v string) bool {
	for _, l := range strings.Split(v, ".") {
		if !isDNS1123Label(l) {
			return false
		}
	}
	return true
}
