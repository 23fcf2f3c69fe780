package sample

import (
	"context"
	"math"
	"time"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/idpbench/idpbench/internal/hostprobe"
	"github.com/idpbench/idpbench/internal/schema"
)

// hostSource records how busy the whole machine is: 100 = every core busy,
// so a saturated machine (load driver and product competing) is visible;
// how much of it the hypervisor took for other guests (steal); and, with a
// probe, how fast its cores ran (one run of hostprobe's fixed work a tick).
type hostSource struct {
	procRoot                     string // "" = /proc
	prevBusy, prevAll, prevSteal float64
	have                         bool
	probe                        *hostprobe.Probe // nil: no probe
}

// newHostSource reads procRoot's /proc/stat; with probe, it runs the host
// probe every tick.
func newHostSource(procRoot string, probe bool) *hostSource {
	h := &hostSource{procRoot: procRoot}
	if probe {
		h.probe = hostprobe.New()
	}
	return h
}

func (h *hostSource) collect(ctx context.Context, tk *tick, out []schema.Sample) []schema.Sample {
	busy, all, steal, ok := h.read(ctx)
	if !ok {
		return out
	}
	had, db, da, ds := h.have, busy-h.prevBusy, all-h.prevAll, steal-h.prevSteal
	h.prevBusy, h.prevAll, h.prevSteal, h.have = busy, all, steal, true
	if tk.baseline || !had || da <= 0 {
		return out
	}
	rec := schema.Sample{Schema: schema.SampleV1, T: tk.now, Source: "host",
		CPUPct: round2(db / da * 100), StealPct: new(round2(max(ds, 0) / da * 100))}
	if h.probe != nil {
		if d, err := h.probe.Run(); err == nil { // no thread CPU clock: no figure
			rec.ProbeUS = new(math.Round(float64(d) / float64(time.Microsecond)))
		}
	}
	return append(out, rec)
}

// read returns busy, total and stolen CPU seconds of all cores since boot.
// iowait counts as idle: the core could run something else. Steal counts
// as busy: the core was wanted, and a neighbour had it.
func (h *hostSource) read(ctx context.Context) (busy, all, steal float64, ok bool) {
	if h.procRoot != "" {
		ctx = context.WithValue(ctx, common.EnvKey, common.EnvMap{common.HostProcEnvKey: h.procRoot})
	}
	ts, err := cpu.TimesWithContext(ctx, false)
	if err != nil || len(ts) == 0 {
		return 0, 0, 0, false
	}
	t := ts[0]
	busy = t.User + t.Nice + t.System + t.Irq + t.Softirq + t.Steal
	return busy, busy + t.Idle + t.Iowait, t.Steal, true
}

func (h *hostSource) close() {}
