package k8sstep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeKubectl stands in for kubectl and a cluster whose Job runs as $FAKE
// says ("ok": every agent succeeds; "fail": agent 1 fails; "pending": the
// agents are never scheduled; "slow": they run and never complete), with
// the state in $FAKE_DIR: leftovers (what `get jobs,pods -o name` lists),
// no-secret (the Secret is missing), calls (every call, one a line).
// Agent I's log is a loadstep line, then record-I.json as one line.
const fakeKubectl = `#!/bin/bash
set -o errexit -o nounset -o pipefail
echo "$*" >>"$FAKE_DIR/calls"
args=()
while (($# > 0)); do
	case "$1" in
	--context | --namespace) shift ;;
	*) args+=("$1") ;;
	esac
	shift
done
set -- "${args[@]}"
pods() {
	local i phase more sep=""
	printf '{"items": ['
	for ((i = 0; i < FAKE_AGENTS; i++)); do
		phase=Succeeded more=""
		[[ "$FAKE" == fail && $i == 1 ]] && phase=Failed
		[[ "$FAKE" == slow ]] && phase=Running
		if [[ "$FAKE" == pending ]]; then
			phase=Pending
			more=', "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available: 3 node(s) did not match pod anti-affinity rules."}], "containerStatuses": [{"state": {"waiting": {"reason": "ContainerCreating"}}}]'
		fi
		printf '%s{"metadata": {"name": "idpbench-agents-%d-x%d", "annotations": {"batch.kubernetes.io/job-completion-index": "%d"}}, "status": {"phase": "%s"%s}}' "$sep" "$i" "$i" "$i" "$phase" "$more"
		sep=,
	done
	printf ']}\n'
}
case "$1 ${2:-}" in
"kustomize "*) echo "kind: Job # rendered from $2" ;;
"get jobs,pods") cat "$FAKE_DIR/leftovers" 2>/dev/null || true ;;
"get secret") [[ ! -e "$FAKE_DIR/no-secret" ]] || { echo "Error from server (NotFound): secrets \"$3\" not found" >&2; exit 1; } ; echo "secret/$3" ;;
"create -f") echo "job.batch/idpbench-agents created" ;;
"wait --for=condition=complete") [[ "$FAKE" == ok ]] || { echo "error: timed out waiting for the condition" >&2; exit 1; } ;;
"get job")
	if [[ "$FAKE" == fail ]]; then echo '{"status": {"conditions": [{"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}]}}'
	else echo '{"status": {}}'; fi ;;
"get pods") pods ;;
"get pod") echo '{"status": {"containerStatuses": [{"state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}' ;;
"logs "*)
	i="${2#idpbench-agents-}" i="${i%%-*}"
	echo "loadstep: agent $i summary"
	if [[ "$FAKE" == fail && $i == 1 ]]; then echo "loadstep: --start-at: the start passed 3.2 s ago"; else tr -d '\n' <"$FAKE_DIR/record-$i.json"; echo; fi ;;
"delete job") echo "job.batch \"$3\" deleted" ;;
*) echo "fake kubectl: unexpected call: $*" >&2; exit 3 ;;
esac
`

type fakeCluster struct {
	dir, kubectl, out string
}

