package ladder

import (
	"math"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestPoolSize: the sizes ladder.sh's jq gave before the sizing moved here.
func TestPoolSize(t *testing.T) {
	prev := &schema.Step{Connections: 4, QPS: 100}
	base := PoolSizing{WarmupS: 60, DurationS: 10, PerConnQPS: 50, Cap: 100000, Reuse: 256}
	tests := []struct {
		name string
		mode string
		c    int
		prev *schema.Step
		want int
	}{
		{"reuse", PoolReuse, 8, prev, 256},
		{"chain", PoolChain, 8, nil, 16},
		{"consume, first step", PoolConsume, 2, nil, 7000},             // 2 * 50 * 70
		{"consume, from the step before", PoolConsume, 8, prev, 16816}, // ceil(100 * 2 * 1.2 * 70) + 16
		{"consume, at the cap", PoolConsume, 128, &schema.Step{Connections: 64, QPS: 5000}, 100000},
		{"consume, a step before without connections", PoolConsume, 2, &schema.Step{}, 7000},
	}
	for _, tt := range tests {
		p := base
		p.Mode, p.Connections, p.Prev = tt.mode, tt.c, tt.prev
		if got, err := PoolSize(p); err != nil || got != tt.want {
			t.Errorf("%s: %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
	for _, p := range []PoolSizing{{Mode: "borrow", Connections: 1}, {Mode: PoolChain}} {
		if _, err := PoolSize(p); err == nil || !strings.Contains(err.Error(), "pool size") {
			t.Errorf("%+v: error %v", p, err)
		}
	}
}

// TestPoolSizeRate: a consumed pool in rate mode holds the schedule's
// requests over warmup and window with 20% margin, plus 2 per connection.
func TestPoolSizeRate(t *testing.T) {
	got, err := PoolSize(PoolSizing{Mode: PoolConsume, Connections: 8, WarmupS: 2, DurationS: 10, RateRPS: 100, Cap: 100000, PerConnQPS: 50})
	if want := int(math.Ceil(100*1.2*12)) + 16; err != nil || got != want {
		t.Errorf("PoolSize = %d, %v; want %d", got, err, want)
	}
}
