package coldstart

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/httpprobe"
	"github.com/idpbench/idpbench/internal/sample"
	"github.com/idpbench/idpbench/internal/schema"
)

// Statuses of a coldstart record.
const (
	StatusComplete    = "complete"
	StatusError       = "error"
	StatusInterrupted = "interrupted"
)

// Run starts cfg.Command, waits for it to become ready and writes the
// record. The record is written in every case once the inputs are valid:
// when the product exits early, times out or is interrupted it says why
// (status error or interrupted), the process group is stopped and Run
// returns an error (wrapping context.Canceled when interrupted).
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.StopGrace == 0 {
		cfg.StopGrace = 10 * time.Second
	}
	out, err := atomicfile.Create(cfg.Output, 0o644, stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	rec := newRecord(&cfg)
	runErr := run(ctx, &cfg, &rec, stderr)
	if err := writeRecord(out, &rec); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}

func newRecord(cfg *Config) schema.Coldstart {
	return schema.Coldstart{
		Schema: schema.ColdstartV1, ToolVersion: cli.Version(),
		Product: cfg.Product, ProductVersion: cfg.ProductVersion, Mode: cfg.Mode,
		ReadyURL: cfg.ReadyURL, ReadyStatus: cfg.ReadyStatus, Command: cfg.Command,
	}
}

func writeRecord(out *atomicfile.File, rec *schema.Coldstart) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		return err
	}
	return out.Commit()
}

// run starts the product and fills rec; the error is what went wrong.
func run(ctx context.Context, cfg *Config, rec *schema.Coldstart, stderr io.Writer) error {
	p, err := start(cfg)
	rec.Start = p.start.UTC()
	if err != nil {
		rec.Status, rec.Error = StatusError, err.Error()
		return err
	}
	if cfg.Pidfile != "" {
		if err := atomicfile.Write(cfg.Pidfile, 0o644, pidfileContent(cfg.ProcRoot, p.pid()), nil); err != nil {
			p.stop(cfg.StopGrace)
			rec.Status, rec.Error = StatusError, err.Error()
			return err
		}
	}
	res := p.waitReady(ctx, cfg)
	rec.PeakRSSBytes = res.peakRSS
	if len(cfg.Containers) > 0 {
		rec.PeakMeasuredAs, rec.PeakSources = schema.PeakCgroup, res.sources
	}
	if res.err != nil {
		return p.failed(cfg, rec, res.err, stderr)
	}
	rec.Status, rec.SecondsToReady = StatusComplete, res.seconds
	if cfg.Stop {
		return p.stopped(cfg, stderr)
	}
	fmt.Fprintf(stderr, "coldstart: %s ready in %.2f s (peak %s %.1f MiB); left running as pid %d (process group %d)\n",
		name(cfg), res.seconds, cmp.Or(rec.PeakMeasuredAs, "RSS"), float64(res.peakRSS)/(1<<20), p.pid(), p.pid())
	return nil
}

// failed stops the product after an error and records why.
func (p *product) failed(cfg *Config, rec *schema.Coldstart, err error, stderr io.Writer) error {
	p.stop(cfg.StopGrace)
	removePidfile(cfg.Pidfile)
	rec.Status, rec.Error = StatusError, err.Error()
	if errors.Is(err, context.Canceled) {
		rec.Status, rec.Error = StatusInterrupted, "interrupted before ready"
		return fmt.Errorf("%s interrupted before ready: %w", name(cfg), err)
	}
	if tail := logTail(cfg.Log, 10, 2048); tail != "" {
		rec.Error += "; last log lines:\n" + tail
		fmt.Fprintf(stderr, "coldstart: last lines of %s:\n%s\n", cfg.Log, tail)
	}
	return fmt.Errorf("%s: %w", name(cfg), err)
}

// stopped stops the product after it became ready (--stop).
func (p *product) stopped(cfg *Config, stderr io.Writer) error {
	err := p.stop(cfg.StopGrace)
	removePidfile(cfg.Pidfile)
	if err != nil {
		return fmt.Errorf("stopping %s: %w", name(cfg), err)
	}
	return nil
}

func name(cfg *Config) string {
	if cfg.Product != "" {
		return cfg.Product
	}
	return cfg.Command[0]
}

