package kubernetes_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// k8sstep is the k8sstep command (cmd/k8sstep), built once from the
// repository's main module for every test that writes an overlay.
var k8sstep = sync.OnceValues(func() (string, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "k8sstep-test.")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "k8sstep")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/k8sstep")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/k8sstep: %v\n%s", err, out)
	}
	return bin, nil
})

// TestMain removes the built command after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := k8sstep(); err == nil {
		os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// overlay writes k8sstep's overlay for args into a temp dir (--write-overlay,
// which stops before kubectl) and returns the dir.
func overlay(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := k8sstep()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "overlay")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--write-overlay", dir}, args...)...)
	cmd.Env = append(os.Environ(), "IDPBENCH_ROOT="+root)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("k8sstep --write-overlay: %v: %s", err, stderr.String())
	}
	return dir
}
