package ladder

import (
	"fmt"
	"math"

	"github.com/idpbench/idpbench/internal/schema"
)

// Pool modes (the adapter's loadargs say --pool-mode; Run).
const (
	PoolReuse   = schema.PoolReuse   // minted once and kept while its tokens outlive the next step
	PoolConsume = schema.PoolConsume // reissued before every step, each credential used once
	PoolChain   = schema.PoolChain   // reissued before every step: seeds for each connection's chain
)

// PoolSizing is what sizes one step's pool.
type PoolSizing struct {
	Mode        string
	Connections int
	// Prev is the step a consumed pool is sized from: the previous window
	// of the ladder, or in a later round the same level's window of the
	// round before; nil for a ladder's first step.
	Prev       *schema.Step
	WarmupS    float64 // the longest the step's warmup may be (the cap)
	DurationS  float64 // its measured window
	PerConnQPS float64 // consume, first step: the rate assumed per connection
	Cap        int     // consume: at most this many (an exhausted pool is recorded by loadstep, never wrapped)
	Reuse      int     // reuse: the pool's size
	// RateRPS is a rate-mode window's rate (a window at a share of the
	// capacity); 0 for a closed-loop one.
	RateRPS float64
}

// PoolSize is the size of a step's pool, the one place the sizing lives:
//
//	consume: with a previous step (c_prev connections, qps_prev):
//	           ceil(qps_prev * (c / c_prev) * 1.2 * (warmup + duration)) + 2c
//	         -- in a closed loop the rate per connection does not grow with c, so
//	         c / c_prev bounds the growth; 1.2 is margin. The first step:
//	           c * PerConnQPS * (warmup + duration). At most Cap.
//	         In rate mode: ceil(rate * 1.2 * (warmup + duration)) + 2c.
//	chain:   2 seeds per connection
//	reuse:   Reuse
func PoolSize(p PoolSizing) (int, error) {
	if p.Connections < 1 {
		return 0, fmt.Errorf("pool size: %d connections, want >= 1", p.Connections)
	}
	switch p.Mode {
	case PoolReuse:
		return p.Reuse, nil
	case PoolChain:
		return 2 * p.Connections, nil
	case PoolConsume:
	default:
		return 0, fmt.Errorf("pool size: unknown pool mode %q (want %s, %s or %s)", p.Mode, PoolReuse, PoolConsume, PoolChain)
	}
	span, c := p.WarmupS+p.DurationS, float64(p.Connections)
	n := c * p.PerConnQPS * span
	switch {
	case p.RateRPS > 0:
		n = p.RateRPS*1.2*span + 2*c
	case p.Prev != nil && p.Prev.Connections > 0:
		n = p.Prev.QPS*(c/float64(p.Prev.Connections))*1.2*span + 2*c
	}
	return int(min(math.Ceil(n), float64(p.Cap))), nil
}
