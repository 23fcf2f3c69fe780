package kubernetes_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var defaultIdP = []map[string]string{{"app.kubernetes.io/part-of": "idp-under-test"}}

// baseWant is what the base itself holds.
var baseWant = want{agents: 2, idpLabels: defaultIdP, secret: "idpbench-agent"}

func assertClean(t *testing.T, j *batchv1.Job, w want) {
	t.Helper()
	for _, p := range checkJob(j, w) {
		t.Error(p)
	}
}

func TestBase(t *testing.T) {
	j := renderOne(t, "base")
	assertClean(t, j, baseWant)
	// The base alone never measures: its start is long past, and loadstep
	// refuses a start it missed by more than an interval.
	c, _ := agent(j)
	start, err := time.Parse(time.RFC3339, flagValues(loadstepArgs(c), "--start-at")[0])
	if err != nil || time.Since(start) < 24*time.Hour {
		t.Errorf("the base's start %v (%v) is not long past", start, err)
	}
}

// The overlays k8sstep writes, rendered as `kubectl kustomize` renders
// them. (Its argument checks and its run path are internal/k8sstep's tests.)
func TestOverlays(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		want        want
		minDeadline int64
	}{
		{
			name: "closed loop, secrets from the Secret, another IdP label",
			args: []string{"--agents", "4", "--url", "http://keycloak-service.keycloak.svc:8080/realms/bench/protocol/openid-connect/token",
				"--scenario", "client_credentials", "-c", "64", "--warmup", "10s", "--duration", "120",
				"--image", "registry.example/idpbench-tools:v1.2.3", "--namespace", "bench", "--secret", "kc-agents",
				"--cpus", "4", "--memory", "2Gi", "--start-at", "2031-05-06T07:08:09.5Z", "--idp-label", "app.kubernetes.io/instance=keycloak", "--idp-label", "cnpg.io/cluster=keycloak-db",
				"--", "--client-id", "bench-svc", "--client-secret-file", "/secrets/client-secret", "--product", "keycloak", "--label", "run=k8s"},
			want: want{agents: 4, startAt: "2031-05-06T07:08:09.5Z", image: "registry.example/idpbench-tools:v1.2.3",
				idpLabels: []map[string]string{{"app.kubernetes.io/instance": "keycloak"}, {"cnpg.io/cluster": "keycloak-db"}}, secret: "kc-agents",
				args: []string{"--url=http://keycloak-service.keycloak.svc:8080/realms/bench/protocol/openid-connect/token",
					"--scenario=client_credentials", "--connections=64", "--warmup=10s", "--duration=120s",
					"--client-id", "bench-svc", "--client-secret-file", "/secrets/client-secret", "--product", "keycloak", "--label", "run=k8s"}},
			minDeadline: 10 + 120 + 120,
		},
		{
			name: "open loop, a pool, Unix seconds",
			args: []string{"--agents", "3", "--url", "http://hydra-public.hydra.svc:4444/userinfo", "--scenario", "userinfo",
				"-c", "30", "--rate", "3000", "--image", "registry.example/idpbench-tools@sha256:" + strings.Repeat("ab", 32),
				"--start-at", "1950000000", "--", "--pool=/secrets/pool", "--pool-mode", "reuse"},
			want: want{agents: 3, startAt: "1950000000", idpLabels: defaultIdP, secret: "idpbench-agent",
				args: []string{"--url=http://hydra-public.hydra.svc:4444/userinfo", "--scenario=userinfo", "--connections=30",
					"--warmup=10s", "--duration=60s", "--rate=3000", "--pool=/secrets/pool", "--pool-mode", "reuse"}},
			minDeadline: 10 + 60 + 120,
		},
		{
			name: "one agent, the default start",
			args: []string{"--agents", "1", "--url", "http://zitadel.zitadel.svc:8080/.well-known/openid-configuration",
				"--scenario", "discovery", "-c", "1", "--image", "registry.example/idpbench-tools:v1"},
			want:        want{agents: 1, idpLabels: defaultIdP, secret: "idpbench-agent"},
			minDeadline: 60 + 10 + 60 + 120,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := overlay(t, tt.args...)
			j := renderOne(t, dir)
			assertClean(t, j, tt.want)
			if j.Namespace == "" {
				t.Error("no namespace set")
			}
			if d := *j.Spec.ActiveDeadlineSeconds; d < tt.minDeadline {
				t.Errorf("activeDeadlineSeconds %d, want at least %d: the warmup (its cap), the window and a margin", d, tt.minDeadline)
			}
		})
	}
}

