package load

import (
	"fmt"
	"time"
)

// startProgress draws a one-line progress each interval to cfg.Progress
// (a terminal) and returns the function that stops and clears it.
func (e *engine) startProgress() (stop func()) {
	if e.cfg.Progress == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(e.plan.interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(e.cfg.Progress, "\r\033[K")
				return
			case now := <-tick.C:
				e.drawProgress(now)
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (e *engine) drawProgress(now time.Time) {
	phase, since, base := "warmup", e.plan.launch, liveSum{}
	if start := e.plan.start(); !now.Before(start) {
		phase, since = "measure", start
		if b := e.base.Load(); b != nil {
			base = *b
		}
	}
	if end := e.plan.end(); !now.Before(end) {
		phase, since = "drain", end
	}
	elapsed := now.Sub(since).Truncate(100 * time.Millisecond).String()
	if phase == "warmup" && e.cfg.WarmupMax > 0 {
		elapsed += fmt.Sprintf(" (stable %d/%d)", e.warm.run.Load(), e.cfg.WarmupStable)
	}
	t := e.liveTotals()
	fmt.Fprintf(e.cfg.Progress, "\r\033[Kloadstep: %s %s  requests %d  errors %d",
		phase, elapsed, t.sent-base.sent, t.failedAll()-base.failedAll())
}

// liveTotals sums the workers' running counts.
func (e *engine) liveTotals() liveSum {
	var t liveSum
	for i := range e.live {
		t.sent += e.live[i].sent.Load()
		for c := range t.failed {
			t.failed[c] += e.live[i].failed[c].Load()
		}
	}
	return t
}