// pidfileContent is the pid on the first line (what every reader takes) and,
// on the second, the process's start time (clock ticks since boot, field 22
// of /proc/PID/stat) and the boot id: a rerun after a crash stops the
// recorded process only when both still match, never a later process given
// the same pid (internal/runstate, WritePidfile). The second line is
// empty when the process has already gone.
func pidfileContent(procRoot string, pid int) []byte {
	procs := sample.NewProcTable(procRoot)
	var id string
	if pr, ok := procs.Read(pid); ok {
		id = fmt.Sprintf("%d %s", pr.Start, procs.BootID())
	}
	return fmt.Appendf(nil, "%d\n%s\n", pid, id)
}

func removePidfile(path string) {
	if path != "" && path != "-" {
		os.Remove(path)
	}
}

// product is the started command.
type product struct {
	cmd      *exec.Cmd
	start    time.Time
	exited   chan error // receives cmd.Wait's result once
	done     bool       // exited has been received
	waitErr  error
	procRoot string
}

func (p *product) pid() int { return p.cmd.Process.Pid }

// start runs the command in its own process group with stdout and stderr
// going to the log file, so it survives coldstart's exit and a terminal's
// SIGINT reaches only coldstart. The clock starts just before exec.
func start(cfg *Config) (*product, error) {
	p := &product{exited: make(chan error, 1), start: time.Now(), procRoot: cfg.ProcRoot}
	log, err := openLog(cfg.Log)
	if err != nil {
		return p, err
	}
	defer log.Close() // the child holds its own descriptor
	p.cmd = exec.Command(cfg.Command[0], cfg.Command[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.start = time.Now()
	if err := p.cmd.Start(); err != nil {
		return p, fmt.Errorf("starting %s: %w", cfg.Command[0], err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	return p, nil
}

func openLog(path string) (*os.File, error) {
	if path == "" {
		path = os.DevNull
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--log: %w", err)
	}
	return f, nil
}

// exitedNow reports whether the product has exited, without blocking.
func (p *product) exitedNow() bool {
	if p.done {
		return true
	}
	select {
	case p.waitErr = <-p.exited:
		p.done = true
	default:
	}
	return p.done
}

// waitExit waits up to d for the product to exit.
func (p *product) waitExit(d time.Duration) bool {
	if p.done {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case p.waitErr = <-p.exited:
		p.done = true
	case <-t.C:
	}
	return p.done
}

// stop ends the whole process group: SIGTERM, then SIGKILL after grace.
func (p *product) stop(grace time.Duration) error {
	pgid := p.pid()
	syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	if p.waitExit(grace) && groupGone(p.procRoot, pgid, time.Until(deadline)) {
		return nil
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	if p.waitExit(5*time.Second) && groupGone(p.procRoot, pgid, 2*time.Second) {
		return nil
	}
	return fmt.Errorf("process group %d still has processes after SIGKILL", pgid)
}

// groupGone waits up to d for every process of the group to end. Zombies
// count as ended: orphans wait for init to reap them, which some inits do
// only every second or so.
func groupGone(procRoot string, pgid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	procs := sample.NewProcTable(procRoot)
	for {
		if groupRunning(procs, pgid) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupRunning counts the group's processes that are not zombies.
func groupRunning(procs *sample.ProcTable, pgid int) int {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return 0
	}
	if err := procs.Scan(); err != nil {
		return 1 // cannot tell: assume it runs
	}
	n := 0
	for i := range procs.Procs {
		if p := &procs.Procs[i]; p.PGRP == pgid && p.State != 'Z' && p.State != 'X' {
			n++
		}
	}
	return n
}

// logTail returns up to n last lines (at most limit bytes) of the log file.
func logTail(path string, n, limit int) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-int64(limit), 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if off > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line is cut
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// readyResult is how waiting for readiness ended.
type readyResult struct {
	seconds float64  // start to the first ready response
	peakRSS int64    // bytes: the process tree's RSS, or the containers' memory
	sources []string // the containers measured ("container:NAME"), with Containers
	err     error    // nil when ready
}

// waitReady polls the URL and samples the tree's RSS every cfg.Poll until
// the expected status, the product's exit, the timeout or ctx's end.
func (p *product) waitReady(ctx context.Context, cfg *Config) readyResult {
	var res readyResult
	probe := newProber(cfg)
	peak := newPeakWatcher(cfg, p.pid())
	deadline := p.start.Add(cfg.Timeout)
	ticker := time.NewTicker(cfg.Poll)
	defer ticker.Stop()
	for {
		peak.sample(ctx, &res)
		status, err := probe.get(ctx, time.Until(deadline))
		if err == nil && status == cfg.ReadyStatus {
			res.seconds = time.Since(p.start).Seconds()
			peak.relist() // a container started since the last listing counts too
			peak.sample(ctx, &res)
			return res
		}
		if res.err = p.check(ctx, deadline, cfg, describe(status, err)); res.err != nil {
			return res
		}
		select {
		case <-ctx.Done():
		case <-ticker.C:
		case p.waitErr = <-p.exited:
			p.done = true
		}
	}
}

// check returns why waiting must end, or nil to go on.
func (p *product) check(ctx context.Context, deadline time.Time, cfg *Config, last string) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case p.exitedNow():
		return fmt.Errorf("command exited before ready (%s); last poll: %s", exitText(p.waitErr), last)
	case !time.Now().Before(deadline):
		return fmt.Errorf("not ready after %s (last poll of %s: %s)", cfg.Timeout, cfg.ReadyURL, last)
	}
	return nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

func describe(status int, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("HTTP %d", status)
}

// prober GETs the ready URL on a fresh connection each time.
type prober struct {
	client *http.Client
	url    string
}

func newProber(cfg *Config) *prober {
	return &prober{url: cfg.ReadyURL, client: httpprobe.Client()}
}

// get returns the status of one GET, bounded by 5 s and by remaining.
func (pr *prober) get(ctx context.Context, remaining time.Duration) (int, error) {
	return httpprobe.Status(ctx, pr.client, pr.url, min(5*time.Second, max(remaining, time.Millisecond)))
}

// peakWatcher samples what the peak is taken of: the process tree's RSS,
// or with cfg.Containers the containers' memory.
type peakWatcher struct {
	rss        *rssWatcher
	containers func(context.Context) (int64, []string, error)
	relist     func() // the next containers call lists them again
	seen       map[string]bool
}

func newPeakWatcher(cfg *Config, pid int) *peakWatcher {
	if len(cfg.Containers) == 0 {
		return &peakWatcher{rss: newRSSWatcher(cfg.ProcRoot, pid), relist: func() {}}
	}
	w := &peakWatcher{containers: cfg.containerMemory, relist: func() {}, seen: map[string]bool{}}
	if w.containers == nil {
		c := sample.NewContainers(cfg.Containers)
		w.containers, w.relist = c.Memory, c.Relist
	}
	return w
}

// sample raises res's peak to the present figure; with containers it adds
// the ones measured to res.sources (a container that cannot be listed or
// read yet is not there yet).
func (w *peakWatcher) sample(ctx context.Context, res *readyResult) {
	if w.rss != nil {
		res.peakRSS = max(res.peakRSS, w.rss.sample())
		return
	}
	mem, sources, err := w.containers(ctx)
	if err != nil {
		return
	}
	res.peakRSS = max(res.peakRSS, mem)
	for _, s := range sources {
		if !w.seen[s] {
			w.seen[s] = true
			res.sources = append(res.sources, s)
		}
	}
	slices.Sort(res.sources)
}

// rssWatcher sums the RSS of the product's tree and process group.
type rssWatcher struct {
	procs *sample.ProcTable
	tree  *sample.Tree
	roots []int
}

func newRSSWatcher(procRoot string, pid int) *rssWatcher {
	tree := sample.NewTree(100, false)
	tree.Group = pid // a daemonising child that left the tree is still in the group
	return &rssWatcher{procs: sample.NewProcTable(procRoot), tree: tree, roots: []int{pid}}
}

func (w *rssWatcher) sample() int64 {
	if err := w.procs.Scan(); err != nil {
		return 0
	}
	return w.tree.Measure(w.procs, w.roots).RSSBytes
}
