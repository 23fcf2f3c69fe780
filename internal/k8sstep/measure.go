package k8sstep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// measure runs the step on the cluster: the results go into out, the
// manifest is the rendered Job, work the scratch directory.
func (r *runner) measure(ctx context.Context, out, work string, manifest []byte) (err error) {
	final := filepath.Join(out, r.name+".json")
	agentsDir := filepath.Join(out, r.name+".agents")
	if complete(final) {
		r.log.printf("%s is complete already: nothing to do (remove it to measure again)", final)
		return nil
	}
	if r.leadS > 3600 {
		return fmt.Errorf("the start %s is more than an hour away", r.startAt)
	}
	if r.leadS < 10 {
		return fmt.Errorf("the start %s is %d s past or less than 10 s away: the agents would refuse it (--start-in, --start-at)",
			r.startAt, r.o.now().Unix()-r.startEpoch)
	}
	r.log.step(1, "checking namespace %s for an earlier run and the Secret %s", r.namespace, r.secret)
	if err := r.checkNamespace(ctx); err != nil {
		return err
	}
	rate := ""
	if r.rate != "" {
		rate = " --rate " + r.rate
	}
	r.log.step(2, "creating Job %s: %d agents, %s -c %s%s, start %s (in %d s), deadline %d s",
		jobName, r.nAgents, r.scenario, r.conns, rate, r.startAt, r.leadS, r.deadlineS)
	if err := r.create(ctx, out, agentsDir, work, manifest); err != nil {
		return err
	}
	defer func() { err = r.deleteJob(ctx, err) }()
	r.log.step(3, "waiting for the %d agents (start %s, then %d s warmup and %d s)", r.nAgents, r.startAt, r.warmupS, r.durationS)
	if err := r.wait(ctx, agentsDir); err != nil {
		return err
	}
	r.log.step(4, "collecting the agents' records (the last line of each pod's log)")
	records, err := r.collect(ctx, agentsDir)
	if err != nil {
		return err
	}
	r.log.step(5, "merging the %d records into %s", r.nAgents, final)
	return r.merge(records, final)
}

// complete reports whether file is a complete step result.
func complete(file string) bool {
	b, err := os.ReadFile(file)
	var s struct {
		Status string `json:"status"`
	}
	return err == nil && json.Unmarshal(b, &s) == nil && s.Status == schema.StatusComplete
}

// checkNamespace refuses an earlier run's agents and a missing Secret.
func (r *runner) checkNamespace(ctx context.Context) error {
	left, err := r.kc.output(ctx, "get", "jobs,pods", "-l", agentSelector, "-o", "name")
	if err != nil {
		return orCanceled(ctx, fmt.Errorf("kubectl cannot list jobs and pods in namespace %s", r.namespace))
	}
	if len(bytes.TrimSpace(left)) > 0 {
		return fmt.Errorf("an earlier run's agents are left in namespace %s: %s-- inspect them (%s logs ...) or delete them: %s delete jobs,pods -l %s --cascade=foreground --wait",
			r.namespace, joinLines(left), r.kc, r.kc, agentSelector)
	}
	if err := r.kc.run(ctx, io.Discard, r.log.w, "get", "secret", r.secret, "-o", "name"); err != nil {
		return orCanceled(ctx, fmt.Errorf("no Secret %s in namespace %s: create it with the files LOADSTEP-ARGS name, e.g. %s create secret generic %s --from-file=client-secret=FILE --from-file=pool=POOL (an empty one for scenarios without secrets)",
			r.secret, r.namespace, r.kc, r.secret))
	}
	return nil
}

// create clears an earlier, unfinished attempt's agent files, keeps the
// manifest beside the results and creates the Job.
func (r *runner) create(ctx context.Context, out, agentsDir, work string, manifest []byte) error {
	if err := os.MkdirAll(agentsDir, 0o755); err != nil {
		return err
	}
	for _, pattern := range []string{"agent-*.json", "agent-*.log"} {
		old, _ := filepath.Glob(filepath.Join(agentsDir, pattern))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	job := filepath.Join(work, "job.yaml")
	if err := os.WriteFile(job, manifest, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, r.name+".job.yaml"), manifest, 0o644); err != nil {
		return err
	}
	return r.kc.run(ctx, r.log.w, r.log.w, "create", "-f", job)
}

// wait waits for the Job to complete, failing early: when it fails, when
// an agent is not running by the start time, after its deadline.
func (r *runner) wait(ctx context.Context, agentsDir string) error {
	started := false
	deadline := r.o.now().Add(time.Duration(r.deadlineS+60) * time.Second)
	for {
		err := r.kc.run(ctx, io.Discard, io.Discard, "wait", "--for=condition=complete", "job/"+jobName, "--timeout=10s")
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var j job
		if err := r.kc.getJSON(ctx, &j, "job", jobName); err != nil {
			return orCanceled(ctx, fmt.Errorf("Job %s is gone from namespace %s", jobName, r.namespace))
		}
		state := j.trueConditions()
		if slices.Contains(state, "Failed") || slices.Contains(state, "FailureTarget") {
			r.saveLogs(ctx, agentsDir)
			return fmt.Errorf("Job %s failed (%s); the agents' logs are in %s", jobName, strings.Join(state, " "), agentsDir)
		}
		now := r.o.now()
		if !started && now.Unix() >= r.startEpoch+5 {
			if err := r.checkStarted(ctx); err != nil {
				return err
			}
			started = true
			r.log.printf("all %d agents are running", r.nAgents)
		}
		if !now.Before(deadline) {
			r.saveLogs(ctx, agentsDir)
			return fmt.Errorf("Job %s has not completed %d s after its creation; the agents' logs are in %s", jobName, r.deadlineS+60, agentsDir)
		}
	}
}

