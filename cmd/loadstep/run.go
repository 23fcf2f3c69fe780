package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/load"
	"github.com/idpbench/idpbench/internal/schema"
)

// resultMode is the file mode of a step result (it holds no secrets).
const resultMode os.FileMode = 0o644

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c config
	fs := newFlagSet(&c)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			usage(stdout, fs)
			return cli.ExitOK
		}
		return fail(stderr, cli.UsageError{Err: err})
	}
	if c.version {
		fmt.Fprintln(stdout, "loadstep", cli.Version())
		return cli.ExitOK
	}
	if fs.NArg() > 0 {
		return fail(stderr, cli.Usagef("unexpected argument %q", fs.Arg(0)))
	}
	lc, err := c.loadConfig(stdin)
	if err != nil {
		return fail(stderr, err)
	}
	if cli.IsTerminal(stderr) {
		lc.Progress = stderr
	}
	stopLive, err := c.live.start(lc, stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer stopLive()
	scraper := c.serverMetrics.scraper(c.output, stderr)
	if scraper != nil {
		lc.Window = scraper
	}
	step, err := measure(ctx, lc, c.output, c.hlog, stdout, func(s *schema.Step) {
		if scraper != nil {
			s.ServerMetrics = scraper.Record()
			s.ServerMetrics.Selector = c.serverMetrics.selector
		}
	})
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintln(stderr, summary(step))
	switch step.Status {
	case schema.StatusInterrupted:
		return cli.ExitInterrupted
	case schema.StatusTargetLost:
		fmt.Fprintf(stderr, "loadstep: the target stopped accepting connections at %s and had not come back by the end of the step (%d failed connection attempts; unreachable %.1f s of the window)\n",
			step.TargetLostAt.Format(time.RFC3339Nano), step.ConnectErrors.Total(), step.UnreachableS)
		return cli.ExitTargetLost
	}
	return cli.ExitOK
}

// measure runs the step and writes its result, and the interval log when
// hlog is not "", after finish has added what the engine does not know
// (the server's scrapes). The outputs are opened (as temporary files) before the
// run, so a bad path fails before any load, and renamed into place only
// once complete.
func measure(ctx context.Context, lc *load.Config, output, hlog string, stdout io.Writer, finish func(*schema.Step)) (*schema.Step, error) {
	out, err := atomicfile.Create(output, resultMode, stdout)
	if err != nil {
		return nil, err
	}
	defer out.Abort()
	var hl *atomicfile.File
	if hlog != "" {
		if hl, err = atomicfile.Create(hlog, resultMode, stdout); err != nil {
			return nil, err
		}
		defer hl.Abort()
	}
	step, err := load.Run(ctx, lc)
	if err != nil {
		return nil, err
	}
	finish(step)
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(step); err != nil {
		return nil, fmt.Errorf("writing %s: %w", output, err)
	}
	if hl != nil {
		if err := load.WriteHlog(hl, step); err != nil {
			return nil, fmt.Errorf("%s: %w", hlog, err)
		}
		if err := hl.Commit(); err != nil {
			return nil, err
		}
	}
	return step, out.Commit()
}

// summary is the final line on stderr.
func summary(s *schema.Step) string {
	return mainSummary(s) + warmupSummary(s) + segmentSummary(s) + connectSummary(s)
}

// segmentSummary names the agent's segment and how late it started.
func segmentSummary(s *schema.Step) string {
	var out string
	if g := s.Segment; g != nil {
		out = fmt.Sprintf("; segment %d/%d of c=%d", g.Index, g.Of, g.TotalConnections)
		if g.TotalRateRPS > 0 {
			out += fmt.Sprintf(" rate=%g", g.TotalRateRPS)
		}
	}
	if s.StartLateMS != nil {
		out += fmt.Sprintf("; started %.3f ms after --start-at", *s.StartLateMS)
	}
	return out
}

// warmupSummary says how an adaptive warmup ended.
func warmupSummary(s *schema.Step) string {
	if s.WarmupRule == nil {
		return ""
	}
	how := "interrupted"
	switch {
	case s.WarmupStable == nil:
	case *s.WarmupStable:
		how = "stable"
	default:
		how = "cap: not stable"
	}
	return fmt.Sprintf("; warmup %.1f s (%s)", s.WarmupS, how)
}

// connectSummary reports failed connection attempts, when there were any.
func connectSummary(s *schema.Step) string {
	ce := s.ConnectErrors
	if ce.Total() == 0 && ce.Unsent == 0 {
		return ""
	}
	out := fmt.Sprintf("; failed connection attempts %d (refused %d, reset %d, dns %d, tls %d, timeout %d, other %d), unreachable %.1f s",
		ce.Total(), ce.Refused, ce.Reset, ce.DNS, ce.TLS, ce.Timeout, ce.Other, s.UnreachableS)
	if ce.Unsent > 0 {
		out += fmt.Sprintf(", %d requests unsent", ce.Unsent)
	}
	return out
}

func mainSummary(s *schema.Step) string {
	if s.CorrectedLatencyMS != nil && s.Late != nil {
		return fmt.Sprintf("loadstep: %s c=%d rate=%g %s: %d requests, %.1f req/s, corrected p50 %.3f ms, p99 %.3f ms (service p99 %.3f ms), late %d (max %.1f ms), errors %d (%.3f%%)",
			s.Scenario, s.Connections, s.RateRPS, s.Status, s.Requests, s.QPS, s.CorrectedLatencyMS.P50, s.CorrectedLatencyMS.P99,
			s.LatencyMS.P99, *s.Late, *s.LateMaxMS, s.Errors.Total(), 100*s.ErrorRate)
	}
	if s.CountUnit == schema.CountIterations {
		return fmt.Sprintf("loadstep: %s c=%d %s: %d iterations (%d HTTP requests), %.1f iter/s, iteration p50 %.3f ms, p99 %.3f ms, failed iterations %d (%.3f%%)%s",
			s.Scenario, s.Connections, s.Status, s.Requests, s.HTTPRequests, s.QPS, s.LatencyMS.P50, s.LatencyMS.P99,
			s.Errors.Total(), 100*s.ErrorRate, namedFailures(s))
	}
	return fmt.Sprintf("loadstep: %s c=%d %s: %d requests, %.1f req/s, p50 %.3f ms, p99 %.3f ms, errors %d (%.3f%%)",
		s.Scenario, s.Connections, s.Status, s.Requests, s.QPS, s.LatencyMS.P50, s.LatencyMS.P99,
		s.Errors.Total(), 100*s.ErrorRate)
}

// namedFailures lists the requests that failed iterations, by name.
func namedFailures(s *schema.Step) string {
	var parts []string
	for _, name := range s.RequestOrder {
		if e := s.RequestsByName[name].Errors; e.Total() > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (non2xx %d, check %d, socket %d, timeout %d)",
				name, e.Total(), e.Non2xx, e.Check, e.Socket, e.Timeout))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; failed at: " + strings.Join(parts, ", ")
}

// fail prints err once as "loadstep: ...", a usage error with the hint
// (cli.Fail), and returns its exit code.
func fail(stderr io.Writer, err error) int {
	return cli.Fail(stderr, "loadstep", err)
}
