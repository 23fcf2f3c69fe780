package load

import (
	"cmp"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// selfTasks is where Linux lists this process's threads (readThreads).
const selfTasks = "/proc/self/task"

// cpuSample is the process's and the host's CPU counters at one instant.
type cpuSample struct {
	t       time.Time
	self    time.Duration      // user+system CPU of this process (getrusage self)
	threads map[int]schedTimes // by thread id (readThreads); nil where unavailable
	host    hostCPU            // /proc/stat jiffies; zero where unavailable
}

// hostCPU is the aggregate "cpu" line of /proc/stat, in jiffies: busy is
// every field but idle and iowait, steal counting as busy (the CPU was not
// ours to use); steal is the time the hypervisor ran other guests while
// this one wanted to run (hasSteal: the kernel reports it, field 8).
type hostCPU struct {
	busy, total, steal uint64
	hasSteal           bool
}

// hostCPULine parses /proc/stat's aggregate line ("cpu  user nice system
// idle iowait irq softirq steal guest guest_nice"); zero when it is not one.
func hostCPULine(line string) hostCPU {
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return hostCPU{}
	}
	var h hostCPU
	// guest and guest_nice (fields 9, 10) are already included in user and nice.
	for i, f := range fields[1:min(len(fields), 9)] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return hostCPU{}
		}
		h.total += v
		switch i {
		case 3, 4: // idle, iowait
		case 7:
			h.steal, h.hasSteal = v, true
			h.busy += v
		default:
			h.busy += v
		}
	}
	return h
}

// schedTimes is one thread's time on a CPU and time runnable but queued.
type schedTimes struct{ run, wait time.Duration }

// cpuUse is CPU spent between two samples.
type cpuUse struct {
	selfS   float64 // CPU seconds of this process
	wallS   float64 // seconds between the samples
	hostPct float64 // busy share of all host CPUs, percent
	// stealPct is the share of all host CPUs the hypervisor gave other
	// guests, percent; nil where the kernel does not report steal.
	stealPct *float64
	threads  []schedTimes // each thread's share of the interval, busiest (run+wait) first; nil where unavailable
}

func sampleCPU() cpuSample {
	host := hostJiffies()
	threads, _ := readThreads(selfTasks)
	return cpuSample{t: time.Now(), self: selfCPU(), threads: threads, host: host}
}

func (s cpuSample) since(before cpuSample) cpuUse {
	u := cpuUse{selfS: (s.self - before.self).Seconds(), wallS: s.t.Sub(before.t).Seconds()}
	if a, b := s.host, before.host; a.total > b.total {
		dt := float64(a.total - b.total)
		u.hostPct = 100 * float64(a.busy-b.busy) / dt
		if a.hasSteal && b.hasSteal && a.steal >= b.steal {
			u.stealPct = new(100 * float64(a.steal-b.steal) / dt)
		}
	}
	if s.threads != nil && before.threads != nil {
		u.threads = threadDeltas(before.threads, s.threads)
	}
	return u
}

// threadDeltas is each thread's scheduling between two readings, busiest
// first. A thread started in between counts from zero (so does one whose
// id was reused: its counts went backwards); one that exited in between is
// lost, which the Go runtime, keeping its threads, rarely does.
func threadDeltas(before, after map[int]schedTimes) []schedTimes {
	out := make([]schedTimes, 0, len(after))
	for tid, a := range after {
		b := before[tid]
		if a.run < b.run || a.wait < b.wait {
			b = schedTimes{}
		}
		out = append(out, schedTimes{run: a.run - b.run, wait: a.wait - b.wait})
	}
	slices.SortFunc(out, func(x, y schedTimes) int { return cmp.Compare(y.run+y.wait, x.run+x.wait) })
	return out
}

// driver describes the driver's own cost over the window, loops being the
// threads it can keep busy at once (schema.Driver.Loops), and decides
// whether it was the bottleneck (schema.DriverLimit).
func (u cpuUse) driver(loops int) schema.Driver {
	d := schema.Driver{CPUS: u.selfS, GOMAXPROCS: runtime.GOMAXPROCS(0), HostCPUPct: u.hostPct, HostStealPct: u.stealPct, Loops: loops}
	if u.wallS <= 0 {
		return d
	}
	d.CPUPct = 100 * u.selfS / u.wallS
	if u.threads != nil {
		var all, busiest time.Duration
		for i, t := range u.threads {
			all += t.wait
			if i < loops {
				busiest += t.wait
			}
		}
		d.RunWaitS, d.LoopWaitS = new(all.Seconds()), new(busiest.Seconds())
	}
	schema.DriverLimit(&d, u.wallS)
	return d
}

// driverLoops is how many threads the engine can keep busy at once: its
// event loops, or for the goroutine engines one per connection, at most
// GOMAXPROCS of them running.
func (e *engine) driverLoops() int {
	if e.loops != nil {
		return len(e.loops)
	}
	return min(runtime.GOMAXPROCS(0), e.conns)
}

// hostInfo describes this machine.
func hostInfo() schema.Host {
	name, _ := os.Hostname()
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	return schema.Host{
		CPUs: runtime.NumCPU(), CPU: cpuModel(string(cpuinfo)), Kernel: kernelRelease(), Go: runtime.Version(),
		OS: runtime.GOOS + "/" + runtime.GOARCH, Hostname: name,
	}
}

// cpuModel describes the first processor of /proc/cpuinfo: its model name,
// then vendor, family, model and stepping (a virtual machine's model name
// may be as vague as "AMD EPYC"; the family tells the generation apart),
// e.g. "AMD EPYC (AuthenticAMD family 26 model 2 stepping 1)"; "" when
// there is nothing to read. Not the clock: where it scales, every read
// differs, and the report would see a new host in every step.
func cpuModel(cpuinfo string) string {
	f := map[string]string{}
	for line := range strings.Lines(cpuinfo) {
		k, v, ok := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok && k == "" && len(f) > 0 {
			break // the end of the first processor's block
		}
		if _, seen := f[k]; ok && !seen {
			f[k] = v
		}
	}
	var id []string // vendor, family, model, stepping: one phrase
	if f["vendor_id"] != "" {
		id = append(id, f["vendor_id"])
	}
	for _, k := range []string{"cpu family", "model", "stepping"} {
		if f[k] != "" {
			id = append(id, strings.TrimPrefix(k, "cpu ")+" "+f[k])
		}
	}
	name, ident := f["model name"], strings.Join(id, " ")
	switch {
	case ident == "":
		return name
	case name == "":
		return ident
	}
	return name + " (" + ident + ")"
}
