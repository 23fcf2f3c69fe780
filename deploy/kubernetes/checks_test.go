package kubernetes_test

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The base's contract with podstep, loadstep and k8sstep.
const (
	podstepPath    = "/usr/local/bin/podstep"
	loadstepPath   = "/usr/local/bin/loadstep"
	secretMount    = "/secrets"
	indexEnv       = "JOB_COMPLETION_INDEX"
	indexFieldPath = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
	hostnameKey    = "kubernetes.io/hostname"
)

// want is what one rendering must hold beyond the rules every one holds.
type want struct {
	agents    int
	startAt   string              // the start, as given; "" = any valid time
	image     string              // "" = any pinned image
	idpLabels []map[string]string // the labels of the IdP's (and its database's) pods, one term each
	secret    string              // the Secret's name
	args      []string            // loadstep's step arguments (the container's args), nil = any
}

// problem is one failed rule.
type problem struct{ rule, msg string }

func (p problem) String() string { return p.rule + ": " + p.msg }

// rule checks one property of the agents' Job.
type rule struct {
	name  string
	check func(j *batchv1.Job, w want) []string
}

// rules are every check of the rendered Job.
var rules = []rule{
	{"indexed", checkIndexed},
	{"agents", checkAgents},
	{"no-retry", checkNoRetry},
	{"anti-affinity", checkAntiAffinity},
	{"qos", checkQoS},
	{"podstep", checkPodstep},
	{"segment", checkSegment},
	{"start", checkStart},
	{"scrape", checkScrape},
	{"secret-mount", checkSecretMount},
	{"no-secret-in-env", checkNoSecretEnv},
	{"no-secret-in-args", checkNoSecretArgs},
	{"image", checkImage},
	{"hardening", checkHardening},
	{"args", checkArgs},
}

func checkJob(j *batchv1.Job, w want) []problem {
	var out []problem
	for _, r := range rules {
		for _, msg := range r.check(j, w) {
			out = append(out, problem{r.name, msg})
		}
	}
	return out
}

// agent is the one container of the agents' pods.
func agent(j *batchv1.Job) (*corev1.Container, error) {
	cs := j.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(j.Spec.Template.Spec.InitContainers) != 0 {
		return nil, fmt.Errorf("%d containers and %d init containers, want one container", len(cs), len(j.Spec.Template.Spec.InitContainers))
	}
	return &cs[0], nil
}

// expand replaces $(NAME) in s by the literal values of the container's
// environment, as the kubelet does; a variable whose value comes from
// elsewhere (the downward API) stays $(NAME), and $$ stays an escaped $.
func expand(s string, env []corev1.EnvVar) string {
	for _, e := range env {
		if e.ValueFrom == nil {
			s = strings.ReplaceAll(s, "$("+e.Name+")", e.Value)
		}
	}
	return s
}

// commandLine is the container's command and args, expanded.
func commandLine(c *corev1.Container) []string {
	var out []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		out = append(out, expand(a, c.Env))
	}
	return out
}

// loadstepArgs is loadstep's part of the command line: what follows
// /usr/local/bin/loadstep (`podstep --step-file=F -- /usr/local/bin/loadstep ...`).
func loadstepArgs(c *corev1.Container) []string {
	cl := commandLine(c)
	for i, a := range cl {
		if a == loadstepPath {
			return cl[i+1:]
		}
	}
	return nil
}

