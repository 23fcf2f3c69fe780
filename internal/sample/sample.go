package sample

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/idpbench/idpbench/internal/schema"
)

// source produces zero or more records per tick.
type source interface {
	collect(ctx context.Context, tk *tick, out []schema.Sample) []schema.Sample
	close()
}

// tick is one sampling instant, shared by every source.
type tick struct {
	now      time.Time
	dt       float64 // seconds since the previous tick
	hz       float64 // clock ticks per second
	procs    *ProcTable
	pss      bool // read PSS this tick (it costs more than the rest of a tick)
	baseline bool // the first scan: sets the CPU baselines, writes nothing
	final    bool // the last tick: PostgreSQL adds its top queries
}

// cpuPct converts clock ticks used in the interval to percent of one core.
func (tk *tick) cpuPct(ticks uint64) float64 {
	if tk.dt <= 0 {
		return 0
	}
	return round2(float64(ticks) / tk.hz / tk.dt * 100)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Run samples until cfg.Duration passes, ctx is cancelled (SIGINT: a normal
// stop) or, with cfg.UntilStdinEOF, stdin closes. It always ends with a final
// record per source taken at the stop instant. Records go to cfg.Output one
// complete line per write, so the file can be read while it grows.
func Run(ctx context.Context, cfg Config, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Hz == 0 {
		cfg.Hz = cpu.ClocksPerSec
	}
	if cfg.minFinal == 0 {
		cfg.minFinal = min(cfg.Every, 250*time.Millisecond)
	}
	wall := time.Now()
	ctx, stop := stopOnEOF(ctx, cfg, stdin)
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	out, closeOut, err := openOutput(cfg.Output, stdout)
	if err != nil {
		return err
	}
	s.out = newLineWriter(out)
	if cfg.Duration > 0 { // the duration counts from when the sources are ready
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	err = s.loop(ctx)
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if cfg.SelfCPU {
		reportSelfCPU(stderr, time.Since(wall))
	}
	return err
}

// stopOnEOF is ctx, cancelled also when stdin closes if cfg asks for that.
func stopOnEOF(ctx context.Context, cfg Config, stdin io.Reader) (context.Context, context.CancelFunc) {
	if !cfg.UntilStdinEOF || stdin == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		io.Copy(io.Discard, stdin)
		cancel()
	}()
	return ctx, cancel
}

func openOutput(path string, stdout io.Writer) (io.Writer, func() error, error) {
	if path == "-" || path == "" {
		return stdout, func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("creating %s: %w", path, err)
	}
	return f, func() error {
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}, nil
}

// lineWriter writes each record as one complete line with one Write call.
type lineWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func newLineWriter(w io.Writer) *lineWriter {
	l := &lineWriter{w: w}
	l.enc = json.NewEncoder(&l.buf)
	return l
}

func (l *lineWriter) write(s *schema.Sample) error {
	l.buf.Reset()
	if err := l.enc.Encode(s); err != nil {
		return err
	}
	_, err := l.w.Write(l.buf.Bytes())
	return err
}

// sampler owns the sources and the shared /proc scan.
type sampler struct {
	cfg      Config
	sources  []source
	procs    *ProcTable // nil when no source reads /proc
	out      *lineWriter
	recs     []schema.Sample
	last     time.Time
	lastPSS  time.Time
	stderr   io.Writer
	scanWarn bool
}

// open checks the inputs (pids, pidfiles, the database) before any output
// exists, and builds the sources.
func open(ctx context.Context, cfg Config, stderr io.Writer) (*sampler, error) {
	s := &sampler{cfg: cfg, stderr: stderr}
	if err := s.openProcSources(ctx); err != nil {
		return nil, err
	}
	if len(cfg.DockerGlobs) > 0 {
		if d := newDockerSource(ctx, cfg, stderr); d != nil {
			s.sources = append(s.sources, d)
		}
	}
	if cfg.PostgresDSN != "" {
		pg, err := openPostgres(ctx, cfg, stderr)
		if err != nil {
			s.close()
			return nil, err
		}
		s.sources = append(s.sources, pg)
		s.needProcs()
	}
	if cfg.Host {
		s.sources = append(s.sources, newHostSource(cfg.ProcRoot, cfg.HostProbe))
	}
	return s, nil
}

func (s *sampler) needProcs() {
	if s.procs == nil {
		s.procs = NewProcTable(s.cfg.ProcRoot)
	}
}

// openProcSources builds the process-tree sources: a --pid must exist and a
// --pidfile must appear within one interval.
func (s *sampler) openProcSources(ctx context.Context) error {
	for _, sel := range s.cfg.Selectors {
		src, err := newProcSource(sel, s.cfg.Hz, s.stderr)
		if err != nil {
			return err
		}
		switch sel.Kind {
		case SelectPidfile:
			if err := waitPidfile(ctx, sel.Value, s.cfg.Every); err != nil {
				return fmt.Errorf("--pidfile: %w", err)
			}
		case SelectPID:
			s.needProcs()
			if err := s.procs.Scan(); err != nil {
				return fmt.Errorf("reading %s: %w", s.procs.Root, err)
			}
			if s.procs.Get(src.pid) == nil {
				return fmt.Errorf("--pid %d: no such process", src.pid)
			}
		}
		s.needProcs()
		s.sources = append(s.sources, src)
	}
	return nil
}

func (s *sampler) close() {
	for _, src := range s.sources {
		src.close()
	}
}

// loop takes the baseline, ticks every interval until ctx ends, then takes
// the final tick.
func (s *sampler) loop(ctx context.Context) error {
	if err := s.tick(ctx, time.Now(), true, false); err != nil {
		return err
	}
	every := s.cfg.Every
	next := s.last.Add(every)
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.final()
		case <-timer.C:
		}
		now := time.Now()
		if err := s.tick(ctx, now, false, false); err != nil {
			return err
		}
		for !next.After(now) { // a late tick skips the missed ones
			next = next.Add(every)
		}
		timer.Reset(time.Until(next))
	}
}

