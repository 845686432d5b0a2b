package cli

// The few Kubernetes API fields that `fastpath k8s manifest` sets, as our
// own types: linking k8s.io/api and k8s.io/apimachinery for three objects
// made every fastpath start pay for their package inits and a larger
// binary (issue 17). The JSON names are the API's; the tests decode the
// manifest strictly into the real k8s.io/api types (a field the API does
// not know fails) and compare it byte for byte with the manifest the API
// types printed (testdata/k8s).

// typeMeta is metav1.TypeMeta.
type typeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// objectMeta is the part of metav1.ObjectMeta the manifest sets.
type objectMeta struct {
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// k8sNamespace is corev1.Namespace; its spec is empty but present, as
// the API type prints it.
type k8sNamespace struct {
	typeMeta
	Metadata objectMeta `json:"metadata"`
	Spec     struct{}   `json:"spec"`
}

// k8sServiceAccount is corev1.ServiceAccount.
type k8sServiceAccount struct {
	typeMeta
	Metadata                     objectMeta `json:"metadata"`
	AutomountServiceAccountToken *bool      `json:"automountServiceAccountToken,omitempty"`
}

// k8sDaemonSet is appsv1.DaemonSet.
type k8sDaemonSet struct {
	typeMeta
	Metadata objectMeta    `json:"metadata"`
	Spec     daemonSetSpec `json:"spec"`
}

type daemonSetSpec struct {
	Selector       *labelSelector          `json:"selector,omitempty"`
	Template       podTemplateSpec         `json:"template"`
	UpdateStrategy daemonSetUpdateStrategy `json:"updateStrategy"`
}

type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

type daemonSetUpdateStrategy struct {
	Type string `json:"type,omitempty"`
}

type podTemplateSpec struct {
	Metadata objectMeta `json:"metadata"`
	Spec     podSpec    `json:"spec"`
}

type podSpec struct {
	Volumes                      []volume          `json:"volumes,omitempty"`
	Containers                   []container       `json:"containers"`
	NodeSelector                 map[string]string `json:"nodeSelector,omitempty"`
	ServiceAccountName           string            `json:"serviceAccountName,omitempty"`
	AutomountServiceAccountToken *bool             `json:"automountServiceAccountToken,omitempty"`
	Tolerations                  []toleration      `json:"tolerations,omitempty"`
	PriorityClassName            string            `json:"priorityClassName,omitempty"`
}

type toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

type container struct {
	Name            string               `json:"name"`
	Image           string               `json:"image,omitempty"`
	Command         []string             `json:"command,omitempty"`
	Args            []string             `json:"args,omitempty"`
	Env             []envVar             `json:"env,omitempty"`
	Resources       resourceRequirements `json:"resources"`
	VolumeMounts    []volumeMount        `json:"volumeMounts,omitempty"`
	SecurityContext *securityContext     `json:"securityContext,omitempty"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// resourceRequirements holds quantities as the API prints them ("10m",
// "64Mi"): the manifest writes constants, so nothing is parsed.
type resourceRequirements struct {
	Limits   map[string]string `json:"limits,omitempty"`
	Requests map[string]string `json:"requests,omitempty"`
}

type securityContext struct {
	ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem,omitempty"`
	AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation,omitempty"`
}

type volumeMount struct {
	Name      string `json:"name"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
	MountPath string `json:"mountPath"`
}

type volume struct {
	Name     string                `json:"name"`
	HostPath *hostPathVolumeSource `json:"hostPath,omitempty"`
	EmptyDir *struct{}             `json:"emptyDir,omitempty"`
}

type hostPathVolumeSource struct {
	Path string `json:"path"`
	Type string `json:"type,omitempty"`
}
