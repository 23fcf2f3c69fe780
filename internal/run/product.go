package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/adapter"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/gcjitter"
	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/internal/product"
)

// runProduct is round 1 of one product: it opens it (install, cold
// starts A and B, setup) and searches its levels (every scenario's ladder,
// round 1); last closes it too (closeProduct), else it stays up for the
// interleaved rounds. errProductFailed when it failed (the meta says why),
// errInterrupted when interrupted.
func (r *runner) runProduct(ctx context.Context, p string, scenarios []string, last bool) error {
	state := filepath.Join(r.work, p)
	if len(scenarios) > 0 {
		r.rounds[p] = 1 // a closing round without ladders measured nothing
	}
	if err := r.openProduct(ctx, p); err != nil || r.out[p] {
		return err // N/A here, or failed: nothing more to run
	}
	start := r.start[p]
	r.startSampler(p, state)
	for _, s := range scenarios {
		r.phase("ladder", p, p+" ladder "+s)
		t0 := r.env.Now()
		code, windows := r.ladder(ctx, p, s, state, 1, false)
		r.step += windows
		r.ladderS[p] += r.env.Now().Sub(t0).Seconds()
		r.ladderN[p] += windows
		if a := ladderAction(code); a != actNext {
			return r.afterLadder(ctx, p, state, start, a, code, s+" ladder")
		}
	}
	if !last {
		r.stopSampler(p)
		return nil
	}
	return r.closeProduct(ctx, p)
}

// closeProduct closes product p: its windows at shares of capacity, its
// GC-jitter run, meta and down; errProductFailed when it failed (the meta
// says why), errInterrupted when interrupted.
func (r *runner) closeProduct(ctx context.Context, p string) error {
	state, start := filepath.Join(r.work, p), r.start[p]
	if r.samplers[p] == nil {
		r.startSampler(p, state)
	}
	if a, code, what := r.shares(ctx, p, state); a != actNext {
		return r.afterLadder(ctx, p, state, start, a, code, what)
	}
	r.phase("gcjitter", p, p+" gcjitter")
	code := r.gcjitter(ctx, p, state)
	r.step++
	switch gcjitterAction(code) {
	case actInterrupted:
		return errInterrupted
	case actFailed:
		return r.productFailed(ctx, p, state, start, fmt.Sprintf("failed in the GC-jitter run (exit %d)", code))
	}
	r.stopSampler(p)
	r.phase("teardown", p, p+" meta + down")
	if err := r.productMeta(ctx, p, state, start, "ok", ""); err != nil {
		return err
	}
	return r.productDown(ctx, p, state)
}

// afterLadder ends product p's round after a ladder (or its windows at
// shares of capacity: what) that did not end well: failed with STATE/lost's
// reason when it stopped answering, else naming the exit code;
// errInterrupted when interrupted.
func (r *runner) afterLadder(ctx context.Context, p, state, start string, a action, code int, what string) error {
	switch a {
	case actLost:
		why := fmt.Sprintf("stopped answering in the %s", what)
		if b, err := os.ReadFile(filepath.Join(state, "lost")); err == nil && len(strings.TrimRight(string(b), "\n")) > 0 {
			why = strings.TrimRight(string(b), "\n")
		}
		return r.productFailed(ctx, p, state, start, why)
	case actInterrupted:
		return errInterrupted
	}
	return r.productFailed(ctx, p, state, start, fmt.Sprintf("failed in the %s (exit %d)", what, code))
}

// ladder runs one scenario's ladder in-process: round 1 (the level
// search), or in an interleaved round the window of the scenario's best
// level (its A/A twin's with twin). It returns the ladder's exit code and
// how many windows it went through. The entry's answers for the
// scenario are asked once a session.
func (r *runner) ladder(ctx context.Context, p, s, state string, round int, twin bool) (code, windows int) {
	o := ladder.Options{Product: p, Scenario: s, Quick: r.Quick, Round: strconv.Itoa(round), Repeats: strconv.Itoa(r.MaxRounds()), Where: r.where(state)}
	c, err := ladder.NewConfig(o, r.env.Getenv)
	if err == nil {
		key := p + "/" + s
		if r.answers[key] == nil {
			r.answers[key] = &ladder.Answers{}
		}
		c.Answers, c.BestOnly, c.Twin = r.answers[key], round > 1, twin
		windows, err = ladder.Run(ctx, c, r.ladderEnv(p))
	}
	return exitOf(err, "ladder", r), windows
}

