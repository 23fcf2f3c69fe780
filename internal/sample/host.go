package sample

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/idpbench/idpbench/internal/hostprobe"
	"github.com/idpbench/idpbench/internal/schema"
)

// hostSource records how busy the whole machine is: 100 = every core busy,
// so a saturated machine (load driver and product competing) is visible;
// how much of it the hypervisor took for other guests (steal); and, with a
// probe, how fast its cores ran (hostprobe's fixed work, run every tick).
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
		if us, ok := h.runProbe(); ok {
			rec.ProbeUS = new(us)
		}
	}
	return append(out, rec)
}

// probeRuns is how many times a tick runs the probe; it records their
// median, so one run that an interrupt or a preemption cut into does not
// stand for the tick (about 6 ms of one core a tick).
const probeRuns = 3

// runProbe is the median of probeRuns runs of the host probe, in whole
// microseconds; false where it cannot run (no per-thread CPU clock).
func (h *hostSource) runProbe() (float64, bool) {
	var runs [probeRuns]time.Duration
	for i := range runs {
		d, err := h.probe.Run()
		if err != nil {
			return 0, false
		}
		runs[i] = d
	}
	slices.Sort(runs[:])
	return math.Round(float64(runs[probeRuns/2]) / float64(time.Microsecond)), true
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
