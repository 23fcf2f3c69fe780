// Package k8sstep is the k8sstep command (cmd/k8sstep): one load step
// measured by N loadstep agents on Kubernetes, as an Indexed Job
// (deploy/kubernetes), their records merged as `aggregate merge` merges
// them.
//
// It renders the manifest with `kubectl kustomize` from an overlay it
// writes (the base, the step's values: overlay.go); refuses when an
// earlier run's Job or pods are left in the namespace, or the Secret is
// missing; `kubectl create`s the Job (never reusing one); waits with
// `kubectl wait`, failing early -- with the pods' logs -- when an agent
// fails, when an agent is not running by the start time, or after the
// Job's deadline; takes each agent's record, the last line of its pod's
// log (cmd/podstep), by completion index; merges them in process
// (steps.Merge); and deletes the Job on exit unless --keep. It talks to
// the cluster through kubectl only, as a user would, and reads kubectl's
// JSON into the few fields it needs.
package k8sstep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
)

const usageHead = `Usage: k8sstep --agents N --url URL --scenario S -c C --image REF [FLAGS] [-- LOADSTEP-ARGS...]

One load step measured by N loadstep agents on Kubernetes: an Indexed Job
(deploy/kubernetes/base), agent I of N running loadstep --segment I/N from one
common --start-at, each on a node of its own and none of the IdP's; their
records merged as 'aggregate merge' merges them. scripts/k8s-step.sh builds
the tools and runs it.

It renders the manifest with 'kubectl kustomize' from an overlay of the base;
refuses when an earlier run's Job or pods are left in the namespace (and
prints the command that deletes them) or the Secret is missing; 'kubectl
create's the Job (never reusing one); waits with 'kubectl wait', failing early
-- with the pods' logs -- when an agent fails, when an agent is not running by
the start time (the scheduler's or the kubelet's reason), or after the Job's
deadline; takes each agent's record, the last line of its pod's log
(cmd/podstep), by completion index; merges them; and deletes the Job and its
pods on exit (unless --keep).

Results in --out DIR: DIR/NAME.json, the merged step; DIR/NAME.agents/agent-I.json
and agent-I.log, each agent's record and its pod's log; DIR/NAME.job.yaml, the
manifest created. NAME is SCENARIO-cC[-rR]-nN. A complete DIR/NAME.json is not
measured again.

LOADSTEP-ARGS are more loadstep flags (--client-id, --pool, --product ...);
the files they name must be under /secrets; the flags above and --output,
--segment, --start-at, --metrics-addr are k8sstep's.

The base is deploy/kubernetes/base of the repository: $IDPBENCH_ROOT, else the
directory above the working directory that holds it. Needs kubectl (except for
--write-overlay). Exit codes: 0 ok (or already complete), 1 failure, 2 usage,
130 interrupted (the Job is deleted).

Flags:
`

const usageTail = `
Examples:
  k8sstep --agents 4 --image registry.example/idpbench-tools:v0.9.0 \
    --url http://keycloak-service.keycloak.svc:8080/realms/bench/protocol/openid-connect/token \
    --scenario client_credentials -c 256 --warmup 30s --duration 60s \
    --idp-label app.kubernetes.io/instance=keycloak \
    -- --client-id bench-svc --client-secret-file /secrets/client-secret --product keycloak
  aggregate summary results/k8s/client_credentials-c256-n4.json
  k8sstep --agents 4 --url http://idp/ --scenario discovery -c 64 --render-only | less
`

// options are what the command takes from its surroundings.
type options struct {
	kubectl string           // the kubectl program
	now     func() time.Time // the clock
	root    string           // the repository; "" = $IDPBENCH_ROOT, else found above the working directory
	tmp     string           // the parent of the scratch directory; "" = the system's
}

// Run is the k8sstep command: it parses args, runs the step and returns
// the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, stdout, stderr, options{kubectl: "kubectl", now: time.Now,
		root: os.Getenv("IDPBENCH_ROOT"), tmp: os.Getenv("IDPBENCH_TMP")})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, o options) int {
	var c config
	fs := newFlagSet(&c)
	if code, done := (cli.Help{Tool: "k8sstep", Head: usageHead, Tail: usageTail}).Parse(fs, args, &c.version, stdout, stderr); done {
		return code
	}
	c.startInSet = fs.Changed("start-in")
	rest := fs.Args()
	dash := fs.ArgsLenAtDash()
	if dash < 0 {
		dash = len(rest)
	}
	if dash > 0 {
		return cli.Fail(stderr, "k8sstep", cli.Usagef("unknown argument: %s", rest[0]))
	}
	c.extra = rest[dash:]
	lg := logger{w: stderr, now: o.now}
	s, err := c.validate(o.now(), lg.warn)
	if err == nil {
		err = newRunner(s, o, stdout, lg).run(ctx)
	}
	return cli.Fail(stderr, "k8sstep", err)
}

