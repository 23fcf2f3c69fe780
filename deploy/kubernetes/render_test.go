package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// render builds the kustomization in dir as `kubectl kustomize dir` does
// (kustomize's default options: files only from within the
// kustomization's root, no plugins) and decodes every object it yields.
func render(dir string) ([]*batchv1.Job, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	var jobs []*batchv1.Job
	for _, r := range m.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, r.CurId(), err)
		}
		j, err := decodeJob(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, r.CurId(), err)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// decodeJob decodes one YAML document strictly into batch/v1 Job: a field
// the type does not have (a misspelling, a field of another kind) and a
// key given twice are errors, as is an object of any other kind (the
// manifests hold nothing else).
func decodeJob(doc []byte) (*batchv1.Job, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	if head.APIVersion != "batch/v1" || head.Kind != "Job" {
		return nil, fmt.Errorf("unexpected object %s %s: the manifests hold one batch/v1 Job", head.APIVersion, head.Kind)
	}
	var j batchv1.Job
	if err := yaml.UnmarshalStrict(doc, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// renderOne renders dir and returns its single Job.
func renderOne(t *testing.T, dir string) *batchv1.Job {
	t.Helper()
	jobs, err := render(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("%s renders %d objects, want one Job", dir, len(jobs))
	}
	return jobs[0]
}

// script runs scripts/k8s-step.sh with args and returns its exit code and
// its stderr. It needs bash only: the tests give it --write-overlay,
// which stops before kubectl.
func script(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "scripts", "k8s-step.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "IDPBENCH_TMP="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("running scripts/k8s-step.sh: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// overlay writes the script's overlay for args into a temp dir and
// returns the dir.
func overlay(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "overlay")
	code, stderr := script(t, append([]string{"--write-overlay", dir}, args...)...)
	if code != 0 {
		t.Fatalf("k8s-step.sh --write-overlay: exit %d: %s", code, stderr)
	}
	return dir
}
