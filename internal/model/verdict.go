package model

import (
	"fmt"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// Bottleneck thresholds. CPU figures are percent of one core (100 = one
// core busy); host busy is percent of all cores.
const (
	// CPUBoundShare: a process tree using at least this share of the host's
	// cores is CPU-bound (160% on a 2-core host).
	CPUBoundShare = 0.80
	// HostSaturatedPct: the host is saturated from this whole-machine busy
	// percentage on, whoever uses the CPU.
	HostSaturatedPct = 90.0
)

// Bottleneck kinds, the first word of a verdict.
const (
	VerdictDriver = "driver-limited"
	VerdictIdP    = "IdP CPU-bound"
	VerdictDB     = "database CPU-bound"
	VerdictHost   = "host saturated"
	VerdictNone   = "no CPU bottleneck"
	VerdictNA     = "N/A"
)

// Usage is what the processes used during one measured window: medians of
// the sampler's records, and the driver's own figures from the step.
type Usage struct {
	Cores        int     // logical CPUs of the host (step host.cpus)
	IdPCPU       float64 // IdP process tree, percent of one core
	DBCPU        float64 // PostgreSQL server tree, percent of one core
	HostBusy     float64 // whole machine, percent of all cores
	DriverCPU    float64 // loadstep, percent of one core (driver.cpu_pct)
	DriverProcs  int     // cores the driver may use (driver.gomaxprocs)
	DriverLimit  bool    // driver.limited (schema.DriverLimit)
	DriverReason string  // driver.limited_reason; empty in older records
	HasIdP       bool    // IdPCPU was sampled
	HasDB        bool    // DBCPU was sampled
	HasHost      bool    // HostBusy is known
	HostFromStep bool    // HostBusy came from the step's driver.host_cpu_pct, not the sampler
}

// Verdict names the bottleneck of a window. The rules, in order (the first
// that holds wins):
//
//  1. driver-limited: the step says so (schema.DriverLimit: the driver's loops
//     were running or queued for a CPU for at least schema.LimitedBusyPct of
//     the window). The flag wins over the figures below: a step whose driver
//     set the pace is never called IdP-, database- or host-bound, and one
//     whose driver did not is never called driver-limited;
//  2. IdP CPU-bound: IdP CPU >= CPUBoundShare of all cores;
//  3. database CPU-bound: PostgreSQL CPU >= CPUBoundShare of all cores;
//  4. host saturated: host busy >= HostSaturatedPct (the figures say who used it);
//  5. otherwise no CPU bottleneck: the product waits (I/O, locks, pools, sleeps).
//
// Without IdP samples or host figures there is no verdict (N/A).
func Verdict(u Usage) (kind, text string) {
	capacity := float64(max(u.Cores, 1)) * 100
	switch {
	case u.DriverLimit && u.DriverReason != "":
		return VerdictDriver, VerdictDriver + ": " + u.DriverReason
	case u.DriverLimit: // a record from before limited_reason
		return VerdictDriver, fmt.Sprintf("%s: driver %s of %s", VerdictDriver,
			steps.Percent(u.DriverCPU), steps.Percent(float64(max(u.DriverProcs, 1))*100))
	case !u.HasIdP || !u.HasHost:
		return VerdictNA, "N/A: " + missingUsage(u)
	case u.IdPCPU >= CPUBoundShare*capacity:
		return VerdictIdP, fmt.Sprintf("%s: IdP %s of %s%s", VerdictIdP, steps.Percent(u.IdPCPU), steps.Percent(capacity), dbPart(u))
	case u.HasDB && u.DBCPU >= CPUBoundShare*capacity:
		return VerdictDB, fmt.Sprintf("%s: PostgreSQL %s of %s, IdP %s", VerdictDB, steps.Percent(u.DBCPU), steps.Percent(capacity), steps.Percent(u.IdPCPU))
	case u.HostBusy >= HostSaturatedPct:
		return VerdictHost, fmt.Sprintf("%s: host %s busy (%s)", VerdictHost, steps.Percent(u.HostBusy), consumers(u))
	}
	return VerdictNone, fmt.Sprintf("%s: host %s busy (%s)", VerdictNone, steps.Percent(u.HostBusy), consumers(u))
}

func missingUsage(u Usage) string {
	switch {
	case !u.HasIdP && !u.HasHost:
		return "no IdP or host CPU figures in the window"
	case !u.HasIdP:
		return "no IdP process samples in the window"
	}
	return "no host CPU figures in the window"
}

func dbPart(u Usage) string {
	if !u.HasDB {
		return ""
	}
	return ", PostgreSQL " + steps.Percent(u.DBCPU)
}

// consumers lists who used the CPU: "IdP 120%, PostgreSQL 40%, driver 35%".
func consumers(u Usage) string {
	s := "IdP " + steps.Percent(u.IdPCPU)
	if u.HasDB {
		s += ", PostgreSQL " + steps.Percent(u.DBCPU)
	}
	return s + ", driver " + steps.Percent(u.DriverCPU)
}

// VerdictRules is the rule text "How to read this" prints; it names the
// same constants Verdict uses.
func VerdictRules() []string {
	return []string{
		fmt.Sprintf("%s — %s;", VerdictDriver, DriverLimitRule()),
		fmt.Sprintf("%s — the IdP process tree used at least %.0f%% of all cores;", VerdictIdP, CPUBoundShare*100),
		fmt.Sprintf("%s — the PostgreSQL server tree used at least %.0f%% of all cores;", VerdictDB, CPUBoundShare*100),
		fmt.Sprintf("%s — the whole machine was at least %.0f%% busy (driver, IdP and database share it);", VerdictHost, HostSaturatedPct),
		fmt.Sprintf("%s — none of these: the product waits (I/O, locks, connection pools, sleeps).", VerdictNone),
	}
}

// DriverLimitRule states schema.DriverLimit's rule, for VerdictRules and
// the report's "How to read this".
func DriverLimitRule() string {
	return fmt.Sprintf("the step's driver was saturated: its loops were running or queued for a CPU "+
		"for at least %.0f%% of the window (its CPU time plus its busiest threads' run-queue wait, "+
		"over its event loops)", schema.LimitedBusyPct)
}