// runner runs one validated step.
type runner struct {
	*step
	o      options
	kc     kubectl // with --context and --namespace
	stdout io.Writer
	log    logger
}

func newRunner(s *step, o options, stdout io.Writer, lg logger) *runner {
	return &runner{step: s, o: o, kc: newKubectl(o.kubectl, s.context, s.namespace, lg.w), stdout: stdout, log: lg}
}

func (r *runner) run(ctx context.Context) error {
	root, err := findRoot(r.o.root)
	if err != nil {
		return err
	}
	base := filepath.Join(root, "deploy", "kubernetes", "base")
	if r.overlayDir != "" {
		if err := r.writeOverlay(r.overlayDir, base); err != nil {
			return fmt.Errorf("writing the overlay into %s: %w", r.overlayDir, err)
		}
		r.log.printf("wrote the overlay for %s (start %s) into %s; render it with: kubectl kustomize %s", r.name, r.startAt, r.overlayDir, r.overlayDir)
		return nil
	}
	work, err := os.MkdirTemp(r.o.tmp, "idpbench-k8s.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	overlay := filepath.Join(work, "overlay")
	if err := r.writeOverlay(overlay, base); err != nil {
		return fmt.Errorf("writing the overlay into %s: %w", overlay, err)
	}
	plain := kubectl{prog: r.o.kubectl, stderr: r.log.w} // kustomize reads files only: no context, no namespace
	manifest, err := plain.output(ctx, "kustomize", overlay)
	if err != nil {
		return err
	}
	if r.renderOnly {
		_, err := r.stdout.Write(manifest)
		return err
	}
	out := r.out
	if out == "" {
		out = filepath.Join(root, "results", "k8s")
	}
	return r.measure(ctx, out, work, manifest)
}

// findRoot is the repository: root when given, else the first directory
// at or above the working directory that holds deploy/kubernetes/base.
func findRoot(root string) (string, error) {
	const base = "deploy/kubernetes/base/kustomization.yaml"
	if root != "" {
		if _, err := os.Stat(filepath.Join(root, base)); err != nil {
			return "", fmt.Errorf("finding the base: IDPBENCH_ROOT %s: %w", root, err)
		}
		return root, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the base: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, base)); err == nil {
			return dir, nil
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("finding the base: no %s at or above %s: run k8sstep inside the repository or set IDPBENCH_ROOT", base, wd)
		}
	}
}

// logger writes progress to stderr as the scripts do: "15:04:05 k8sstep: ...".
type logger struct {
	w   io.Writer
	now func() time.Time
}

func (l logger) printf(format string, a ...any) {
	fmt.Fprintf(l.w, "%s k8sstep: %s\n", l.now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func (l logger) warn(msg string) { l.printf("warning: %s", msg) }

// stepCount is the number of steps a run prints.
const stepCount = 5

func (l logger) step(n int, format string, a ...any) {
	l.printf("[step %d/%d] %s", n, stepCount, fmt.Sprintf(format, a...))
}

// deleteJob deletes the Job and its pods (unless --keep) once a run that
// created it ends, however it ends; a failed delete fails the run (exit 1).
func (r *runner) deleteJob(ctx context.Context, err error) error {
	if r.keep {
		r.log.printf("kept the Job; delete it with: %s delete job %s --cascade=foreground --wait", r.kc, jobName)
		return err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 150*time.Second)
	defer cancel()
	derr := r.kc.run(dctx, r.log.w, r.log.w, "delete", "job", jobName, "--cascade=foreground", "--wait=true", "--timeout=120s", "--ignore-not-found")
	if derr != nil {
		r.log.warn(fmt.Sprintf("could not delete the Job; delete it with: %s delete job %s --cascade=foreground --wait", r.kc, jobName))
		return cli.CodeError{Code: cli.ExitRuntime, Err: errors.Join(err, derr)}
	}
	return err
}

// joinLines is the lines of b joined by spaces, with a space after the
// last ("job.batch/x pod/y ").
func joinLines(b []byte) string {
	var s strings.Builder
	for _, f := range strings.Fields(string(b)) {
		s.WriteString(f + " ")
	}
	return s.String()
}
