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
	phase, since, base := "warmup", e.plan.launch, [2]int64{}
	if start := e.plan.start(); !now.Before(start) {
		phase, since = "measure", start
		base = [2]int64{e.base[0].Load(), e.base[1].Load()}
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
		phase, elapsed, t[0]-base[0], t[1]-base[1])
}

// liveTotals sums the workers' running counts (sent, failed).
func (e *engine) liveTotals() [2]int64 {
	var t [2]int64
	for i := range e.live {
		t[0] += e.live[i].sent.Load()
		t[1] += e.live[i].failed.Load()
	}
	return t
}