// ladderEnv is the ladder's and the GC-jitter run's surroundings: the run's
// output and p's answers from its registry entry (none without one: the
// ladder then fails saying so).
func (r *runner) ladderEnv(p string) ladder.Env {
	e := ladder.Env{Stdout: r.env.Stdout, Stderr: r.env.Stderr}
	if entry, ok := r.lookup(p); ok {
		e.Ask = entry.Answer
	}
	return e
}

// where is what the ladder and the GC-jitter run are told of the run: its
// results, the product's state, the step counter, the tools.
func (r *runner) where(state string) ladder.Where {
	return ladder.Where{RunDir: r.runDir, StateDir: state, StepOffset: r.step, StepTotal: r.stepTotal, Bin: r.bin}
}

// gcjitter runs the GC-jitter run in-process; it returns its exit code.
func (r *runner) gcjitter(ctx context.Context, p, state string) int {
	o := gcjitter.Options{Product: p, Quick: r.Quick, Where: r.where(state)}
	c, err := gcjitter.NewConfig(o, r.env.Getenv)
	if err == nil {
		err = gcjitter.Run(ctx, c, r.ladderEnv(p))
	}
	return exitOf(err, "gcjitter", r)
}

// exitOf is the exit code the tool would have exited with for err, which
// it prints as the tool would.
func exitOf(err error, tool string, r *runner) int {
	var e ladder.Exit
	if errors.As(err, &e) {
		return int(e)
	}
	return cli.Fail(r.env.Stderr, tool, err)
}

// openProduct installs, starts (cold start A), restarts (cold start B)
// and sets up p; one that cannot be installed gets its N/A meta and is out:
// by design where its registry entry declares the reason (NAByDesign),
// else a failure of the run (fail).
func (r *runner) openProduct(ctx context.Context, p string) error {
	a, state := r.adapter(p), filepath.Join(r.work, p)
	noStart := "no reason given (see the run's log)"
	if err := os.MkdirAll(filepath.Join(r.runDir, p), 0o755); err != nil {
		return err
	}
	start := r.env.Now().UTC().Format("2006-01-02T15:04:05Z")
	r.start[p] = start
	if fi, err := os.Stat(a); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		why := "no adapter products/" + p + "/adapter in this tree"
		r.log.Printf("%s: %s: N/A", p, why)
		r.out[p] = true
		r.fail(p, why)
		return r.naMeta(ctx, p, "", why)
	}
	version, err := adapter.Adapter{Path: a, Stderr: r.env.Stderr}.Version(ctx)
	if ctx.Err() != nil {
		return errInterrupted
	}
	if err != nil {
		return err
	}
	r.phase("install", p, p+" install")
	if ok, err := r.withReason(ctx, p, "install"); err != nil {
		return err
	} else if !ok {
		reason := r.failureReason(p, "install failed on this machine (see the log of the run)")
		r.out[p] = true
		if err := r.naMeta(ctx, p, version, reason); err != nil {
			return err
		}
		if e, ok := r.lookup(p); ok && e.NAByDesign.Declares(reason) {
			// Not a failure of the run: the entry says it cannot run here.
			r.log.Printf("%s cannot run on this machine, as its registry entry declares: N/A in the report", p)
			return nil
		}
		r.log.Printf("%s: install failed: %s", p, reason)
		r.fail(p, "install failed: "+reason)
		return nil
	}
	if err := os.MkdirAll(state, 0o755); err != nil {
		return err
	}
	r.ups = append(r.ups, up{p, state})
	steps := []struct {
		verb, mode, phase, kind, fails, def string
	}{
		{"up", "A", p + " up (cold start A: fresh database)", "coldstart", "up failed: ", noStart},
		{"restart", "B", p + " restart (cold start B: initialised database)", "coldstart", "restart failed: ", noStart},
		{"setup", "", p + " setup", "setup", "setup failed: ", "provisioning through the admin API failed"},
	}
	for _, s := range steps {
		if s.mode == "B" && recordComplete(filepath.Join(r.runDir, p, "coldstart-B.json")) {
			r.log.Printf("%s: coldstart-B.json is complete: restart skipped", p)
			continue
		}
		r.phase(s.kind, p, s.phase)
		ok, err := r.withReason(ctx, p, s.verb, state)
		if err != nil {
			return err
		}
		if s.mode != "" {
			if err := r.keepColdstart(p, state, s.mode); err != nil {
				return err
			}
		}
		if !ok {
			return r.productFailed(ctx, p, state, start, s.fails+r.failureReason(p, s.def))
		}
	}
	return nil
}

