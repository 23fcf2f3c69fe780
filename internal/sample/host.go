package sample

import (
	"context"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/idpbench/idpbench/internal/schema"
)

// hostSource records how busy the whole machine is: 100 = every core busy,
// so a saturated machine (load driver and product competing) is visible.
type hostSource struct {
	procRoot          string // "" = /proc
	prevBusy, prevAll float64
	have              bool
}

func newHostSource(procRoot string) *hostSource { return &hostSource{procRoot: procRoot} }

func (h *hostSource) collect(ctx context.Context, tk *tick, out []schema.Sample) []schema.Sample {
	busy, all, ok := h.read(ctx)
	if !ok {
		return out
	}
	had, db, da := h.have, busy-h.prevBusy, all-h.prevAll
	h.prevBusy, h.prevAll, h.have = busy, all, true
	if tk.baseline || !had || da <= 0 {
		return out
	}
	return append(out, schema.Sample{Schema: schema.SampleV1, T: tk.now, Source: "host", CPUPct: round2(db / da * 100)})
}

// read returns busy and total CPU seconds of all cores since boot. iowait
// counts as idle: the core could run something else.
func (h *hostSource) read(ctx context.Context) (busy, all float64, ok bool) {
	if h.procRoot != "" {
		ctx = context.WithValue(ctx, common.EnvKey, common.EnvMap{common.HostProcEnvKey: h.procRoot})
	}
	ts, err := cpu.TimesWithContext(ctx, false)
	if err != nil || len(ts) == 0 {
		return 0, 0, false
	}
	t := ts[0]
	busy = t.User + t.Nice + t.System + t.Irq + t.Softirq + t.Steal
	return busy, busy + t.Idle + t.Iowait, true
}

func (h *hostSource) close() {}
