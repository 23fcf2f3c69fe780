package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	for _, c := range []struct{ in, want string }{
		{"--segment=$(A)/$(B)", "--segment=1/two"},
		{"$(C) stays", "$(C) stays"},
		{"$$(A) escaped", "$(A) escaped"},
		{"cost $5 and $", "cost $5 and $"},
		{"$(A", "$(A"},
		{"$(A)$(A)", "11"},
	} {
		if got := expand(c.in, vars); got != c.want {
			t.Errorf("expand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestQuantity(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"2", 2, true}, {"500m", 0.5, true}, {"1Gi", 1 << 30, true}, {"64Mi", 64 << 20, true},
		{"512M", 512e6, true}, {"1.5", 1.5, true}, {"1e3", 0, false}, {"", 0, false}, {"2Pi", 0, false},
	} {
		got, err := quantity(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("quantity(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

// agentPod is an agent pod in the shape the API server returns it
// (testdata/agent-pod.json: the fields used; a scheduled pod).
func agentPod(t *testing.T) pod {
	t.Helper()
	var p pod
	b, err := os.ReadFile("testdata/agent-pod.json")
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDockerArgs: the agent pod runs as the kubelet would run it: its
// user, groups, security settings, limits, env and arguments expanded by
// the completion index, the Secret's files 0440 under the volume's
// directory, bind-mounted read-only, the emptyDir a tmpfs.
func TestDockerArgs(t *testing.T) {
	p := agentPod(t)
	s := secret{Data: map[string]string{"client-secret": "c2VjcmV0"}} // "secret"
	s.Metadata.Name = "idpbench-agent"
	dir := t.TempDir()
	args, err := dockerArgs(p, s, dir, "container:sandbox")
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	for _, want := range []string{
		"--name k8s_idpbench_idpbench-agents-1-abcde ", "--label io.kubernetes.pod.name=idpbench-agents-1-abcde ",
		"--network container:sandbox ", "--user 65532:65532 --group-add 65532 ", "--read-only ", "--security-opt no-new-privileges ",
		"--cap-drop ALL ", "--cpus 2 --memory 1073741824 ",
		"--env JOB_COMPLETION_INDEX=1 ", "--env IDPBENCH_AGENTS=3 ", "--env GOMAXPROCS=2 ",
		"--mount type=bind,src=" + filepath.Join(dir, "secrets") + ",dst=/secrets,readonly ",
		"--tmpfs /work:mode=1777,size=67108864 ",
		"--entrypoint /usr/local/bin/podstep localhost/idpbench-tools:test --step-file=/work/step.json -- /usr/local/bin/loadstep " +
			"--start-at=2026-12-05T21:00:00Z --segment=1/3 --metrics-addr=:9102 --url=http://127.0.0.1:8080/x",
	} {
		if !strings.Contains(line+" ", want) {
			t.Errorf("docker run arguments lack %q:\n%s", want, line)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "secrets", "client-secret"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o440 {
		t.Errorf("the Secret's file: mode %v, want 0440 (defaultMode 0400, group read for the fsGroup)", fi.Mode().Perm())
	}
}

// TestDockerArgsRefused: what the stand-in cannot run as the kubelet
// would is refused, naming it.
func TestDockerArgsRefused(t *testing.T) {
	s := secret{}
	s.Metadata.Name = "idpbench-agent"
	for _, c := range []struct {
		name, want string
		edit       func(*pod)
	}{
		{"unscheduled", "not scheduled", func(p *pod) { p.Spec.NodeName = "" }},
		{"two containers", "2 containers", func(p *pod) { p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0]) }},
		{"secret env", "no Secret or ConfigMap keys", func(p *pod) {
			p.Spec.Containers[0].Env[0].ValueFrom.FieldRef = nil
		}},
		{"other Secret", "but the Secret given is", func(p *pod) {
			i := slices.IndexFunc(p.Spec.Volumes, func(v volume) bool { return v.Secret != nil })
			p.Spec.Volumes[i].Secret.SecretName = "other"
		}},
		{"no user", "no runAsUser", func(p *pod) { p.Spec.SecurityContext.RunAsUser = nil }},
		{"fieldRef", "fieldRef status.podIP", func(p *pod) { p.Spec.Containers[0].Env[0].ValueFrom.FieldRef.FieldPath = "status.podIP" }},
	} {
		p := agentPod(t)
		c.edit(&p)
		if _, err := dockerArgs(p, s, t.TempDir(), "host"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", c.name, err, c.want)
		}
	}
}