// keepColdstart copies this session's coldstart record of mode into the
// run, unless the run already holds a complete one.
func (r *runner) keepColdstart(p, state, mode string) error {
	name := "coldstart-" + mode + ".json"
	src, dst := filepath.Join(state, name), filepath.Join(r.runDir, p, name)
	b, err := os.ReadFile(src)
	if err != nil || len(b) == 0 {
		return nil
	}
	if recordComplete(dst) {
		r.log.Printf("%s: kept the complete %s of an earlier session", p, name)
		return nil
	}
	if err := os.WriteFile(dst+".tmp", b, 0o644); err != nil {
		return err
	}
	return os.Rename(dst+".tmp", dst)
}

// withReason runs the adapter's verb with IDPBENCH_REASON_FILE naming a
// fresh WORK/PRODUCT.reason: the first failure of the adapter or a tool it
// runs leaves its reason there. false: it failed; errInterrupted when the
// run was interrupted.
func (r *runner) withReason(ctx context.Context, p string, args ...string) (bool, error) {
	f := filepath.Join(r.work, p+".reason")
	os.Remove(f)
	code, err := r.child(ctx, nil, []string{cli.ReasonFileEnv + "=" + f}, r.adapter(p), args...)
	if ctx.Err() != nil {
		return false, errInterrupted
	}
	return err == nil && code == 0, err
}

// failureReason is the reason withReason's command left, else def.
func (r *runner) failureReason(p, def string) string {
	b, _ := os.ReadFile(filepath.Join(r.work, p+".reason"))
	line, _, _ := strings.Cut(string(b), "\n")
	return cmpOr(line, def)
}

// productFailed writes p's meta with status na, then downs it; it returns
// errProductFailed.
func (r *runner) productFailed(ctx context.Context, p, state, start, reason string) error {
	r.log.Printf("%s: %s", p, reason)
	r.fail(p, reason)
	r.phase("teardown", p, p+" meta + down after a failure")
	if err := r.productMeta(ctx, p, state, start, "na", reason); err != nil {
		r.log.Printf("warning: %s: %v", p, err)
	}
	r.out[p] = true
	r.productDown(ctx, p, state)
	return errProductFailed
}

// productDown stops p and asserts nothing is left; what down could not
// stop stays recorded in its state, for a rerun to clean.
func (r *runner) productDown(ctx context.Context, p, state string) error {
	r.stopSampler(p)
	code, err := r.child(context.WithoutCancel(ctx), nil, nil, r.adapter(p), "down", state)
	r.ups = slices.DeleteFunc(r.ups, func(u up) bool { return u.product == p })
	if err != nil || code != 0 {
		r.log.Printf("%s: down left something behind (kept in %s for a rerun to clean)", p, state)
		r.fail(p, "down left something behind (kept in "+state+" for a rerun to clean)")
		return errProductFailed
	}
	return os.RemoveAll(state)
}

// afterFailure: when runProduct ended before writing p's meta or stopping
// it, both are done here. p is out of the later rounds.
func (r *runner) afterFailure(ctx context.Context, p string, code int) {
	r.out[p] = true
	reason := fmt.Sprintf("the run of %s stopped unexpectedly (exit %d)", p, code)
	meta := filepath.Join(r.runDir, p, "meta.json")
	i := slices.IndexFunc(r.ups, func(u up) bool { return u.product == p })
	if i >= 0 {
		state := r.ups[i].state
		r.fail(p, reason)
		r.phase("teardown", p, p+" meta + down after it stopped unexpectedly")
		if metaStatus(meta) != "na" {
			if err := r.productMeta(ctx, p, state, "", "na", reason); err != nil {
				r.log.Printf("warning: %s: %v", p, err)
			}
		}
		r.productDown(ctx, p, state)
		return
	}
	if fi, err := os.Stat(meta); err != nil || fi.Size() == 0 {
		if err := r.naMeta(ctx, p, "", reason); err != nil {
			r.log.Printf("warning: %s: %v", p, err)
		}
	}
}

