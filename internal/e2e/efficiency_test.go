package e2e

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestE2EEfficiency: requests per CPU-second against /proc. One discovery
// step against the reference OP (warmup 0: its measured window is the whole
// run) under a sampler; the report's figure for that step (aggregate
// efficiency, from the sampler's records) is within 10% of its ok requests
// over the CPU seconds the OP's process group spent from just before the
// step to just after it, read here from /proc/PID/stat (utime + stime, in
// clock ticks), not from the sampler. The two figures are set against each
// other, never against a number, so a busy machine moves both.
// IDPBENCH_REFOP_URL and IDPBENCH_REFOP_PIDFILE are a reference OP started
// for this test alone (its pidfile's pid leads its process group).
func TestE2EEfficiency(t *testing.T) {
	env := need(t, "IDPBENCH_REFOP_URL", "IDPBENCH_REFOP_PIDFILE")
	issuer, pidfile := strings.TrimRight(env[0], "/")+"/", env[1]
	sampler, loadstep := tool(t, "sampler"), tool(t, "loadstep")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	pgid := pidOf(t, pidfile)
	hz, err := strconv.ParseFloat(strings.TrimSpace(run(ctx, t, nil, "getconf", "CLK_TCK")), 64)
	if err != nil {
		t.Fatal(err)
	}

	log, err := os.Create(filepath.Join(dir, "sampler.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	samples := filepath.Join(dir, "samples.jsonl")
	s := exec.Command(sampler, "--pidfile", pidfile, "--name", "refop", "--every", "1s", "--host=false", "-o", samples)
	s.Stdout, s.Stderr = log, log
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.Wait() }()
	t.Cleanup(func() { s.Process.Kill() })
	time.Sleep(2 * time.Second) // records before the window opens
	before := groupTicks(t, pgid)
	stepFile := filepath.Join(dir, "discovery.json")
	run(ctx, t, nil, loadstep, "--url", issuer+".well-known/openid-configuration", "--scenario", "discovery",
		"-c", "4", "--warmup", "0", "--duration", "20s", "--product", "refop", "-o", stepFile)
	after := groupTicks(t, pgid)
	time.Sleep(2 * time.Second) // a record after the window closes
	s.Process.Signal(os.Interrupt)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("the sampler did not stop cleanly: %v (log: %s)", err, log.Name())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the sampler did not stop within 30 s of SIGINT (log: %s)", log.Name())
	}

	e := efficiency(ctx, t, stepFile, samples)
	procCPU := float64(after-before) / hz
	proc := float64(e.OK) / procCPU
	if e.PerIdP == nil || proc <= 0 || math.Abs(*e.PerIdP/proc-1) > 0.10 {
		t.Fatalf("refop discovery: req/CPU-s from the sampler %s, from /proc %d -> %d ticks at %g/s (%.0f): want within 10%%",
			jsonOf(map[string]any{"req_per_cpu_s": e.PerIdP, "idp_cpu_s": e.IdPCPUS, "ok": e.OK, "na": e.NA}), before, after, hz, proc)
	}
	t.Logf("ok: refop discovery %.0f req/CPU-s from the sampler (%.2f CPU-s), %.0f from /proc (%.2f CPU-s)",
		*e.PerIdP, *e.IdPCPUS, proc, procCPU)
}

// efficiency is the report's req/CPU-s of the step in stepFile over the
// sampler's records in samples, as aggregate efficiency prints it.
func efficiency(ctx context.Context, t *testing.T, stepFile, samples string) model.EfficiencyRow {
	t.Helper()
	in, err := model.Load(ctx, []string{stepFile, samples}, nil, func(msg string) { t.Log(msg) })
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Steps) != 1 || len(in.Samples) == 0 {
		t.Fatalf("want one step in %s and sampler records in %s, got %d steps, %d files of records", stepFile, samples, len(in.Steps), len(in.Samples))
	}
	var all []schema.Sample
	for _, f := range in.Samples {
		all = append(all, f.Samples...)
	}
	return model.EfficiencyRowOf(in.Steps[0], all)
}

// groupTicks is the CPU time the live (not zombie) members of process
// group pgid have spent, utime + stime in clock ticks (fields 14 and 15 of
// /proc/PID/stat). Read here rather than through internal/sample, whose
// figures it checks.
func groupTicks(t *testing.T, pgid int) uint64 {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var ticks uint64
	members := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := procStat(pid) // f[0] is field 3
		if err != nil || len(f) < 13 || f[0] == "Z" || f[2] != strconv.Itoa(pgid) {
			continue // gone meanwhile, or not a live member
		}
		members++
		for _, field := range f[11:13] {
			n, err := strconv.ParseUint(field, 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/stat: %v", pid, err)
			}
			ticks += n
		}
	}
	if members == 0 {
		t.Fatalf("process group %d has no live member", pgid)
	}
	return ticks
}