// flagValues returns every value of the long flag name in args, in the
// forms --name=v and --name v.
func flagValues(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch {
		case strings.HasPrefix(args[i], name+"="):
			out = append(out, strings.TrimPrefix(args[i], name+"="))
		case args[i] == name && i+1 < len(args):
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

func envVar(c *corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func checkIndexed(j *batchv1.Job, _ want) []string {
	if j.Spec.CompletionMode == nil || *j.Spec.CompletionMode != batchv1.IndexedCompletion {
		return []string{"spec.completionMode is not Indexed: the agents would not get their completion index"}
	}
	return nil
}

func checkAgents(j *batchv1.Job, w want) []string {
	p, c := j.Spec.Parallelism, j.Spec.Completions
	if p == nil || c == nil {
		return []string{"spec.parallelism and spec.completions must both be set"}
	}
	var out []string
	if *p != *c {
		out = append(out, fmt.Sprintf("parallelism %d != completions %d: the agents would not all run at once", *p, *c))
	}
	if int(*c) != w.agents {
		out = append(out, fmt.Sprintf("completions %d, want %d agents", *c, w.agents))
	}
	return out
}

func checkNoRetry(j *batchv1.Job, _ want) []string {
	var out []string
	if j.Spec.BackoffLimit == nil || *j.Spec.BackoffLimit != 0 {
		out = append(out, "spec.backoffLimit is not 0: a failed agent would be measured again, out of its window")
	}
	if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		out = append(out, fmt.Sprintf("restartPolicy %q, want Never", j.Spec.Template.Spec.RestartPolicy))
	}
	if j.Spec.ActiveDeadlineSeconds == nil || *j.Spec.ActiveDeadlineSeconds <= 0 {
		out = append(out, "spec.activeDeadlineSeconds is not set: a stuck agent would hold the run")
	}
	return out
}

// checkAntiAffinity: required terms, per node, in every namespace: one
// away from each label of the IdP's pods, one away from the other agents
// (the pod's own labels).
func checkAntiAffinity(j *batchv1.Job, w want) []string {
	a := j.Spec.Template.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return []string{"no podAntiAffinity"}
	}
	own := labels.Set(j.Spec.Template.Labels)
	idp := make([]bool, len(w.idpLabels))
	var self bool
	for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.TopologyKey != hostnameKey || t.LabelSelector == nil || t.NamespaceSelector == nil || len(t.NamespaceSelector.MatchLabels)+len(t.NamespaceSelector.MatchExpressions) != 0 {
			continue // not per node, or not across every namespace
		}
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return []string{err.Error()}
		}
		for i, l := range w.idpLabels {
			idp[i] = idp[i] || len(t.LabelSelector.MatchExpressions) == 0 && mapsEqual(t.LabelSelector.MatchLabels, l)
		}
		self = self || sel.Matches(own)
	}
	var out []string
	for i, ok := range idp {
		if !ok {
			out = append(out, fmt.Sprintf("no required anti-affinity term per node (%s), in every namespace (namespaceSelector {}), from pods labelled %v", hostnameKey, w.idpLabels[i]))
		}
	}
	if len(w.idpLabels) == 0 {
		out = append(out, "no IdP label to keep away from")
	}
	if !self {
		out = append(out, "no required anti-affinity term per node, in every namespace, from the agents' own labels: two agents could share a node")
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// checkQoS: Guaranteed with whole CPUs: every container requests exactly
// its limits of CPU and memory, and the CPU is a whole number.
func checkQoS(j *batchv1.Job, _ want) []string {
	var out []string
	spec := j.Spec.Template.Spec
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		req, lim := c.Resources.Requests, c.Resources.Limits
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			rq, okr := req[r]
			lq, okl := lim[r]
			switch {
			case !okr || !okl:
				out = append(out, fmt.Sprintf("container %s: %s needs both a request and a limit (Guaranteed QoS)", c.Name, r))
			case rq.Cmp(lq) != 0:
				out = append(out, fmt.Sprintf("container %s: %s request %s != limit %s (not Guaranteed QoS)", c.Name, r, rq.String(), lq.String()))
			case lq.Sign() <= 0:
				out = append(out, fmt.Sprintf("container %s: %s limit %s is not above 0", c.Name, r, lq.String()))
			}
		}
		if cpu, ok := lim[corev1.ResourceCPU]; ok && cpu.MilliValue()%1000 != 0 {
			out = append(out, fmt.Sprintf("container %s: CPU %s is not a whole number of CPUs", c.Name, cpu.String()))
		}
	}
	return out
}

// checkPodstep: podstep runs loadstep and owns its output.
func checkPodstep(j *batchv1.Job, _ want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	cl := commandLine(c)
	if len(cl) < 4 || cl[0] != podstepPath || !strings.HasPrefix(cl[1], "--step-file=/") || cl[2] != "--" || cl[3] != loadstepPath {
		return []string{fmt.Sprintf("the command line %q is not %s --step-file=FILE -- %s ...: the record would not be the log's last line", cl, podstepPath, loadstepPath)}
	}
	for _, a := range cl[4:] {
		if a == "-o" || strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--") || a == "--output" || strings.HasPrefix(a, "--output=") {
			return []string{fmt.Sprintf("loadstep argument %q sets the output podstep owns", a)}
		}
	}
	return nil
}

// checkSegment: agent I runs --segment I/N, I from the completion index.
func checkSegment(j *batchv1.Job, w want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	e := envVar(c, indexEnv)
	if e == nil || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != indexFieldPath {
		out = append(out, fmt.Sprintf("env %s is not the downward API's %s", indexEnv, indexFieldPath))
	}
	seg := flagValues(loadstepArgs(c), "--segment")
	wantSeg := fmt.Sprintf("$(%s)/%d", indexEnv, w.agents)
	if len(seg) != 1 || seg[0] != wantSeg {
		out = append(out, fmt.Sprintf("loadstep --segment %q, want exactly one %q", seg, wantSeg))
	}
	return out
}

