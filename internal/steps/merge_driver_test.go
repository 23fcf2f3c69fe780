package steps

import (
	"math"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

func TestMergeDriver(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	reason := "1 loop(s) running or queued 96% of the window (>= 80%): cpu 48%, queued 48%, host 83% busy"
	tests := []struct {
		name   string
		agents []schema.Driver
		want   schema.Driver
	}{
		{"two agents, one limited", []schema.Driver{
			{CPUS: 1, CPUPct: 33, GOMAXPROCS: 1, Loops: 1, RunWaitS: f(1.5), LoopWaitS: f(1.4), LoopBusyPct: 96, Limited: true, LimitedReason: reason, HostCPUPct: 83, HostStealPct: f(7)},
			{CPUS: 0.5, CPUPct: 17, GOMAXPROCS: 2, Loops: 2, RunWaitS: f(0.2), LoopWaitS: f(0.1), LoopBusyPct: 9, HostCPUPct: 90, HostStealPct: f(2)},
		}, schema.Driver{CPUS: 1.5, CPUPct: 50, GOMAXPROCS: 3, Loops: 3, RunWaitS: f(1.7), LoopWaitS: f(1.5), LoopBusyPct: 38,
			Limited: true, LimitedReason: reason, HostCPUPct: 90, HostStealPct: f(7)}},
		{"two limited agents keep both reasons", []schema.Driver{
			{Loops: 1, LoopBusyPct: 90, Limited: true, LimitedReason: "a"},
			{Loops: 1, LoopBusyPct: 100, Limited: true, LimitedReason: "b"},
		}, schema.Driver{Loops: 2, LoopBusyPct: 95, Limited: true, LimitedReason: "a | b"}},
		{"older records without the queue wait", []schema.Driver{
			{CPUS: 1, CPUPct: 30, GOMAXPROCS: 2},
			{CPUS: 2, CPUPct: 60, GOMAXPROCS: 2, Limited: true},
		}, schema.Driver{CPUS: 3, CPUPct: 90, GOMAXPROCS: 4, Limited: true}},
		{"an agent without the queue wait or steal adds none", []schema.Driver{
			{Loops: 2, RunWaitS: f(0.5), LoopWaitS: f(0.5), LoopBusyPct: 10},
			{Loops: 2, LoopBusyPct: 20, HostStealPct: f(3)},
		}, schema.Driver{Loops: 4, RunWaitS: f(0.5), LoopWaitS: f(0.5), LoopBusyPct: 15, HostStealPct: f(3)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got schema.Driver
			for _, d := range tc.agents {
				mergeDriver(&got, d)
			}
			w := tc.want
			if got.CPUS != w.CPUS || got.CPUPct != w.CPUPct || got.GOMAXPROCS != w.GOMAXPROCS || got.Loops != w.Loops ||
				!sameWait(got.RunWaitS, w.RunWaitS) || !sameWait(got.LoopWaitS, w.LoopWaitS) ||
				math.Abs(got.LoopBusyPct-w.LoopBusyPct) > 1e-9 || got.Limited != w.Limited ||
				got.LimitedReason != w.LimitedReason || got.HostCPUPct != w.HostCPUPct || !sameWait(got.HostStealPct, w.HostStealPct) {
				t.Errorf("merged %+v\nwant   %+v", got, w)
			}
		})
	}
}

func sameWait(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Abs(*a-*b) < 1e-9
}
