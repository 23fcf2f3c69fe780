package run

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/internal/runstate"
)

var lookPath = lookPathReal

var lookPathReal = exec.LookPath

// adapter is the path of p's adapter.
func (r *runner) adapter(p string) string { return filepath.Join(r.root, "products", p, "adapter") }

// child runs argv[0] with args (interrupted by SIGINT when ctx ends:
// cli.Command), its stdout to stdout (nil: the run's), its stderr the
// run's, with this process's environment plus env; it returns the exit
// code (130 when a signal ended it), an error only when it could not run.
func (r *runner) child(ctx context.Context, stdout io.Writer, env []string, name string, args ...string) (int, error) {
	cmd := cli.Command(ctx, nil, append([]string{name}, args...)...)
	cmd.Stdout, cmd.Stderr = cmpOrW(stdout, r.env.Stdout), r.env.Stderr
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return cli.RunCode(cmd)
}

// tool runs the built tool name with args; an error unless it exits 0.
func (r *runner) tool(ctx context.Context, name string, args ...string) error {
	code, err := r.child(ctx, nil, nil, filepath.Join(r.bin, name), args...)
	if err == nil && code != 0 {
		err = fmt.Errorf("%s %s failed (exit %d)", name, args[0], code)
	}
	return err
}

func cmpOrW(w, def io.Writer) io.Writer {
	if w != nil {
		return w
	}
	return def
}

// postgres runs scripts/postgres.sh (up, down DIR), the shared cluster's
// lifecycle as a product's adapter has its own, with env added.
func (r *runner) postgres(ctx context.Context, stdout io.Writer, env []string, args ...string) (int, error) {
	return r.child(ctx, stdout, env, filepath.Join(r.root, "scripts", "postgres.sh"), args...)
}

