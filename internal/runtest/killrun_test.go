package runtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/run"
	"github.com/idpbench/idpbench/internal/runstate"
)

// TestKillRun proves that a run killed with kill -9 leaves nothing behind
// once it is run again (scripts/run-comparison.sh's state directory and its
// cleaning, internal/runstate):
//
//  1. a real run (--quick --only refop, IDPBENCH_SCENARIOS=discovery,
//     IDPBENCH_LADDER="2 8", IDPBENCH_GCJITTER_S=5, IDPBENCH_REUSE_POOL=16)
//     in its own process group (setsid), until a ladder step is in
//     progress: the reference OP and PostgreSQL up, loadstep's temp file in
//     the run directory
//  2. the same command again while the first runs must refuse (exit 1,
//     "held by a live session") and leave the first running
//  3. kill -9 of the first run's whole process group; the reference OP and
//     PostgreSQL (process groups of their own) must still run, and the temp
//     file must still be there, or there is nothing to test
//  4. the server's recorded pid is deleted from the run's state, as when a
//     session is killed while PostgreSQL starts: the rerun must find the
//     server by its directory; and a decoy: a live `sleep` recorded in the
//     run's state with a wrong start time
//  5. the same command again: exit 0 with a COMPARISON.md, the first run's
//     reference OP and PostgreSQL stopped (their recorded pids gone, their
//     ports free), no directory of the first run left (its state,
//     PostgreSQL's directory: the runs' IDPBENCH_TMP is empty), no
//     .NAME.tmp-* or NAME.tmp file in the run directory, each of those
//     named in a "cleaned:" line of the rerun's log, and the decoy left
//     alone (still running)
//
// Under a minute. Needs the reference OP (installed and cached by its
// adapter), PostgreSQL, jq, curl, python3, setsid, flock.
func TestKillRun(t *testing.T) {
	h := newHarness(t, "killrun", "jq", "curl", "python3", "setsid", "flock")
	kept, tmp, results := filepath.Join(h.work, "kept"), filepath.Join(h.work, "tmp"), filepath.Join(h.work, "results")
	for _, d := range []string{kept, tmp, results} {
		if err := os.Mkdir(d, 0o711); err != nil { // PostgreSQL's directory, under tmp, is reached by its own OS user
			t.Fatal(err)
		}
	}
	// What a failed check left, each only while its identity matches.
	t.Cleanup(func() {
		for _, f := range []string{"refop.pid", "postgres.pid"} {
			if err := runstate.StopLeftover(filepath.Join(kept, f), func(s string) { t.Log("cleanup: " + s) }); err != nil && !os.IsNotExist(err) {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	h.mustRun(nil, "", h.adapter("refop"), "install")
	env := h.with("IDPBENCH_TMP="+tmp, "IDPBENCH_RESULTS="+results, "IDPBENCH_SCENARIOS=discovery",
		"IDPBENCH_LADDER=2 8", "IDPBENCH_GCJITTER_S=5", "IDPBENCH_REUSE_POOL=16", "IDPBENCH_PG_DIR")
	args := []string{"--quick", "--repeats", "1", "--only", "refop", "--run-id", "killrun"}
	runDir := filepath.Join(results, "killrun")
	state := run.StateDir(tmp, "killrun", runDir)
	k := &killRun{h: h, env: env, args: args, runDir: runDir, state: state, kept: kept, tmp: tmp}

	t.Log("[step 1/5] a real run in its own process group, until a ladder step is in progress")
	k.firstInProgress()
	t.Log("[step 2/5] the same command while the first runs: refused")
	k.concurrentRefused()
	t.Logf("[step 3/5] kill -9 of the first run's process group (%d)", k.first.pid())
	stale := k.kill()
	t.Log("[step 4/5] PostgreSQL's recorded pid deleted; a decoy: a live sleep recorded with a wrong start time")
	if err := os.Remove(filepath.Join(state, "pids", "postgres.pid")); err != nil {
		t.Fatal(err)
	}
	decoy := k.decoy()
	t.Log("[step 5/5] the same command again")
	k.nothingLeft(k.rerun(), stale, decoy)
}

// killRun is the state of TestKillRun: the first run and what it left.
type killRun struct {
	h      *harness
	env    []string
	args   []string // run-comparison.sh's
	runDir string
	state  string // the run's state directory
	kept   string // copies of the first run's pidfiles
	tmp    string // the runs' IDPBENCH_TMP
	first  *bg

	refopPID, pgPID   int
	refopPort, pgPort int
	pgDir             string // PostgreSQL's directory, the first the run recorded
}

// firstInProgress starts the first run and waits until a ladder step is in
// progress; it records what the kill will leave.
func (k *killRun) firstInProgress() {
	t := k.h.t
	firstLog := filepath.Join(k.h.work, "first.log")
	k.first = k.h.start(k.env, firstLog, k.h.script("run-comparison.sh"), k.args...)
	if pgid, err := syscall.Getpgid(k.first.pid()); err != nil || pgid != k.first.pid() {
		t.Fatalf("the first run does not lead its own process group (%d, %v)", pgid, err)
	}
	refopPidfile, pgPidfile := filepath.Join(k.state, "refop", "pids", "refop.pid"), filepath.Join(k.state, "pids", "postgres.pid")
	inProgress := filepath.Join(k.runDir, "refop", ".discovery-c*.json.tmp-*")
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		steps, _ := filepath.Glob(inProgress)
		if pidfilePID(refopPidfile) > 0 && pidfilePID(pgPidfile) > 0 && len(steps) > 0 {
			break
		}
		if !k.first.running() {
			t.Fatalf("the first run ended before a ladder step was in progress; its log: %s", tail(readFile(t, firstLog), 20))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ladder step in progress after 120 s; the first run's log: %s", tail(readFile(t, firstLog), 20))
		}
	}
	k.refopPID, k.pgPID = k.keep(refopPidfile), k.keep(pgPidfile)
	k.pgDir = lines(readFile(t, filepath.Join(k.state, "tmpdirs")))[0]
	k.refopPort = k.port(filepath.Join(k.state, "refop", "state.env"), "REFOP_PORT")
	k.pgPort = k.port(filepath.Join(k.pgDir, "pg.env"), "PG_PORT")
	t.Logf("in progress: reference OP pid %d port %d, PostgreSQL pid %d port %d", k.refopPID, k.refopPort, k.pgPID, k.pgPort)
}

// keep copies a pidfile of the first run into kept and returns its pid.
func (k *killRun) keep(pidfile string) int {
	b := readFile(k.h.t, pidfile)
	if err := os.WriteFile(filepath.Join(k.kept, filepath.Base(pidfile)), []byte(b), 0o644); err != nil {
		k.h.t.Fatal(err)
	}
	return pidfilePID(pidfile)
}

// port is KEY of a KEY=value file the scripts write (state.env, pg.env).
func (k *killRun) port(file, key string) int {
	v := strings.TrimSpace(k.h.bash(nil, `source "$1" && printf '%s\n' "${!2}"`, file, key))
	p, err := strconv.Atoi(v)
	if err != nil {
		k.h.t.Fatalf("%s in %s: %q is not a port", key, file, v)
	}
	return p
}

// concurrentRefused: a second session of the run refuses while the first
// runs, and leaves it alone.
func (k *killRun) concurrentRefused() {
	t := k.h.t
	code, out := k.h.run(k.env, filepath.Join(k.h.work, "concurrent.log"), k.h.script("run-comparison.sh"), k.args...)
	want := fmt.Sprintf("held by a live session (pid %d)", k.first.pid())
	if code != 1 || !strings.Contains(out, want) {
		t.Fatalf("a second session of the run: want exit 1 naming the live one (pid %d), got exit %d: %s", k.first.pid(), code, out)
	}
	if !k.first.running() || !pidfileCurrent(filepath.Join(k.kept, "refop.pid")) || !pidfileCurrent(filepath.Join(k.kept, "postgres.pid")) {
		t.Fatal("the refused session disturbed the first run")
	}
	t.Logf("ok: refused: %s", want)
}

// kill kills the first run's process group and returns the temp files of
// its unfinished writes.
func (k *killRun) kill() []string {
	t := k.h.t
	if err := syscall.Kill(-k.first.pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	k.first.wait()
	if !pidfileCurrent(filepath.Join(k.kept, "refop.pid")) || !pidfileCurrent(filepath.Join(k.kept, "postgres.pid")) {
		t.Fatal("the reference OP and PostgreSQL did not outlive the kill: nothing to clean, nothing tested")
	}
	stale := tempFiles(t, k.runDir, ".*.tmp-*")
	if len(stale) == 0 {
		t.Fatal("no temp file of the killed step left: nothing to clean, nothing tested")
	}
	t.Logf("left by the kill: reference OP pid %d, PostgreSQL pid %d, %s in %s", k.refopPID, k.pgPID, strings.Join(stale, " "), k.state)
	return stale
}

// decoy starts a sleep, records it in the run's state with a wrong start
// time and in kept with its own, and returns its pid.
func (k *killRun) decoy() int {
	t := k.h.t
	d := k.h.start(nil, filepath.Join(k.h.work, "decoy.log"), "sleep", "600")
	id, ok := identity(d.pid())
	if !ok {
		t.Fatal("the decoy is not running")
	}
	var start uint64
	var boot string
	if _, err := fmt.Sscan(id, &start, &boot); err != nil {
		t.Fatal(err)
	}
	wrong := fmt.Sprintf("%d\n%d %s\n", d.pid(), start+1, boot)
	right := fmt.Sprintf("%d\n%s\n", d.pid(), id)
	if err := os.WriteFile(filepath.Join(k.state, "pids", "decoy.pid"), []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.kept, "decoy.pid"), []byte(right), 0o644); err != nil {
		t.Fatal(err)
	}
	return d.pid()
}

// nothingLeft: the rerun left nothing of the killed run (processes, ports,
// directories, temp files), said so of each, left the decoy alone and
// completed the run.
func (k *killRun) nothingLeft(rerun rerunLog, stale []string, decoy int) {
	t, kept, state, runDir, tmp := k.h.t, k.kept, k.state, k.runDir, k.tmp
	for _, f := range []string{"refop", "postgres"} {
		if p := filepath.Join(kept, f+".pid"); pidfileCurrent(p) {
			t.Errorf("%s (pid %d) of the killed run still runs", f, pidfilePID(p))
		}
	}
	rerun.said(fmt.Sprintf("stopped process group %d, refop", k.refopPID))
	rerun.said(fmt.Sprintf("found PostgreSQL (pid %d) by its directory %s", k.pgPID, k.pgDir))
	rerun.said(fmt.Sprintf("stopped process group %d, postgres", k.pgPID))
	for _, p := range []int{k.refopPort, k.pgPort} {
		if !portFree(p) {
			t.Errorf("port %d of the killed run is still in use", p)
		}
	}
	if _, err := os.Stat(k.pgDir); !os.IsNotExist(err) {
		t.Errorf("PostgreSQL's directory of the killed run is left: %s", k.pgDir)
	}
	rerun.said("removed " + k.pgDir)
	rerun.said("removed the earlier session's files in " + state)
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temp directories left after the rerun: %v", left)
	}
	if left := tempFiles(t, runDir, ".*.tmp-*", "*.tmp"); len(left) > 0 {
		t.Errorf("temp files left in the run directory: %s", strings.Join(left, " "))
	}
	for _, f := range stale {
		rerun.said("removed the unfinished write " + f)
	}
	if !pidfileCurrent(filepath.Join(kept, "decoy.pid")) {
		t.Errorf("the decoy (pid %d, wrong start time recorded) was stopped", decoy)
	}
	rerun.said(fmt.Sprintf("left pid %d alone", decoy))
	if fi, err := os.Stat(filepath.Join(runDir, "COMPARISON.md")); err != nil || fi.Size() == 0 {
		t.Errorf("the rerun wrote no COMPARISON.md (%v)", err)
	}
	for _, c := range []int{2, 8} {
		if s := readStep(t, filepath.Join(runDir, "refop", fmt.Sprintf("discovery-c%d.json", c))); s.Status != "complete" {
			t.Errorf("discovery c=%d is %q after the rerun, want complete", c, s.Status)
		}
	}
	if m := readMeta(t, filepath.Join(runDir, "refop", "meta.json")); m.Status != "ok" {
		t.Errorf("refop's meta after the rerun: status %q (%s), want ok", m.Status, m.NAReason)
	}
	if !t.Failed() {
		t.Logf("ok: %d things cleaned, the decoy left alone, COMPARISON.md written", rerun.cleaned())
	}
}

// rerunLog is the log of the rerun.
type rerunLog struct {
	t    *testing.T
	text string
}

// rerun runs the same command again; it must succeed.
func (k *killRun) rerun() rerunLog {
	t := k.h.t
	path := filepath.Join(k.h.work, "second.log")
	code, out := k.h.run(k.env, path, k.h.script("run-comparison.sh"), k.args...)
	if code != 0 {
		t.Fatalf("the rerun failed (exit %d): %s", code, tail(out, 20))
	}
	return rerunLog{t, out}
}

// said fails the test unless the rerun's log has a "cleaned: WHAT" line.
func (r rerunLog) said(what string) {
	r.t.Helper()
	if !strings.Contains(r.text, "cleaned: "+what) {
		r.t.Errorf("the rerun does not say it %s", what)
	}
}

// cleaned counts the rerun's "cleaned: " lines.
func (r rerunLog) cleaned() int { return strings.Count(r.text, "cleaned: ") }

// tempFiles are the files under dir whose names match one of the patterns
// (find -name's).
func tempFiles(t *testing.T, dir string, patterns ...string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, d.Name()); ok {
				out = append(out, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