// orCanceled is err, or the context's error once it is done (an
// interrupt, exit 130).
func orCanceled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// pods lists the agents' pods.
func (r *runner) pods(ctx context.Context) ([]pod, error) {
	var l podList
	err := r.kc.getJSON(ctx, &l, "pods", "-l", agentSelector)
	return l.Items, err
}

// checkStarted: by the start time every agent runs (or has run); a pod
// still pending would start late, and loadstep refuses a start it missed.
func (r *runner) checkStarted(ctx context.Context) error {
	pods, err := r.pods(ctx)
	if err != nil {
		return err
	}
	var pending []string
	for _, p := range pods {
		if p.Status.Phase == "Pending" {
			pending = append(pending, p.whyPending())
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("agents not running at the start time %s (start them earlier with --start-in, or free nodes: each agent needs a node of its own without the IdP): %s",
			r.startAt, strings.Join(pending, "\n"))
	}
	if len(pods) != r.nAgents {
		return fmt.Errorf("%d of %d agent pods exist at the start time %s", len(pods), r.nAgents, r.startAt)
	}
	return nil
}

// saveLogs writes every agent pod's log into agentsDir/agent-I.log and the
// end of each failed one's on stderr. It does what it can: the run fails
// anyway.
func (r *runner) saveLogs(ctx context.Context, agentsDir string) {
	pods, _ := r.pods(ctx)
	for _, p := range pods {
		file := filepath.Join(agentsDir, "agent-"+p.index()+".log")
		var log bytes.Buffer
		_ = r.kc.run(ctx, &log, &log, "logs", p.Metadata.Name)
		_ = os.WriteFile(file, log.Bytes(), 0o644)
		if p.Status.Phase != "Failed" {
			continue
		}
		var detail pod
		_ = r.kc.getJSON(ctx, &detail, "pod", p.Metadata.Name)
		r.log.printf("agent %s (pod %s) failed: %s; the end of its log:", p.index(), p.Metadata.Name, detail.terminations())
		_, _ = r.log.w.Write(lastLines(log.Bytes(), 20))
	}
}

// lastLines is the last n lines of b, as tail -n prints them.
func lastLines(b []byte, n int) []byte {
	body := bytes.TrimSuffix(b, []byte("\n"))
	start := len(body)
	for ; n > 0; n-- {
		start = bytes.LastIndexByte(body[:start], '\n')
		if start < 0 {
			return b
		}
	}
	return b[start+1:]
}

// collect takes each agent's record by completion index: the last line of
// its succeeded pod's log.
func (r *runner) collect(ctx context.Context, agentsDir string) ([]steps.File, error) {
	pods, err := r.pods(ctx)
	if err != nil {
		return nil, err
	}
	var records []steps.File
	for i := range r.nAgents {
		var mine []string
		for _, p := range pods {
			if p.index() == strconv.Itoa(i) && p.Status.Phase == "Succeeded" {
				mine = append(mine, p.Metadata.Name)
			}
		}
		if len(mine) != 1 {
			return nil, fmt.Errorf("completion index %d: %d succeeded pods, want 1 (%s)", i, len(mine), strings.Join(mine, " "))
		}
		sf, err := r.record(ctx, agentsDir, i, mine[0])
		if err != nil {
			return nil, err
		}
		records = append(records, sf)
	}
	return records, nil
}

// record keeps agent i's log and record and reads the record.
func (r *runner) record(ctx context.Context, agentsDir string, i int, podName string) (steps.File, error) {
	logFile := filepath.Join(agentsDir, fmt.Sprintf("agent-%d.log", i))
	recFile := filepath.Join(agentsDir, fmt.Sprintf("agent-%d.json", i))
	log, err := r.kc.output(ctx, "logs", podName)
	if werr := os.WriteFile(logFile, log, 0o644); err == nil {
		err = werr
	}
	if err != nil {
		return steps.File{}, err
	}
	line := lastLines(log, 1)
	if err := os.WriteFile(recFile, line, 0o644); err != nil {
		return steps.File{}, err
	}
	in, err := model.Load(ctx, []string{recFile}, nil, r.log.warn)
	if !stepRecord(line) || err != nil || len(in.Steps) != 1 {
		return steps.File{}, errors.Join(fmt.Errorf("agent %d (pod %s): the last line of its log is no step record (%s)", i, podName, logFile), err)
	}
	r.log.printf("agent %d: %s", i, summary(in.Steps))
	return in.Steps[0], nil
}

// stepRecord reports whether line is a JSON object whose schema is a step's.
func stepRecord(line []byte) bool {
	var head struct {
		Schema *string `json:"schema"`
	}
	return json.Unmarshal(line, &head) == nil && head.Schema != nil && strings.HasPrefix(*head.Schema, "idpbench.step/")
}

// merge merges the agents' records into file, as aggregate merge does.
func (r *runner) merge(records []steps.File, file string) error {
	s, err := steps.Merge(records)
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(file, 0o644, nil)
	if err != nil {
		return err
	}
	if err := steps.EncodeStep(f, s); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", file, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	r.log.printf("merged: %s", summary([]steps.File{{Path: file, Step: s}}))
	return nil
}

// summary is aggregate summary's text for steps, without its last newline.
func summary(recs []steps.File) string {
	var b strings.Builder
	if err := steps.WriteSummary(&b, steps.SummaryRows(recs), steps.FormatText); err != nil {
		return err.Error()
	}
	return strings.TrimSuffix(b.String(), "\n")
}
