package kubernetes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeKubectl stands in for kubectl and a cluster whose Job runs as $FAKE
// says ("ok": every agent succeeds; "fail": agent 1 fails), with the
// state in $FAKE_DIR: leftovers (what `get jobs,pods -o name` lists),
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
	local i phase sep=""
	printf '{"items": ['
	for ((i = 0; i < FAKE_AGENTS; i++)); do
		phase=Succeeded
		[[ "$FAKE" == fail && $i == 1 ]] && phase=Failed
		printf '%s{"metadata": {"name": "idpbench-agents-%d-x%d", "annotations": {"batch.kubernetes.io/job-completion-index": "%d"}}, "status": {"phase": "%s"}}' "$sep" "$i" "$i" "$i" "$phase"
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

// fakeAggregate stands in for aggregate: summary prints a line; merge
// checks that every input is a step record and writes one naming them.
const fakeAggregate = `#!/bin/bash
set -o errexit -o nounset -o pipefail
echo "$*" >>"$FAKE_DIR/aggregate-calls"
case "$1" in
summary) echo "summary of $2" ;;
merge)
	[[ "$2" == -o ]] || exit 2
	out="$3"
	shift 3
	for f in "$@"; do jq -e '.schema == "idpbench.step/v1"' "$f" >/dev/null; done
	jq -n --args '{schema: "idpbench.step/v1", status: "complete", agents: ($ARGS.positional | length)}' "$@" >"$out" ;;
*) exit 2 ;;
esac
`

type fakeCluster struct {
	dir, bin, out string
}

func newFakeCluster(t *testing.T, agents int) *fakeCluster {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("jq is needed (scripts/k8s-step.sh reads kubectl's JSON with it): install it (apt-get install jq)")
	}
	f := &fakeCluster{dir: t.TempDir()}
	f.bin = filepath.Join(f.dir, "bin")
	f.out = filepath.Join(f.dir, "out")
	if err := os.MkdirAll(f.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"kubectl": fakeKubectl, "aggregate": fakeAggregate} {
		if err := os.WriteFile(filepath.Join(f.bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := os.ReadFile("../../internal/schema/testdata/step-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < agents; i++ {
		if err := os.WriteFile(filepath.Join(f.dir, "record-"+strconv.Itoa(i)+".json"), rec, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// run runs the script in mode against the fake cluster.
func (f *fakeCluster) run(t *testing.T, mode string, agents int, extra ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"../../scripts/k8s-step.sh", "--agents", strconv.Itoa(agents), "--url", "http://keycloak:8080/realms/bench/protocol/openid-connect/token",
		"--scenario", "client_credentials", "-c", "8", "--image", "registry.example/idpbench-tools:v1", "--namespace", "bench", "--out", f.out}, extra...)
	cmd := exec.CommandContext(ctx, "bash", args...)
	cmd.Env = append(os.Environ(), "PATH="+f.bin+":"+os.Getenv("PATH"), "IDPBENCH_BIN="+f.bin, "IDPBENCH_TMP="+f.dir,
		"FAKE="+mode, "FAKE_DIR="+f.dir, "FAKE_AGENTS="+strconv.Itoa(agents))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatal("the script did not run")
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

func (f *fakeCluster) calls(t *testing.T) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(f.dir, "calls"))
	return string(b)
}

// The run path of scripts/k8s-step.sh against a stand-in for kubectl and a
// cluster: what it asks kubectl, what it collects and what it leaves.
func TestScriptRun(t *testing.T) {
	name := "client_credentials-c8-n3"
	t.Run("complete", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		code, stderr := f.run(t, "ok", 3)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for i := 0; i < 3; i++ {
			idx := strconv.Itoa(i)
			log, err := os.ReadFile(filepath.Join(f.out, name+".agents", "agent-"+idx+".log"))
			if err != nil || !strings.HasPrefix(string(log), "loadstep: agent "+idx+" summary\n") {
				t.Errorf("agent %d's log %q (%v)", i, log, err)
			}
			var rec map[string]any
			if b, err := os.ReadFile(filepath.Join(f.out, name+".agents", "agent-"+idx+".json")); err != nil || json.Unmarshal(b, &rec) != nil || rec["schema"] != "idpbench.step/v1" {
				t.Errorf("agent %d's record: %v", i, err)
			}
		}
		agg, _ := os.ReadFile(filepath.Join(f.dir, "aggregate-calls"))
		agentsDir := filepath.Join(f.out, name+".agents")
		wantMerge := "merge -o " + filepath.Join(f.out, name+".json") + " " + agentsDir + "/agent-0.json " + agentsDir + "/agent-1.json " + agentsDir + "/agent-2.json"
		if !strings.Contains(string(agg), wantMerge+"\n") {
			t.Errorf("aggregate calls %q, want %q", agg, wantMerge)
		}
		if b, err := os.ReadFile(filepath.Join(f.out, name+".job.yaml")); err != nil || !strings.HasPrefix(string(b), "kind: Job") {
			t.Errorf("the manifest applied was not kept: %q %v", b, err)
		}
		calls := f.calls(t)
		for _, want := range []string{
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
		// A complete result is not measured again.
		before := f.calls(t)
		code, stderr = f.run(t, "ok", 3)
		if code != 0 || !strings.Contains(stderr, "is complete already") {
			t.Errorf("rerun: exit %d, %s", code, stderr)
		}
		if strings.Contains(strings.TrimPrefix(f.calls(t), before), "create") {
			t.Error("rerun created a Job")
		}
	})
	t.Run("an agent fails", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		code, stderr := f.run(t, "fail", 3)
		if code != 1 || !strings.Contains(stderr, "Job idpbench-agents failed") || !strings.Contains(stderr, "agent 1 (pod idpbench-agents-1-x1) failed: exit 1 Error") ||
			!strings.Contains(stderr, "the start passed 3.2 s ago") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(f.out, name+".json")); err == nil {
			t.Error("a merged record despite a failed agent")
		}
		if !strings.Contains(f.calls(t), "delete job idpbench-agents") {
			t.Error("the failed Job was not deleted")
		}
	})
	t.Run("leftovers refused", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		if err := os.WriteFile(filepath.Join(f.dir, "leftovers"), []byte("job.batch/idpbench-agents\npod/idpbench-agents-0-abcde\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := f.run(t, "ok", 3)
		if code != 1 || !strings.Contains(stderr, "an earlier run's agents are left in namespace bench: job.batch/idpbench-agents pod/idpbench-agents-0-abcde") ||
			!strings.Contains(stderr, "delete jobs,pods -l app.kubernetes.io/name=idpbench-agent") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if calls := f.calls(t); strings.Contains(calls, "create") || strings.Contains(calls, "delete") {
			t.Errorf("with leftovers the script created or deleted something:\n%s", calls)
		}
	})
	t.Run("no Secret", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		if err := os.WriteFile(filepath.Join(f.dir, "no-secret"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := f.run(t, "ok", 3)
		if code != 1 || !strings.Contains(stderr, "no Secret idpbench-agent in namespace bench: create it") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
		if strings.Contains(f.calls(t), "create") {
			t.Error("the Job was created without its Secret")
		}
	})
	t.Run("keep", func(t *testing.T) {
		f := newFakeCluster(t, 3)
		code, stderr := f.run(t, "ok", 3, "--keep")
		if code != 0 || strings.Contains(f.calls(t), "delete") || !strings.Contains(stderr, "kept the Job; delete it with") {
			t.Errorf("--keep: exit %d, deleted anyway or said nothing:\n%s", code, stderr)
		}
	})
}