// naMeta writes the meta of a product that did not run (provision meta
// writes it atomically).
func (r *runner) naMeta(ctx context.Context, p, version, reason string) error {
	return r.tool(context.WithoutCancel(ctx), "provision", "meta", "--product", p, "--product-version", version, "--status", "na",
		"--na-reason", reason, "-o", filepath.Join(r.runDir, p, "meta.json"))
}

// productMeta writes RUN_DIR/PRODUCT/meta.json: the product's meta from
// its entry and state (else a bare one) completed with the run's part
// (provision meta, twice).
func (r *runner) productMeta(ctx context.Context, p, state, start, status, reason string) error {
	ctx = context.WithoutCancel(ctx)
	file := filepath.Join(r.work, p+"-meta.json")
	var v strings.Builder
	r.child(ctx, &v, nil, r.adapter(p), "version")
	version := strings.TrimRight(v.String(), "\n")
	base := []string{"--product", p, "--product-version", version}
	if err := r.stateMeta(ctx, p, version, state, file); err != nil {
		r.log.Printf("warning: %s: its meta from its entry and state: %v (a bare one instead)", p, err)
	} else {
		base = []string{"--base", file}
	}
	return r.tool(ctx, "provision", MetaArgs(base, status, r.Profile, r.Scenarios, start, reason,
		placement.MetaArgs(r.place.Meta()), r.rounds[p], r.Order, filepath.Join(r.runDir, p, "meta.json"))...)
}

// stateMeta writes into file the meta provision meta builds from p's
// entry and its state (endpoints, database, pools, facts, compose mode)
// with the entry's arguments (product.Product.MetaArgs); compose mode's
// database is asked with the run's pgpass.
func (r *runner) stateMeta(ctx context.Context, p, version, state, file string) error {
	entry, ok := r.lookup(p)
	if !ok {
		return fmt.Errorf("no registry entry")
	}
	name, args, err := entry.MetaArgs(state)
	if err != nil {
		return err
	}
	var env []string
	if st, err := product.ReadState(state, p); err == nil && st.Compose() {
		env = []string{"PGPASSFILE=" + filepath.Join(state, "secrets", "pgpass")}
	}
	argv := slices.Concat([]string{"meta", "--product", name, "--product-version", version, "--state", state}, args, []string{"-o", file})
	code, err := r.child(ctx, nil, env, filepath.Join(r.bin, "provision"), argv...)
	if err == nil && code != 0 {
		err = fmt.Errorf("provision meta failed (exit %d)", code)
	}
	return err
}

// MetaArgs are provision's arguments for a product's meta.json: base (--base
// FILE, or --product and --product-version), the status, profile and
// scenarios, the start and N/A reason when given, the placement's flags,
// the rounds (and their order when more than one), -o out.
func MetaArgs(base []string, status, profile string, scenarios []string, start, reason string, place []string, rounds int, order Order, out string) []string {
	a := slices.Concat([]string{"meta"}, base, []string{"--status", status, "--profile", profile, "--scenarios", strings.Join(scenarios, " ")})
	if start != "" {
		a = append(a, "--start", start)
	}
	if reason != "" {
		a = append(a, "--na-reason", reason)
	}
	a = append(append(a, place...), "--rounds", strconv.Itoa(rounds))
	switch {
	case rounds != 1 && order.Random:
		a = append(a, "--round-order", "interleaved-random", "--round-seed", strconv.FormatUint(order.Seed, 10))
	case rounds != 1:
		a = append(a, "--round-order", "interleaved")
	}
	return append(a, "-o", out)
}

// metaStatus is the status a meta.json records ("" when none).
func metaStatus(path string) string {
	var m struct{ Status string }
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.Status
}

// recordComplete reports whether path is a complete record (a step's, a
// cold start's): a rerun keeps it.
func recordComplete(path string) bool {
	return metaStatus(path) == "complete"
}