// pgUp starts the run's shared PostgreSQL in a directory outside the run
// state (0700, this user's: the server runs as its own OS user), made under
// tmp, and records its directory (for cleanup, also when the start
// failed) and pid.
func (r *runner) pgUp(ctx context.Context, tmp string) error {
	var out strings.Builder
	code, err := r.postgres(ctx, &out, []string{"IDPBENCH_TMP=" + tmp}, "up")
	dir, _, _ := strings.Cut(out.String(), "\n")
	if dir = strings.TrimSpace(dir); dir == "" {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return cmpErr(err, fmt.Errorf("making PostgreSQL's directory failed (exit %d)", code))
	}
	f, ferr := os.OpenFile(filepath.Join(r.work, "tmpdirs"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if ferr != nil {
		return ferr
	}
	_, ferr = fmt.Fprintln(f, dir)
	if cerr := f.Close(); ferr == nil {
		ferr = cerr
	}
	if ferr != nil {
		return ferr
	}
	r.pgDir = dir
	if err != nil || code != 0 {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return cmpErr(err, fmt.Errorf("PostgreSQL did not start (exit %d)", code))
	}
	r.env.Setenv("IDPBENCH_PG_DIR", dir)
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return fmt.Errorf("%s: no pid on its first line", filepath.Join(dir, "data", "postmaster.pid"))
	}
	return runstate.WritePidfile(filepath.Join(r.work, "pids", "postgres.pid"), pid)
}

// pgDown stops the run's shared PostgreSQL (scripts/postgres.sh down).
func (r *runner) pgDown(ctx context.Context) error {
	if r.pgDir == "" {
		return nil
	}
	code, err := r.postgres(ctx, nil, nil, "down", r.pgDir)
	if err == nil && code == 0 {
		r.pgDir = ""
		r.env.Unsetenv("IDPBENCH_PG_DIR")
		return nil
	}
	return cmpErr(err, fmt.Errorf("PostgreSQL down failed (exit %d)", code))
}

// sampler is the running sampler.
type sampler struct {
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	pidfile string
	log     string
}

// startSampler samples the product and its database, and the host's
// CPU, until stopSampler (docs/design-reference.md#the-scripts, sampler). Never
// fatal. The host probe is the host sampler's alone (startHostSampler).
func (r *runner) startSampler(p, state string) {
	if !r.samplerBuilt() {
		return
	}
	entry, ok := r.lookup(p)
	if !ok {
		r.log.Printf("warning: %s has no registry entry: no memory/CPU samples", p)
		return
	}
	args, warning, err := entry.SampleArgs(state)
	if err != nil || len(args) == 0 {
		r.log.Printf("warning: %s: the sampler's arguments: %v: no memory/CPU samples", p, err)
		return
	}
	if warning != "" {
		r.log.Printf("warning: %s: %s", p, warning)
	}
	args = append(args, "--host-probe=false", "--every", "1s", "--pss-every", "2s", "-o",
		filepath.Join(r.runDir, p, "samples-"+r.env.Now().UTC().Format("20060102T150405Z")+".jsonl"))
	var env []string
	if fi, err := os.Stat(filepath.Join(state, "secrets", "pgpass")); err == nil && fi.Size() > 0 {
		env = append(os.Environ(), "PGPASSFILE="+filepath.Join(state, "secrets", "pgpass"))
	}
	r.spawnSampler(p, p+"'s sampler", args, env)
}

// hostSampler is the key of the host sampler in runner.samplers: no
// product is named so (a product name is a folder under products/).
const hostSampler = "host"

// startHostSampler samples the host alone, with its probe (how fast the
// cores ran), from the start of the run to its end, into
// RUN_DIR/host-samples-<time>.jsonl: one probe for the machine, however
// many products are up. Every product's sampler probing the host put
// five probes (about 6 ms of a core and 8 MiB read at random each, all
// within a fifth of a second) into every second of the interleaved
// rounds, and the measured product's latency with them
// (results/sampler-probe). Never fatal.
func (r *runner) startHostSampler() {
	if !r.samplerBuilt() {
		return
	}
	args := []string{"--host", "--host-probe", "--postgres", "", "--every", "1s", "-o",
		filepath.Join(r.runDir, "host-samples-"+r.env.Now().UTC().Format("20060102T150405Z")+".jsonl")}
	r.spawnSampler(hostSampler, "the host sampler", args, nil)
}

// samplerBuilt says whether the sampler is built, and warns when not.
func (r *runner) samplerBuilt() bool {
	fi, err := os.Stat(filepath.Join(r.bin, "sampler"))
	if err != nil || fi.Mode()&0o111 == 0 {
		r.log.Printf("warning: sampler is not built: no memory/CPU samples")
		return false
	}
	return true
}

// spawnSampler starts the sampler with args (env nil: the run's), as
// runner.samplers[key], its pid in pids/sampler-KEY.pid, its log in
// sampler-KEY.log. what names it in the log.
func (r *runner) spawnSampler(key, what string, args, env []string) {
	// The sampler measures: it runs with the load generator, on the driver
	// CPUs (taskset execs it, so the recorded pid is the sampler's).
	argv := placement.Pinned(r.place.Driver.String(), append([]string{filepath.Join(r.bin, "sampler")}, args...)...)
	s := &sampler{pidfile: filepath.Join(r.work, "pids", "sampler-"+key+".pid"), log: filepath.Join(r.work, "sampler-"+key+".log"), done: make(chan struct{})}
	logf, err := os.OpenFile(s.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		r.log.Printf("warning: %s: %v: no samples", what, err)
		return
	}
	defer logf.Close()
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Stdout, s.cmd.Stderr, s.cmd.Env = logf, logf, env
	if err := s.cmd.Start(); err != nil {
		r.log.Printf("warning: %s did not start: %v: no samples", what, err)
		return
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	if err := runstate.WritePidfile(s.pidfile, s.cmd.Process.Pid); err != nil {
		r.log.Printf("warning: %v", err)
	}
	r.log.Printf("started %s (pid %d, log %s)", what, s.cmd.Process.Pid, s.log)
	r.samplers[key] = s
}

// stopSamplers stops every sampler, the host's too.
func (r *runner) stopSamplers() {
	for _, p := range slices.Sorted(maps.Keys(r.samplers)) {
		r.stopSampler(p)
	}
}

// stopProductSamplers stops every product's sampler, not the host's.
func (r *runner) stopProductSamplers() {
	for _, p := range slices.Sorted(maps.Keys(r.samplers)) {
		if p != hostSampler {
			r.stopSampler(p)
		}
	}
}

// stopSampler stops product p's sampler with SIGINT (its normal stop) and
// waits for it: 30 s, then TERM, then KILL.
func (r *runner) stopSampler(p string) {
	s := r.samplers[p]
	if s == nil {
		return
	}
	delete(r.samplers, p)
	s.cmd.Process.Signal(syscall.SIGINT)
	clean := waitDone(s.done, 30*time.Second)
	if !clean {
		s.cmd.Process.Signal(syscall.SIGTERM)
		if !waitDone(s.done, 5*time.Second) {
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	if !clean || s.err != nil {
		r.log.Printf("warning: sampler did not stop cleanly (log: %s)", s.log)
	}
	os.Remove(s.pidfile)
}

// waitDone reports whether done closes within d.
func waitDone(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