func newFakeCluster(t *testing.T, agents int) *fakeCluster {
	t.Helper()
	f := &fakeCluster{dir: t.TempDir()}
	f.kubectl = filepath.Join(f.dir, "kubectl")
	f.out = filepath.Join(f.dir, "out")
	if err := os.WriteFile(f.kubectl, []byte(fakeKubectl), 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile("../schema/testdata/step-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := range agents {
		if err := os.WriteFile(filepath.Join(f.dir, "record-"+strconv.Itoa(i)+".json"), rec, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// run runs the command in mode against the fake cluster, on the clock now
// (nil: the real one).
func (f *fakeCluster) run(t *testing.T, mode string, agents int, now func() time.Time, extra ...string) (int, string) {
	t.Helper()
	t.Setenv("FAKE", mode)
	t.Setenv("FAKE_DIR", f.dir)
	t.Setenv("FAKE_AGENTS", strconv.Itoa(agents))
	args := append([]string{"--agents", strconv.Itoa(agents), "--url", "http://keycloak:8080/realms/bench/protocol/openid-connect/token",
		"--scenario", "client_credentials", "-c", "8", "--image", "registry.example/idpbench-tools:v1", "--namespace", "bench", "--out", f.out}, extra...)
	code, stdout, stderr := runArgs(t, f.kubectl, now, args...)
	if stdout != "" {
		t.Errorf("stdout %q: a run prints nothing there", stdout)
	}
	return code, stderr
}

func (f *fakeCluster) calls(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(f.dir, "calls"))
	return string(b)
}

// ticking is a clock that advances by step on every reading, as the wait
// loop's `kubectl wait --timeout=10s` would.
func ticking(step time.Duration) func() time.Time {
	t := time.Now()
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// The run path against a stand-in for kubectl and a cluster: what it asks
// kubectl, what it collects and what it leaves.
func TestRun(t *testing.T) {
	name := "client_credentials-c8-n3"
	t.Run("complete", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		code, stderr := f.run(t, "ok", 3, nil)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for i := range 3 {
			idx := strconv.Itoa(i)
			log, err := os.ReadFile(filepath.Join(f.out, name+".agents", "agent-"+idx+".log"))
			if err != nil || !strings.HasPrefix(string(log), "loadstep: agent "+idx+" summary\n") {
				t.Errorf("agent %d's log %q (%v)", i, log, err)
			}
			var rec map[string]any
			if b, err := os.ReadFile(filepath.Join(f.out, name+".agents", "agent-"+idx+".json")); err != nil || json.Unmarshal(b, &rec) != nil || rec["schema"] != "idpbench.step/v1" {
				t.Errorf("agent %d's record: %v", i, err)
			}
			if !strings.Contains(stderr, "agent "+idx+": product") {
				t.Errorf("no summary of agent %d:\n%s", i, stderr)
			}
		}
		// The three records, merged: three agents' requests in one complete step.
		var merged struct {
			Schema, Status string
			Agents         int
			Requests       int64
		}
		if b, err := os.ReadFile(filepath.Join(f.out, name+".json")); err != nil || json.Unmarshal(b, &merged) != nil {
			t.Fatalf("the merged record: %v", err)
		}
		if merged.Schema != "idpbench.step/v1" || merged.Status != "complete" || merged.Agents != 3 || merged.Requests != 3*124000 {
			t.Errorf("merged %+v, want 3 agents of 124000 requests, complete", merged)
		}
		if !strings.Contains(stderr, "merged: product") || !strings.Contains(stderr, filepath.Join(f.out, name+".json")) {
			t.Errorf("no summary of the merged step:\n%s", stderr)
		}
		if b, err := os.ReadFile(filepath.Join(f.out, name+".job.yaml")); err != nil || !strings.HasPrefix(string(b), "kind: Job") {
			t.Errorf("the manifest applied was not kept: %q %v", b, err)
		}
		calls := f.calls(t)
		for _, want := range []string{
			"kustomize ",
			"get jobs,pods -l app.kubernetes.io/name=idpbench-agent -o name",
			"--namespace bench get secret idpbench-agent -o name",
			"--namespace bench create -f ",
			"--namespace bench wait --for=condition=complete job/idpbench-agents --timeout=10s",
			"--namespace bench delete job idpbench-agents --cascade=foreground --wait=true",
		} {
			if !strings.Contains(calls, want) {
				t.Errorf("kubectl was not called with %q; calls:\n%s", want, calls)
			}
		}
		if strings.Contains(calls, " apply ") {
			t.Error("kubectl apply: the Job must be created, never reused")
		}
		if entries, _ := os.ReadDir(f.dir); len(entries) > 0 {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "idpbench-k8s.") {
					t.Errorf("the scratch directory %s was left", e.Name())
				}
			}
		}
		// A complete result is not measured again.
		before := f.calls(t)
		code, stderr = f.run(t, "ok", 3, nil)
		if code != 0 || !strings.Contains(stderr, "is complete already") {
			t.Errorf("rerun: exit %d, %s", code, stderr)
		}
		if strings.Contains(strings.TrimPrefix(f.calls(t), before), "create") {
			t.Error("rerun created a Job")
		}
	})
	t.Run("an agent fails", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		code, stderr := f.run(t, "fail", 3, nil)
		if code != 1 || !strings.Contains(stderr, "Job idpbench-agents failed (FailureTarget Failed)") || !strings.Contains(stderr, "agent 1 (pod idpbench-agents-1-x1) failed: exit 1 Error") ||
			!strings.Contains(stderr, "the start passed 3.2 s ago") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(f.out, name+".json")); err == nil {
			t.Error("a merged record despite a failed agent")
		}
		if log, err := os.ReadFile(filepath.Join(f.out, name+".agents", "agent-1.log")); err != nil || !strings.Contains(string(log), "the start passed") {
			t.Errorf("the failed agent's log was not kept: %q %v", log, err)
		}
		if !strings.Contains(f.calls(t), "delete job idpbench-agents") {
			t.Error("the failed Job was not deleted")
		}
	})
	t.Run("not scheduled by the start", func(t *testing.T) {
		f := newFakeCluster(t, 2)
		code, stderr := f.run(t, "pending", 2, ticking(10*time.Second))
		if code != 1 || !strings.Contains(stderr, "agents not running at the start time") ||
			!strings.Contains(stderr, "idpbench-agents-0-x0: 0/3 nodes are available: 3 node(s) did not match pod anti-affinity rules.; ContainerCreating: ") ||
			!strings.Contains(stderr, "idpbench-agents-1-x1: ") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if !strings.Contains(f.calls(t), "delete job idpbench-agents") {
			t.Error("the Job was not deleted")
		}
	})
	t.Run("past the deadline", func(t *testing.T) {
		f := newFakeCluster(t, 2)
		code, stderr := f.run(t, "slow", 2, ticking(20*time.Second), "--duration", "10", "--warmup", "0")
		if code != 1 || !strings.Contains(stderr, "all 2 agents are running") ||
			!strings.Contains(stderr, "Job idpbench-agents has not completed 250 s after its creation") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if log, err := os.ReadFile(filepath.Join(f.out, "client_credentials-c8-n2.agents", "agent-0.log")); err != nil || !strings.HasPrefix(string(log), "loadstep: agent 0 summary") {
			t.Errorf("the agents' logs were not kept: %q %v", log, err)
		}
	})
	t.Run("leftovers refused", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		if err := os.WriteFile(filepath.Join(f.dir, "leftovers"), []byte("job.batch/idpbench-agents\npod/idpbench-agents-0-abcde\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := f.run(t, "ok", 3, nil)
		if code != 1 || !strings.Contains(stderr, "an earlier run's agents are left in namespace bench: job.batch/idpbench-agents pod/idpbench-agents-0-abcde") ||
			!strings.Contains(stderr, "kubectl --namespace bench delete jobs,pods -l app.kubernetes.io/name=idpbench-agent") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if calls := f.calls(t); strings.Contains(calls, "create") || strings.Contains(calls, "delete") {
			t.Errorf("with leftovers the command created or deleted something:\n%s", calls)
		}
	})
	t.Run("no Secret", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		if err := os.WriteFile(filepath.Join(f.dir, "no-secret"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := f.run(t, "ok", 3, nil)
		if code != 1 || !strings.Contains(stderr, "no Secret idpbench-agent in namespace bench: create it") ||
			!strings.Contains(stderr, `secrets "idpbench-agent" not found`) {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if strings.Contains(f.calls(t), "create") {
			t.Error("the Job was created without its Secret")
		}
	})
	t.Run("keep", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		code, stderr := f.run(t, "ok", 3, nil, "--keep", "--context", "kind-bench")
		if code != 0 || strings.Contains(f.calls(t), "delete") ||
			!strings.Contains(stderr, "kept the Job; delete it with: kubectl --context kind-bench --namespace bench delete job idpbench-agents") {
			t.Errorf("--keep: exit %d, deleted anyway or said nothing:\n%s", code, stderr)
		}
	})
	t.Run("start too close", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		code, stderr := f.run(t, "ok", 3, nil, "--start-in", "5")
		if code != 1 || !strings.Contains(stderr, "less than 10 s away") || strings.Contains(f.calls(t), "create") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
	t.Run("render only", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		t.Setenv("FAKE_DIR", f.dir)
		code, stdout, stderr := runArgs(t, f.kubectl, nil, "--agents", "3", "--url", "http://idp/", "--scenario", "discovery", "-c", "3", "--render-only")
		if code != 0 || !strings.HasPrefix(stdout, "kind: Job # rendered from ") || f.calls(t) != "kustomize "+strings.TrimPrefix(strings.TrimSpace(stdout), "kind: Job # rendered from ")+"\n" {
			t.Errorf("exit %d, stdout %q, stderr %q, calls %q", code, stdout, stderr, f.calls(t))
		}
	})
}