// Without --start-at the start is --start-in (default 60 s) after now.
func TestDefaultStart(t *testing.T) {
	before := time.Now()
	j := renderOne(t, overlay(t, "--agents", "2", "--url", "http://idp/", "--scenario", "discovery", "-c", "2",
		"--image", "r/t:1", "--start-in", "90s"))
	c, _ := agent(j)
	start, err := time.Parse(time.RFC3339, flagValues(loadstepArgs(c), "--start-at")[0])
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi := before.Add(89*time.Second), time.Now().Add(91*time.Second); start.Before(lo) || start.After(hi) {
		t.Errorf("start %v, want about 90 s after %v", start, before)
	}
	if d := *j.Spec.ActiveDeadlineSeconds; d < 90+10+60 {
		t.Errorf("activeDeadlineSeconds %d does not cover the lead, the warmup and the window", d)
	}
}

// Strict decoding refuses what kustomize renders without complaint.
func TestStrictDecoding(t *testing.T) {
	_, err := render("testdata/misspelled")
	if err == nil || !strings.Contains(err.Error(), `unknown field "backofLimit"`) {
		t.Errorf("a misspelled field: error %v, want unknown field spec.backofLimit", err)
	}
	base, err := os.ReadFile("base/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeJob(base); err != nil {
		t.Errorf("base/job.yaml itself: %v", err)
	}
	dup := strings.Replace(string(base), "  backoffLimit: 0", "  backoffLimit: 0\n  backoffLimit: 1", 1)
	if _, err := decodeJob([]byte(dup)); err == nil || !strings.Contains(err.Error(), "backoffLimit") {
		t.Errorf("a key given twice: error %v, want one naming backoffLimit", err)
	}
	wrongType := strings.Replace(string(base), "parallelism: 2", `parallelism: "2"`, 1)
	if _, err := decodeJob([]byte(wrongType)); err == nil {
		t.Error("parallelism as a string decoded")
	}
	if _, err := decodeJob([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")); err == nil || !strings.Contains(err.Error(), "unexpected object v1 ConfigMap") {
		t.Errorf("another kind: error %v", err)
	}
}

// Rendered fixtures that break QoS: the check must name them.
func TestQoSFixtures(t *testing.T) {
	for dir, say := range map[string]string{
		"testdata/unequal-limits": "cpu request 2 != limit 3",
		"testdata/fractional-cpu": "CPU 1500m is not a whole number",
	} {
		probs := checkJob(renderOne(t, dir), baseWant)
		if len(probs) != 1 || probs[0].rule != "qos" || !strings.Contains(probs[0].msg, say) {
			t.Errorf("%s: problems %v, want one qos problem saying %q", dir, probs, say)
		}
	}
}

// Every rule fails on a Job that breaks it, and only that rule.
func TestChecksFail(t *testing.T) {
	tests := []struct {
		rule   string
		mutate func(j *batchv1.Job, c *corev1.Container)
	}{
		{"indexed", func(j *batchv1.Job, _ *corev1.Container) { j.Spec.CompletionMode = new(batchv1.NonIndexedCompletion) }},
		{"agents", func(j *batchv1.Job, _ *corev1.Container) { j.Spec.Parallelism = new(int32(1)) }},
		{"no-retry", func(j *batchv1.Job, _ *corev1.Container) { j.Spec.BackoffLimit = new(int32(6)) }},
		{"no-retry", func(j *batchv1.Job, _ *corev1.Container) {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}},
		{"anti-affinity", func(j *batchv1.Job, _ *corev1.Container) {
			terms := j.Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			j.Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = terms[1:]
		}},
		{"anti-affinity", func(j *batchv1.Job, _ *corev1.Container) {
			j.Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].NamespaceSelector = nil
		}},
		{"anti-affinity", func(j *batchv1.Job, _ *corev1.Container) {
			a := j.Spec.Template.Spec.Affinity.PodAntiAffinity
			a.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: a.RequiredDuringSchedulingIgnoredDuringExecution[1]}}
			a.RequiredDuringSchedulingIgnoredDuringExecution = a.RequiredDuringSchedulingIgnoredDuringExecution[:1]
		}},
		{"qos", func(_ *batchv1.Job, c *corev1.Container) {
			c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("512Mi")
		}},
		{"qos", func(_ *batchv1.Job, c *corev1.Container) { delete(c.Resources.Limits, corev1.ResourceCPU) }},
		{"podstep", func(_ *batchv1.Job, c *corev1.Container) { c.Command = c.Command[3:] }},
		{"podstep", func(_ *batchv1.Job, c *corev1.Container) { c.Args = append(c.Args, "-o", "/work/x.json") }},
		{"segment", func(_ *batchv1.Job, c *corev1.Container) { c.Command[5] = "--segment=0/$(IDPBENCH_AGENTS)" }},
		{"segment", func(_ *batchv1.Job, c *corev1.Container) { envVar(c, "IDPBENCH_AGENTS").Value = "3" }},
		{"start", func(_ *batchv1.Job, c *corev1.Container) { c.Command = append(c.Command[:4], c.Command[5:]...) }},
		{"start", func(_ *batchv1.Job, c *corev1.Container) { envVar(c, "IDPBENCH_START_AT").Value = "soon" }},
		{"scrape", func(j *batchv1.Job, _ *corev1.Container) { delete(j.Spec.Template.Annotations, "prometheus.io/scrape") }},
		{"scrape", func(j *batchv1.Job, _ *corev1.Container) { j.Spec.Template.Annotations["prometheus.io/port"] = "9090" }},
		{"scrape", func(_ *batchv1.Job, c *corev1.Container) { c.Ports = nil }},
		{"secret-mount", func(j *batchv1.Job, _ *corev1.Container) {
			j.Spec.Template.Spec.Volumes[0].Secret.DefaultMode = new(int32(0o644))
		}},
		{"secret-mount", func(j *batchv1.Job, _ *corev1.Container) { j.Spec.Template.Spec.Volumes[0].Secret.DefaultMode = nil }},
		{"secret-mount", func(_ *batchv1.Job, c *corev1.Container) { c.VolumeMounts[0].ReadOnly = false }},
		{"no-secret-in-env", func(_ *batchv1.Job, c *corev1.Container) {
			c.Env = append(c.Env, corev1.EnvVar{Name: "IDPBENCH_CLIENT_SECRET", Value: "hunter2"})
		}},
		{"no-secret-in-env", func(_ *batchv1.Job, c *corev1.Container) {
			c.Env = append(c.Env, corev1.EnvVar{Name: "CS", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "idpbench-agent"}, Key: "client-secret"}}})
		}},
		{"no-secret-in-env", func(_ *batchv1.Job, c *corev1.Container) {
			c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "idpbench-agent"}}}}
		}},
		{"no-secret-in-args", func(_ *batchv1.Job, c *corev1.Container) {
			c.Args = append(c.Args, "--client-secret-file", "/work/secret")
		}},
		{"no-secret-in-args", func(_ *batchv1.Job, c *corev1.Container) {
			c.Args = append(c.Args, "--header", "Authorization: Bearer eyJhbGciOi")
		}},
		{"no-secret-in-args", func(_ *batchv1.Job, c *corev1.Container) {
			c.Args = append(c.Args, "--body", "grant_type=password&password=hunter2")
		}},
		{"image", func(_ *batchv1.Job, c *corev1.Container) { c.Image = "registry.example/idpbench-tools" }},
		{"image", func(_ *batchv1.Job, c *corev1.Container) { c.Image = "registry.example:5000/idpbench-tools:latest" }},
		{"hardening", func(_ *batchv1.Job, c *corev1.Container) { c.SecurityContext.ReadOnlyRootFilesystem = new(false) }},
		{"hardening", func(j *batchv1.Job, _ *corev1.Container) { j.Spec.Template.Spec.AutomountServiceAccountToken = nil }},
	}
	base := renderOne(t, "base")
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%s-%d", tt.rule, i), func(t *testing.T) {
			j := base.DeepCopy()
			tt.mutate(j, &j.Spec.Template.Spec.Containers[0])
			probs := checkJob(j, baseWant)
			if len(probs) == 0 {
				t.Fatalf("no problem found, want one of rule %s", tt.rule)
			}
			for _, p := range probs {
				if p.rule != tt.rule {
					t.Errorf("problem %s, want only rule %s", p, tt.rule)
				}
			}
		})
	}
	// The checks that need an expectation fail on a mismatch too.
	for _, w := range []want{
		{agents: 3, idpLabels: defaultIdP, secret: "idpbench-agent"},
		{agents: 2, idpLabels: []map[string]string{{"app": "keycloak"}}, secret: "idpbench-agent"},
		{agents: 2, idpLabels: append([]map[string]string{{"app": "keycloak"}}, defaultIdP...), secret: "idpbench-agent"},
		{agents: 2, idpLabels: defaultIdP, secret: "other"},
		{agents: 2, idpLabels: defaultIdP, secret: "idpbench-agent", startAt: "2000-01-01T00:00:01Z"},
		{agents: 2, idpLabels: defaultIdP, secret: "idpbench-agent", image: "r/t:2"},
		{agents: 2, idpLabels: defaultIdP, secret: "idpbench-agent", args: []string{"--scenario=discovery"}},
	} {
		if len(checkJob(base, w)) == 0 {
			t.Errorf("the base passes against %+v", w)
		}
	}
}
