// Package placement decides where scripts/run-comparison.sh puts the load
// generator and the measurement tools (the driver) and the product with its
// PostgreSQL (the server): on disjoint CPU sets (pinned) or sharing every
// CPU this process may use (shared). It reads and writes CPU lists as the
// kernel writes them and taskset -c takes them ("0-2,5"), reads the CPUs this
// process may use, picks the default split and checks the sets a user gives,
// with messages that name run-comparison.sh's flag and the variable it sets.
// "provision placement" prints its answer for the scripts.
package placement

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/idpbench/idpbench/internal/schema"
)

// The variables run-comparison.sh's placement flags set (and any script run
// alone honours).
const (
	EnvPin    = "IDPBENCH_PIN"         // --no-pin: "0" turns pinning off
	EnvDriver = "IDPBENCH_DRIVER_CPUS" // --driver-cpus LIST
	EnvServer = "IDPBENCH_SERVER_CPUS" // --server-cpus LIST
)

// minPinned is the fewest CPUs the default pins apart: below it the driver's
// quarter would leave the server too little, so they share.
const minPinned = 4

// Request is the placement a user asked for, as the variables hold it.
type Request struct {
	NoPin  bool   // --no-pin (IDPBENCH_PIN=0)
	Driver string // --driver-cpus (IDPBENCH_DRIVER_CPUS); "" when not given
	Server string // --server-cpus (IDPBENCH_SERVER_CPUS); "" when not given
}

// FromEnv is the Request the variables hold; getenv is os.Getenv or a
// stand-in. Only IDPBENCH_PIN=0 turns pinning off.
func FromEnv(getenv func(string) string) Request {
	return Request{NoPin: getenv(EnvPin) == "0", Driver: getenv(EnvDriver), Server: getenv(EnvServer)}
}

// Placement is a resolved placement.
type Placement struct {
	Mode    string // schema.PlacementPinned or schema.PlacementShared
	Driver  Set    // the load generator's and the measurement tools' CPUs; empty when shared
	Server  Set    // the product's and PostgreSQL's CPUs; empty when shared
	Reason  string // why a shared placement is shared; "" when pinned
	Allowed Set    // the CPUs this process may use
}

// Meta is p as a meta records it (schema.Placement): a shared run's sets
// are every CPU it may use.
func (p Placement) Meta() schema.Placement {
	m := schema.Placement{Mode: p.Mode, DriverCPUs: p.Driver.String(), ServerCPUs: p.Server.String(),
		HostCPUs: p.Allowed.Len(), Reason: p.Reason}
	if p.Mode == schema.PlacementShared {
		m.DriverCPUs, m.ServerCPUs = p.Allowed.String(), p.Allowed.String()
	}
	return m
}

// Default is the split of a host whose usable CPUs are allowed: about a
// quarter of them, the highest-numbered, at least one, for the driver and
// the rest for the server; false below minPinned CPUs (they share).
func Default(allowed Set) (driver, server Set, ok bool) {
	n := allowed.Len()
	if n < minPinned {
		return Set{}, Set{}, false
	}
	server, driver = allowed.Split(n - n/4)
	return driver, server, true
}

// Resolve decides the placement r asks for on a host whose usable CPUs are
// allowed: none asked, the default; --no-pin, shared; else both sets, each
// a CPU list within allowed, disjoint. Every error is the user's (a usage
// error): a malformed list, a CPU outside allowed, overlapping sets, one set
// without the other, --no-pin with sets; it names the flag and its variable.
func Resolve(r Request, allowed Set) (Placement, error) {
	n := allowed.Len()
	switch {
	case r.NoPin && r.Driver+r.Server != "":
		return Placement{}, errors.New("--no-pin (IDPBENCH_PIN=0) and --driver-cpus/--server-cpus contradict each other: give one or the other")
	case r.NoPin:
		return shared(allowed, fmt.Sprintf("pinning turned off (--no-pin, IDPBENCH_PIN=0): driver and server share %d CPUs", n)), nil
	case r.Driver == "" && r.Server == "":
		d, s, ok := Default(allowed)
		if !ok {
			return shared(allowed, fmt.Sprintf("%d CPUs: fewer than %d, driver and server share them", n, minPinned)), nil
		}
		return pinned(d, s, allowed), nil
	case r.Server == "":
		return Placement{}, errors.New("--driver-cpus (IDPBENCH_DRIVER_CPUS) needs --server-cpus (IDPBENCH_SERVER_CPUS) too: give both or neither")
	case r.Driver == "":
		return Placement{}, errors.New("--server-cpus (IDPBENCH_SERVER_CPUS) needs --driver-cpus (IDPBENCH_DRIVER_CPUS) too: give both or neither")
	}
	d, err := check("--driver-cpus", EnvDriver, r.Driver, allowed)
	if err != nil {
		return Placement{}, err
	}
	s, err := check("--server-cpus", EnvServer, r.Server, allowed)
	if err != nil {
		return Placement{}, err
	}
	if both := d.Intersect(s); !both.Empty() {
		return Placement{}, fmt.Errorf("--driver-cpus (%s) and --server-cpus (%s) overlap on CPUs %s: the sets must be disjoint", r.Driver, r.Server, both)
	}
	return pinned(d, s, allowed), nil
}

// check parses the list the flag (its variable env) gave: a CPU list
// within allowed.
func check(flag, env, list string, allowed Set) (Set, error) {
	s, err := Parse(list)
	if err != nil {
		return Set{}, fmt.Errorf(`%s (%s) "%s": not a CPU list as taskset -c takes it ("0", "1-3", "0,2")`, flag, env, list)
	}
	if c, ok := s.FirstOutside(allowed); ok {
		return Set{}, fmt.Errorf(`%s (%s) "%s": CPU %d is not one this process may use (%s)`, flag, env, list, c, allowed)
	}
	return s, nil
}

func pinned(driver, server, allowed Set) Placement {
	return Placement{Mode: schema.PlacementPinned, Driver: driver, Server: server, Allowed: allowed}
}

func shared(allowed Set, why string) Placement {
	return Placement{Mode: schema.PlacementShared, Reason: why, Allowed: allowed}
}

// Env is what every child of a run placed by p inherits, "K=V" in a fixed
// order (the run tool exports it; provision placement prints it).
func Env(p Placement) []string {
	return []string{
		EnvDriver + "=" + p.Driver.String(),
		EnvServer + "=" + p.Server.String(),
		"IDPBENCH_PLACEMENT=" + p.Mode,
		"IDPBENCH_PLACEMENT_REASON=" + p.Reason,
		"IDPBENCH_HOST_CPUS=" + strconv.Itoa(p.Allowed.Len()),
	}
}

// MetaArgs is m as provision meta's flags (--placement-mode, --driver-cpus,
// --server-cpus, --host-cpus and, when shared, --placement-reason).
func MetaArgs(m schema.Placement) []string {
	a := []string{"--placement-mode", m.Mode, "--driver-cpus", m.DriverCPUs, "--server-cpus", m.ServerCPUs,
		"--host-cpus", strconv.Itoa(m.HostCPUs)}
	if m.Reason != "" {
		a = append(a, "--placement-reason", m.Reason)
	}
	return a
}