// final takes the last tick at the stop instant. Its interval is at least
// minFinal so that its CPU figures are not dominated by clock-tick rounding.
func (s *sampler) final() error {
	if d := s.cfg.minFinal - time.Since(s.last); d > 0 {
		time.Sleep(d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.tick(ctx, time.Now(), false, true)
}

// tick scans /proc once, asks every source and writes their records.
func (s *sampler) tick(ctx context.Context, now time.Time, baseline, final bool) error {
	tk := tick{now: now.UTC().Round(time.Millisecond), hz: s.cfg.Hz, procs: s.procs, baseline: baseline, final: final}
	if !s.last.IsZero() {
		tk.dt = now.Sub(s.last).Seconds()
	}
	s.last = now
	tk.pss = s.pssDue(now, baseline)
	if s.procs != nil {
		if err := s.procs.Scan(); err != nil {
			if baseline {
				return fmt.Errorf("reading %s: %w", s.procs.Root, err)
			}
			s.warnScan(err)
		}
	}
	s.recs = s.recs[:0]
	for _, src := range s.sources {
		s.recs = src.collect(ctx, &tk, s.recs)
	}
	for i := range s.recs {
		if err := s.out.write(&s.recs[i]); err != nil {
			return fmt.Errorf("writing %s: %w", s.cfg.Output, err)
		}
	}
	return nil
}

// pssDue reports whether this tick reads PSS: reading smaps_rollup walks
// the page tables of every process in the trees, which on a dozen
// PostgreSQL backends costs several times the rest of a tick, and PSS moves
// slowly. Ticks without it carry no pss_bytes.
func (s *sampler) pssDue(now time.Time, baseline bool) bool {
	every := s.cfg.PSSEvery
	if every <= 0 || baseline {
		return false
	}
	if !s.lastPSS.IsZero() && now.Sub(s.lastPSS) < every-s.cfg.Every/2 {
		return false
	}
	s.lastPSS = now
	return true
}

func (s *sampler) warnScan(err error) {
	if !s.scanWarn {
		fmt.Fprintf(s.stderr, "sampler: reading %s: %v\n", s.procs.Root, err)
		s.scanWarn = true
	}
}

// reportSelfCPU prints the sampler's own CPU time (user+system) over wall time.
func reportSelfCPU(stderr io.Writer, wall time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintf(stderr, "sampler: self CPU: %v\n", err)
		return
	}
	cpuS := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	fmt.Fprintf(stderr, "sampler: self CPU %.3f s (user %.3f s, system %.3f s) over %.1f s wall = %.3f%% of one core\n",
		cpuS, time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(),
		wall.Seconds(), cpuS/wall.Seconds()*100)
}