var unixSeconds = regexp.MustCompile(`^[0-9]{9,11}$`)

// checkStart: every agent starts at one time, set at submission.
func checkStart(j *batchv1.Job, w want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	v := flagValues(loadstepArgs(c), "--start-at")
	if len(v) != 1 {
		return []string{fmt.Sprintf("loadstep --start-at %q, want exactly one", v)}
	}
	if _, err := time.Parse(time.RFC3339Nano, v[0]); err != nil && !unixSeconds.MatchString(v[0]) {
		return []string{fmt.Sprintf("loadstep --start-at %q is neither RFC 3339 nor Unix seconds", v[0])}
	}
	if w.startAt != "" && v[0] != w.startAt {
		return []string{fmt.Sprintf("loadstep --start-at %q, want %q", v[0], w.startAt)}
	}
	return nil
}

// checkScrape: the pods' Prometheus annotations name loadstep's
// --metrics-addr port, and the container declares it.
func checkScrape(j *batchv1.Job, _ want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	an := j.Spec.Template.Annotations
	var out []string
	if an["prometheus.io/scrape"] != "true" || an["prometheus.io/path"] != "/metrics" {
		out = append(out, fmt.Sprintf("annotations prometheus.io/scrape %q, path %q; want \"true\", \"/metrics\"", an["prometheus.io/scrape"], an["prometheus.io/path"]))
	}
	addr := flagValues(loadstepArgs(c), "--metrics-addr")
	if len(addr) != 1 {
		return append(out, fmt.Sprintf("loadstep --metrics-addr %q, want exactly one", addr))
	}
	_, port, err := net.SplitHostPort(addr[0])
	if err != nil {
		return append(out, fmt.Sprintf("loadstep --metrics-addr %q: %v", addr[0], err))
	}
	if an["prometheus.io/port"] != port {
		out = append(out, fmt.Sprintf("annotation prometheus.io/port %q, loadstep --metrics-addr port %s", an["prometheus.io/port"], port))
	}
	declared := false
	for _, p := range c.Ports {
		declared = declared || strconv.Itoa(int(p.ContainerPort)) == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP)
	}
	if !declared {
		out = append(out, fmt.Sprintf("container port %s is not declared", port))
	}
	return out
}

// checkSecretMount: a Secret volume, read-only at /secrets, its files
// readable by their owner (and the pod's fsGroup) only.
func checkSecretMount(j *batchv1.Job, w want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	var vol *corev1.Volume
	for i, v := range j.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			if vol != nil {
				out = append(out, "more than one Secret volume")
			}
			vol = &j.Spec.Template.Spec.Volumes[i]
		}
	}
	if vol == nil {
		return append(out, "no Secret volume")
	}
	s := vol.Secret
	if w.secret != "" && s.SecretName != w.secret {
		out = append(out, fmt.Sprintf("Secret %q, want %q", s.SecretName, w.secret))
	}
	modes := []*int32{s.DefaultMode}
	for _, it := range s.Items {
		if it.Mode != nil {
			modes = append(modes, it.Mode)
		}
	}
	for _, m := range modes {
		if m == nil || *m&^0o440 != 0 || *m&0o400 == 0 {
			out = append(out, fmt.Sprintf("Secret file mode %s: want 0400 (0440 with the fsGroup), never writable, never for others", octal(m)))
		}
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.Name == vol.Name {
			mounted = true
			if !m.ReadOnly || m.MountPath != secretMount {
				out = append(out, fmt.Sprintf("Secret volume mounted at %s, readOnly %v; want %s, read-only", m.MountPath, m.ReadOnly, secretMount))
			}
		}
	}
	if !mounted {
		out = append(out, "the Secret volume is not mounted")
	}
	return out
}

func octal(m *int32) string {
	if m == nil {
		return "unset"
	}
	return fmt.Sprintf("%#o", *m)
}

// secretEnvNames are the variables loadstep reads secrets from; the
// agents read files instead, so none may be set.
var secretEnvNames = map[string]bool{"IDPBENCH_CLIENT_SECRET": true, "IDPBENCH_PASSWORD": true, "IDPBENCH_LOGIN_CLIENT_PAT": true}

// secretish matches the names of variables and flags that would carry a
// secret's value.
var secretish = regexp.MustCompile(`(?i)(secret|passw|token|(^|[-_])pat$)`)

// secretInBody matches a form field with a literal secret (not {{pool}}).
var secretInBody = regexp.MustCompile(`(?i)(client_secret|password|client_assertion|refresh_token|access_token|token)=[^{&]`)

