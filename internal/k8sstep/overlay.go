package k8sstep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v3"
)

// The overlay is three files: kustomization.yaml (the base, the
// namespace, the two patches), job.json (a strategic merge patch of the
// Job: the agents, the deadline, the image, loadstep's arguments, the
// start, the resources, the Secret) and idp-label.json (a JSON patch of
// the anti-affinity: the IdP's labels). Kustomize reads JSON as YAML.

type kustomization struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Namespace  string     `yaml:"namespace"`
	Resources  []string   `yaml:"resources"`
	Patches    []patchRef `yaml:"patches"`
}

type patchRef struct {
	Path   string       `yaml:"path"`
	Target *patchTarget `yaml:"target,omitempty"`
}

type patchTarget struct {
	Kind string `yaml:"kind"`
	Name string `yaml:"name"`
}

// jobPatch is the part of a batch/v1 Job the overlay sets.
type jobPatch struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   metadata `json:"metadata"`
	Spec       jobSpec  `json:"spec"`
}

type metadata struct {
	Name string `json:"name"`
}

type jobSpec struct {
	Parallelism           int         `json:"parallelism"`
	Completions           int         `json:"completions"`
	ActiveDeadlineSeconds int64       `json:"activeDeadlineSeconds"`
	Template              podTemplate `json:"template"`
}

type podTemplate struct {
	Spec podSpec `json:"spec"`
}

type podSpec struct {
	Containers []container `json:"containers"`
	Volumes    []volume    `json:"volumes"`
}

type container struct {
	Name      string    `json:"name"`
	Image     string    `json:"image"`
	Args      []string  `json:"args"`
	Env       []envVar  `json:"env"`
	Resources resources `json:"resources"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type resources struct {
	Requests quantities `json:"requests"`
	Limits   quantities `json:"limits"`
}

type quantities struct {
	CPU    string `json:"cpu"`
	Memory string `json:"memory"`
}

type volume struct {
	Name   string       `json:"name"`
	Secret secretVolume `json:"secret"`
}

type secretVolume struct {
	SecretName string `json:"secretName"`
}

// patchOp is one operation of a JSON patch (RFC 6902).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// affinityTerm is a required pod anti-affinity term: per node, across
// every namespace.
type affinityTerm struct {
	LabelSelector     labelSelector `json:"labelSelector"`
	NamespaceSelector struct{}      `json:"namespaceSelector"`
	TopologyKey       string        `json:"topologyKey"`
}

type labelSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// antiAffinity is the path of the base's required anti-affinity terms.
const antiAffinity = "/spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution"

// loadstepArgs are the step's own loadstep arguments, then LOADSTEP-ARGS.
func (s *step) loadstepArgs() []string {
	args := []string{"--url=" + s.url, "--scenario=" + s.scenario, "--connections=" + s.conns,
		"--warmup=" + strconv.FormatInt(s.warmupS, 10) + "s", "--duration=" + strconv.FormatInt(s.durationS, 10) + "s"}
	if s.rate != "" {
		args = append(args, "--rate="+s.rate)
	}
	return append(args, s.extra...)
}

func (s *step) jobPatch() jobPatch {
	q := quantities{CPU: s.cpus, Memory: s.memory}
	return jobPatch{
		APIVersion: "batch/v1", Kind: "Job", Metadata: metadata{Name: jobName},
		Spec: jobSpec{
			Parallelism: s.nAgents, Completions: s.nAgents, ActiveDeadlineSeconds: s.deadlineS,
			Template: podTemplate{Spec: podSpec{
				Containers: []container{{
					Name: "loadstep", Image: s.image, Args: s.loadstepArgs(),
					Env:       []envVar{{"IDPBENCH_AGENTS", s.agents}, {"IDPBENCH_START_AT", s.startAt}},
					Resources: resources{Requests: q, Limits: q},
				}},
				Volumes: []volume{{Name: "secrets", Secret: secretVolume{SecretName: s.secret}}},
			}},
		},
	}
}

// idpPatch replaces the labels of the base's first anti-affinity term,
// the IdP's, by the first --idp-label ("test" fails the render if the
// base's order changed); more labels are terms of their own before the
// agents' term (the scheduler keeps every term: off every such node).
func (s *step) idpPatch() []patchOp {
	ops := []patchOp{
		{"test", antiAffinity + "/0/labelSelector/matchLabels/app.kubernetes.io~1part-of", "idp-under-test"},
		{"replace", antiAffinity + "/0/labelSelector/matchLabels", s.idp[0].selector()},
	}
	for i, l := range s.idp[1:] {
		ops = append(ops, patchOp{"add", antiAffinity + "/" + strconv.Itoa(i+1),
			affinityTerm{LabelSelector: labelSelector{l.selector()}, TopologyKey: "kubernetes.io/hostname"}})
	}
	return ops
}

func (l label) selector() map[string]string { return map[string]string{l.key: l.value} }

// writeOverlay writes the overlay into dir, whose base is the directory base.
func (s *step) writeOverlay(dir, base string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rel, err := relPath(dir, base)
	if err != nil {
		return err
	}
	var k bytes.Buffer
	fmt.Fprintf(&k, "# Written by k8sstep for %s, start %s.\n", s.name, s.startAt)
	enc := yaml.NewEncoder(&k)
	enc.SetIndent(2)
	err = enc.Encode(kustomization{
		APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Namespace: s.namespace,
		Resources: []string{rel},
		Patches:   []patchRef{{Path: "job.json"}, {Path: "idp-label.json", Target: &patchTarget{Kind: "Job", Name: jobName}}},
	})
	if err != nil {
		return fmt.Errorf("encoding kustomization.yaml: %w", err)
	}
	files := map[string]any{"job.json": s.jobPatch(), "idp-label.json": s.idpPatch()}
	for name, v := range files {
		b, err := encodeJSON(v)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "kustomization.yaml"), k.Bytes(), 0o644)
}

// encodeJSON is v as indented JSON, URLs' & < > as they are.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return b.Bytes(), err
}

// relPath is the path of directory to relative to directory from, both
// with their symbolic links resolved (kustomize takes a base by a
// relative path only).
func relPath(from, to string) (string, error) {
	var err error
	for _, p := range []*string{&from, &to} {
		if *p, err = filepath.Abs(*p); err == nil {
			*p, err = filepath.EvalSymlinks(*p)
		}
		if err != nil {
			return "", err
		}
	}
	return filepath.Rel(from, to)
}
