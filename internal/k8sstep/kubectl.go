package k8sstep

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// kubectl runs kubectl (the program prog) with the global flags: the
// context and the namespace. Its stderr goes to stderr unless a call
// says otherwise.
type kubectl struct {
	prog   string
	global []string
	stderr io.Writer
}

func newKubectl(prog, kubeContext, namespace string, stderr io.Writer) kubectl {
	var g []string
	if kubeContext != "" {
		g = append(g, "--context", kubeContext)
	}
	return kubectl{prog: prog, global: append(g, "--namespace", namespace), stderr: stderr}
}

// String is the command line a user would type: kubectl --context C --namespace NS.
func (k kubectl) String() string { return strings.Join(append([]string{"kubectl"}, k.global...), " ") }

// run runs kubectl args with its stdout on stdout, its stderr on stderr.
func (k kubectl) run(ctx context.Context, stdout, stderr io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, k.prog, append(append([]string{}, k.global...), args...)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// output runs kubectl args and returns its stdout.
func (k kubectl) output(ctx context.Context, args ...string) ([]byte, error) {
	var out bytes.Buffer
	err := k.run(ctx, &out, k.stderr, args...)
	return out.Bytes(), err
}

// getJSON runs kubectl get args -o json and decodes its answer into v.
func (k kubectl) getJSON(ctx context.Context, v any, args ...string) error {
	out, err := k.output(ctx, append(append([]string{"get"}, args...), "-o", "json")...)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("kubectl get %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// The parts of kubectl's JSON the command reads.
type (
	podList struct {
		Items []pod `json:"items"`
	}
	pod struct {
		Metadata struct {
			Name        string            `json:"name"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Status struct {
			Phase             string            `json:"phase"`
			Conditions        []condition       `json:"conditions"`
			ContainerStatuses []containerStatus `json:"containerStatuses"`
		} `json:"status"`
	}
	condition struct {
		Type    string `json:"type"`
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	containerStatus struct {
		State struct {
			Waiting *struct {
				Reason  string `json:"reason"`
				Message string `json:"message"`
			} `json:"waiting"`
			Terminated *struct {
				ExitCode int    `json:"exitCode"`
				Reason   string `json:"reason"`
			} `json:"terminated"`
		} `json:"state"`
	}
	job struct {
		Status struct {
			Conditions []condition `json:"conditions"`
		} `json:"status"`
	}
)

// index is the pod's completion index ("?" without one).
func (p pod) index() string {
	if i, ok := p.Metadata.Annotations["batch.kubernetes.io/job-completion-index"]; ok {
		return i
	}
	return "?"
}

// terminations says how the pod's containers ended: "exit 1 Error, ...".
func (p pod) terminations() string {
	var out []string
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			out = append(out, fmt.Sprintf("exit %d %s", t.ExitCode, t.Reason))
		}
	}
	return strings.Join(out, ", ")
}

// whyPending is why a pending pod does not run: its false conditions'
// messages (the scheduler's) and its containers' waiting reasons (the
// kubelet's).
func (p pod) whyPending() string {
	var out []string
	for _, c := range p.Status.Conditions {
		if c.Status != "False" {
			continue
		}
		if m := cmp.Or(c.Message, c.Reason); m != "" {
			out = append(out, m)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			out = append(out, w.Reason+": "+w.Message)
		}
	}
	return p.Metadata.Name + ": " + strings.Join(out, "; ")
}

// trueConditions are the job's conditions whose status is True.
func (j job) trueConditions() []string {
	var out []string
	for _, c := range j.Status.Conditions {
		if c.Status == "True" {
			out = append(out, c.Type)
		}
	}
	return out
}
