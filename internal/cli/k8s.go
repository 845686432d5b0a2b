package cli

import (
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

func checkFormat(format string) error {
	switch format {
	case "", "text", "json", "markdown", "prom", "nfd":
		return nil
	}
	return usageErrorf("--format %q: want text, json, markdown, prom or nfd", format)
}

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
	Image       string
	Namespace   string
	Interval    time.Duration
	TextfileDir string
	FeaturesDir string
	Models      []string
}

func newK8sCommand(ios *IO) *cobra.Command {
	k8s := &cobra.Command{
		Use:   "k8s",
		Short: "Kubernetes: run doctor on every GPU node",
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
	manifest.Flags().StringVar(&o.Image, "image", "", "container `IMAGE` with fastpath at /usr/local/bin/fastpath and a POSIX sh (your training image; required)")
	manifest.Flags().StringVar(&o.Namespace, "namespace", "fastpath", "`NAMESPACE` to create and run in")
	manifest.Flags().DurationVar(&o.Interval, "interval", 10*time.Minute, "time between doctor runs")
	manifest.Flags().StringVar(&o.TextfileDir, "textfile-dir", "/var/lib/node_exporter/textfile_collector", "host `DIR` node_exporter's --collector.textfile.directory reads")
	manifest.Flags().StringVar(&o.FeaturesDir, "features-dir", "/etc/kubernetes/node-feature-discovery/features.d", "host `DIR` nfd-worker reads feature files from")
	manifest.Flags().StringArrayVar(&o.Models, "model", nil, "also judge this model (`CONFIG|DIR|ORG/NAME`, as seen inside the image; repeatable)")
	k8s.AddCommand(manifest)
	return k8s
}

// RunK8sManifest prints the DaemonSet manifest.
func RunK8sManifest(o *K8sOptions, ios *IO) error {
	if o.Image == "" {
		return usageErrorf("--image is required: an image with fastpath at /usr/local/bin/fastpath (for example your training image with the static binary copied in)")
	}
	if o.Interval < time.Minute {
		return usageErrorf("--interval %s: at least 1m", o.Interval)
	}
	for _, d := range []string{o.TextfileDir, o.FeaturesDir} {
		if !strings.HasPrefix(d, "/") {
			return usageErrorf("%q: host folders must be absolute", d)
		}
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

func yamlString(s string) string {
	// A Go-quoted string is a valid YAML double-quoted scalar (YAML has
	// the same \n, \", \\, \x and \u escapes): one rule for any text.
	return fmt.Sprintf("%q", s)
}

func writeManifest(w io.Writer, o *K8sOptions, loop string) error {
	ns := yamlString(o.Namespace)
	var b strings.Builder
	fmt.Fprintf(&b, `# fastpath %s: doctor on every GPU node, as node_exporter metrics and NFD labels.
# nfd-master must allow the fastpath.io label namespace (-extra-label-ns=fastpath.io).
apiVersion: v1
kind: Namespace
metadata:
  name: %s
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: fastpath
  namespace: %s
automountServiceAccountToken: false
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: fastpath-doctor
  namespace: %s
  labels:
    app.kubernetes.io/name: fastpath-doctor
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: fastpath-doctor
  updateStrategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        app.kubernetes.io/name: fastpath-doctor
    spec:
      serviceAccountName: fastpath
      automountServiceAccountToken: false
      nodeSelector:
        nvidia.com/gpu.present: "true"
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      priorityClassName: system-node-critical
      containers:
        - name: doctor
          image: %s
          command: ["/bin/sh", "-c"]
          args:
            - %s
          env:
            # No GPU is requested (doctor must not take one from the jobs);
            # the driver and devices are read from the host's files below.
            - name: NVIDIA_VISIBLE_DEVICES
              value: void
          resources:
            requests:
              cpu: 10m
              memory: 64Mi
            limits:
              memory: 256Mi
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
          volumeMounts:
            - name: nvidia-proc
              mountPath: /proc/driver/nvidia
              readOnly: true
            - name: sys
              mountPath: /sys
              readOnly: true
            - name: textfile
              mountPath: /out/textfile
            - name: features
              mountPath: /out/features.d
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: nvidia-proc
          hostPath:
            path: /proc/driver/nvidia
        - name: sys
          hostPath:
            path: /sys
        - name: textfile
          hostPath:
            path: %s
            type: DirectoryOrCreate
        - name: features
          hostPath:
            path: %s
            type: DirectoryOrCreate
        - name: tmp
          emptyDir: {}
`, Version, ns, ns, ns, yamlString(o.Image), yamlString(loop), yamlString(o.TextfileDir), yamlString(o.FeaturesDir))
	_, err := io.WriteString(w, b.String())
	return err
}
