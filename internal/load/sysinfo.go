package load

import (
	"os"
	"runtime"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// cpuSample is the process's and the host's CPU counters at one instant.
type cpuSample struct {
	t                   time.Time
	self                time.Duration // user+system CPU of this process (getrusage self)
	hostBusy, hostTotal uint64        // /proc/stat jiffies; 0 where unavailable
}

// cpuUse is CPU spent between two samples.
type cpuUse struct {
	selfS   float64 // CPU seconds of this process
	wallS   float64 // seconds between the samples
	hostPct float64 // busy share of all host CPUs, percent
}

func sampleCPU() cpuSample {
	busy, total := hostJiffies()
	return cpuSample{t: time.Now(), self: selfCPU(), hostBusy: busy, hostTotal: total}
}

func (s cpuSample) since(before cpuSample) cpuUse {
	u := cpuUse{selfS: (s.self - before.self).Seconds(), wallS: s.t.Sub(before.t).Seconds()}
	if dt := s.hostTotal - before.hostTotal; s.hostTotal > before.hostTotal {
		u.hostPct = 100 * float64(s.hostBusy-before.hostBusy) / float64(dt)
	}
	return u
}

// driver describes the driver's own cost over the window.
func (u cpuUse) driver() schema.Driver {
	d := schema.Driver{CPUS: u.selfS, GOMAXPROCS: runtime.GOMAXPROCS(0), HostCPUPct: u.hostPct}
	if u.wallS > 0 {
		d.CPUPct = 100 * u.selfS / u.wallS
		d.Limited = u.selfS/u.wallS >= schema.LimitedThreshold*float64(d.GOMAXPROCS)
	}
	return d
}

// hostInfo describes this machine.
func hostInfo() schema.Host {
	name, _ := os.Hostname()
	return schema.Host{
		CPUs: runtime.NumCPU(), Kernel: kernelRelease(), Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Hostname: name,
	}
}
