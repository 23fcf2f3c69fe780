package load

import (
	"context"
	"fmt"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/internal/schema"
)

// Segment is one agent's share of a step that Of agents run together
// (loadstep --segment I/N), each its own loadstep process, merged
// afterwards by aggregate merge. The zero value is the whole step. The
// shares are disjoint and together exactly the whole:
//
//   - connections: Connections/Of each, the remainder to the lowest
//     indexes (10 over 3: 4, 3, 3);
//   - rate mode: the step's one schedule of Rate requests/s, slot n due
//     at n/Rate after the start, of which agent Index sends the slots
//     Index, Index+Of, Index+2*Of, ... (Rate/Of; see plan.intended);
//   - pools (every pool, in every mode): the credentials at positions p,
//     0-based in file order, with p mod Of == Index, so no two agents
//     hold the same credential and a pool minted over time is spread
//     evenly over them.
type Segment struct {
	Index int // this agent, 0 <= Index < Of
	Of    int // agents in all; 0 = the whole step (no segment)
}

// agents is how many agents share the step (1 without a segment).
func (s Segment) agents() int { return max(s.Of, 1) }

// Share is agent Index's part of total connections.
func (s Segment) Share(total int) int {
	n := s.agents()
	share := total / n
	if s.Index < total%n {
		share++
	}
	return share
}

// Pool is agent Index's slice of p: the credentials at positions Index,
// Index+Of, ..., their file lines kept for errors. Without a segment
// (and for a nil pool) it is p itself.
func (s Segment) Pool(p *pool.Pool) *pool.Pool {
	if p == nil || s.agents() == 1 {
		return p
	}
	out := &pool.Pool{Name: p.Name, Header: p.Header}
	for i := s.Index; i < len(p.Creds); i += s.Of {
		out.Creds = append(out.Creds, p.Creds[i])
		out.Lines = append(out.Lines, p.Line(i))
	}
	return out
}

// String is the flag's form, I/N.
func (s Segment) String() string { return fmt.Sprintf("%d/%d", s.Index, s.agents()) }

// record is the step's segment field; nil without a segment.
func (s Segment) record(c *Config) *schema.Segment {
	if s.Of < 1 {
		return nil
	}
	return &schema.Segment{Index: s.Index, Of: s.Of, TotalConnections: c.Connections, TotalRateRPS: c.Rate}
}

// validateSegment checks the segment against the step it splits.
func (c *Config) validateSegment() error {
	s := c.Segment
	switch {
	case s.Of < 0 || (s.Of == 0 && s.Index != 0) || (s.Of > 0 && (s.Index < 0 || s.Index >= s.Of)):
		return cli.Usagef("--segment: %d/%d: want I/N with 0 <= I < N", s.Index, s.Of)
	case c.agentConnections() == 0:
		return cli.Usagef("--segment %s: -c %d leaves agent %d no connection (-c must be at least %d for %d agents)",
			s, c.Connections, s.Index, s.Of, s.Of)
	}
	return nil
}

// agentConnections is the connections this agent runs: its segment's
// share of Connections.
func (c *Config) agentConnections() int { return c.Segment.Share(c.Connections) }

// agentRate is the rate this agent sends, requests/s: its share of Rate.
func (c *Config) agentRate() float64 { return c.Rate / float64(c.Segment.agents()) }

// validateStartAt refuses a common start the warmup would not keep: an
// adaptive warmup decides each agent's window on its own.
func (c *Config) validateStartAt() error {
	if !c.StartAt.IsZero() && c.WarmupMax > c.Warmup {
		return cli.Usagef("--start-at: an adaptive warmup (--warmup-max %s above --warmup %s) would start each agent's window when its own throughput settles; "+
			"give a fixed --warmup (no --warmup-max) so that every agent measures the same window", c.WarmupMax, c.Warmup)
	}
	return nil
}

// launchTime waits for StartAt, when given, and returns the launch the
// step is reckoned from and the moment the workers actually begin. With
// StartAt the launch is StartAt itself, read on the monotonic clock (now
// less how late now is), so every agent's warmup, window and rate
// schedule are the same however late its timer fired; without, both are
// now. A cancel during the wait returns at once, with no start (the step
// is then interrupted before its warmup). More than one interval late is an
// error: such an agent would miss part of the shared warmup or window.
func (c *Config) launchTime(ctx context.Context) (launch, started time.Time, err error) {
	if c.StartAt.IsZero() {
		now := time.Now()
		return now, now, nil
	}
	waitWall(ctx, c.StartAt)
	now := time.Now()
	if ctx.Err() != nil {
		return now, time.Time{}, nil // interrupted before the start: never started
	}
	late := now.Sub(c.StartAt) // StartAt has no monotonic reading: wall clock
	if late > c.Interval {
		return now, now, fmt.Errorf("--start-at %s: %s late, more than one --interval (%s) past it once set up: refusing to start late (the agents must share the warmup and the window); give a time further ahead",
			c.StartAt.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond), c.Interval)
	}
	return now.Add(-late), now, nil
}

// waitWall sleeps until the wall clock reads t, or ctx is cancelled. A
// timer runs on the monotonic clock, so the wall clock is read again
// after it fires (a clock stepped meanwhile waits the difference).
func waitWall(ctx context.Context, t time.Time) {
	for {
		d := time.Until(t.Round(0))
		if d <= 0 || !sleepUntil(ctx, nil, time.Now().Add(d)) {
			return
		}
	}
}