// checkNoSecretEnv: no environment variable carries a secret: none from a
// Secret, none of loadstep's secret variables, no literal under a secret's name.
func checkNoSecretEnv(j *batchv1.Job, _ want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			out = append(out, fmt.Sprintf("env %s comes from Secret %s: secrets are files under %s", e.Name, e.ValueFrom.SecretKeyRef.Name, secretMount))
		case secretEnvNames[e.Name]:
			out = append(out, fmt.Sprintf("env %s is set: it would put a secret in the manifest", e.Name))
		case e.Value != "" && secretish.MatchString(e.Name):
			out = append(out, fmt.Sprintf("env %s holds a literal value under a secret's name", e.Name))
		}
	}
	for _, f := range c.EnvFrom {
		if f.SecretRef != nil {
			out = append(out, fmt.Sprintf("envFrom Secret %s: secrets are files under %s", f.SecretRef.Name, secretMount))
		}
	}
	return out
}

// fileFlags are loadstep's flags that name a secret or a pool.
var fileFlags = []string{"--pool", "--client-secret-file", "--client-assertion-pool", "--password-file", "--login-client-pat-file"}

// checkNoSecretArgs: every secret file loadstep reads is the Secret's;
// nothing that looks like a secret value is an argument.
func checkNoSecretArgs(j *batchv1.Job, _ want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	args := loadstepArgs(c)
	var out []string
	for _, f := range fileFlags {
		for _, v := range flagValues(args, f) {
			if !strings.HasPrefix(v, secretMount+"/") || strings.Contains(v, "..") {
				out = append(out, fmt.Sprintf("loadstep %s %s: not a file of the Secret mounted at %s", f, v, secretMount))
			}
		}
	}
	for _, a := range args {
		name, _, hasValue := strings.Cut(a, "=")
		if hasValue && secretish.MatchString(strings.TrimLeft(name, "-")) && !strings.HasSuffix(name, "-file") && !strings.HasSuffix(name, "-pool") && !strings.HasSuffix(name, "-url") {
			out = append(out, fmt.Sprintf("loadstep argument %s=... looks like a secret value on the command line", name))
		}
	}
	for _, h := range flagValues(args, "--header") {
		k, v, _ := strings.Cut(h, ":")
		if strings.EqualFold(strings.TrimSpace(k), "Authorization") && !strings.Contains(v, "{{pool}}") {
			out = append(out, "loadstep --header Authorization: a literal credential on the command line (use {{pool}} and a pool file)")
		}
	}
	for _, b := range flagValues(args, "--body") {
		if secretInBody.MatchString(b) {
			out = append(out, "loadstep --body holds a literal credential (use {{pool}} and a pool file)")
		}
	}
	return out
}

// checkImage: the image is pinned, by a tag other than latest or by a digest.
func checkImage(j *batchv1.Job, w want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	ref := c.Image
	if w.image != "" && ref != w.image {
		return []string{fmt.Sprintf("image %q, want %q", ref, w.image)}
	}
	if strings.Contains(ref, "@sha256:") {
		return nil
	}
	name := ref[strings.LastIndex(ref, "/")+1:]
	tag, ok := "", strings.Contains(name, ":")
	if ok {
		tag = name[strings.LastIndex(name, ":")+1:]
	}
	if !ok || tag == "" || tag == "latest" {
		return []string{fmt.Sprintf("image %q is not pinned by a tag or a digest", ref)}
	}
	return nil
}

// checkHardening: non-root, read-only root file system, no privilege
// escalation, no service account token.
func checkHardening(j *batchv1.Job, _ want) []string {
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	ps := j.Spec.Template.Spec
	if ps.SecurityContext == nil || ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
		out = append(out, "the pod does not run as non-root")
	}
	if ps.SecurityContext == nil || ps.SecurityContext.FSGroup == nil {
		out = append(out, "no fsGroup: the nonroot user could not read the Secret's files (owned by root)")
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		out = append(out, "the container's root file system is writable or it may escalate privileges")
	}
	if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		out = append(out, "the service account token is mounted: the agents never call the API")
	}
	return out
}

// checkArgs: loadstep's step arguments are the ones given.
func checkArgs(j *batchv1.Job, w want) []string {
	if w.args == nil {
		return nil
	}
	c, err := agent(j)
	if err != nil {
		return []string{err.Error()}
	}
	if fmt.Sprint(c.Args) != fmt.Sprint(w.args) {
		return []string{fmt.Sprintf("args %q, want %q", c.Args, w.args)}
	}
	return nil
}
