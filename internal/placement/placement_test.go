package placement

import (
	"slices"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestDefault: a quarter of the CPUs, the highest-numbered, at least one,
// for the driver from 4 CPUs on; none below.
func TestDefault(t *testing.T) {
	for _, tt := range []struct {
		allowed, driver, server string // driver "": shared
	}{
		{"0-7", "6-7", "0-5"},
		{"0-3", "3", "0-2"},
		{"0-4", "4", "0-3"},
		{"0-15", "12-15", "0-11"},
		{"0-1,4-7", "7", "0-1,4-6"}, // 6 CPUs: a quarter rounds down
		{"0-5,7,9", "7,9", "0-5"},   // the highest-numbered, across ranges
		{"2,4,6,8", "8", "2,4,6"},
		{"0-2", "", ""},
		{"5", "", ""},
	} {
		d, s, ok := Default(set(t, tt.allowed))
		if ok != (tt.driver != "") || d.String() != tt.driver || s.String() != tt.server {
			t.Errorf("Default(%s) = %q, %q, %v; want %q, %q", tt.allowed, d, s, ok, tt.driver, tt.server)
		}
	}
}

// TestResolve: what each request resolves to, and each refusal's message,
// word for word: the scripts' users read them (they name the flag and its
// variable).
func TestResolve(t *testing.T) {
	const pinned, shared = schema.PlacementPinned, schema.PlacementShared
	for _, tt := range []struct {
		name    string
		allowed string
		req     Request
		mode    string // "": refused with err
		driver  string
		server  string
		reason  string
		err     string
	}{
		{"default on 8", "0-7", Request{}, pinned, "6-7", "0-5", "", ""},
		{"default on 4", "0-3", Request{}, pinned, "3", "0-2", "", ""},
		{"default on 3: shared", "0-2", Request{}, shared, "", "", "3 CPUs: fewer than 4, driver and server share them", ""},
		{"default on 1: shared", "0", Request{}, shared, "", "", "1 CPUs: fewer than 4, driver and server share them", ""},
		{"no pin", "0-7", Request{NoPin: true}, shared, "", "", "pinning turned off (--no-pin, IDPBENCH_PIN=0): driver and server share 8 CPUs", ""},
		{"given", "0-1", Request{Driver: "1", Server: "0"}, pinned, "1", "0", "", ""},
		{"given, written loosely", "0-7", Request{Driver: "7,6", Server: "0,1,2-3"}, pinned, "6-7", "0-3", "", ""},
		{"given on 2 of 8", "0-7", Request{Driver: "5", Server: "2"}, pinned, "5", "2", "", ""},

		{"no pin with sets", "0-7", Request{NoPin: true, Driver: "1", Server: "0"}, "", "", "", "",
			"--no-pin (IDPBENCH_PIN=0) and --driver-cpus/--server-cpus contradict each other: give one or the other"},
		{"no pin with one set", "0-7", Request{NoPin: true, Server: "0"}, "", "", "", "",
			"--no-pin (IDPBENCH_PIN=0) and --driver-cpus/--server-cpus contradict each other: give one or the other"},
		{"driver alone", "0-7", Request{Driver: "1"}, "", "", "", "",
			"--driver-cpus (IDPBENCH_DRIVER_CPUS) needs --server-cpus (IDPBENCH_SERVER_CPUS) too: give both or neither"},
		{"server alone", "0-7", Request{Server: "0"}, "", "", "", "",
			"--server-cpus (IDPBENCH_SERVER_CPUS) needs --driver-cpus (IDPBENCH_DRIVER_CPUS) too: give both or neither"},
		{"malformed driver", "0-1", Request{Driver: "1-0", Server: "0"}, "", "", "", "",
			`--driver-cpus (IDPBENCH_DRIVER_CPUS) "1-0": not a CPU list as taskset -c takes it ("0", "1-3", "0,2")`},
		{"malformed server", "0-1", Request{Driver: "1", Server: "zero"}, "", "", "", "",
			`--server-cpus (IDPBENCH_SERVER_CPUS) "zero": not a CPU list as taskset -c takes it ("0", "1-3", "0,2")`},
		{"both malformed: the driver's first", "0-1", Request{Driver: "x", Server: "y"}, "", "", "", "",
			`--driver-cpus (IDPBENCH_DRIVER_CPUS) "x": not a CPU list as taskset -c takes it ("0", "1-3", "0,2")`},
		{"driver outside", "0-1", Request{Driver: "2", Server: "0"}, "", "", "", "",
			`--driver-cpus (IDPBENCH_DRIVER_CPUS) "2": CPU 2 is not one this process may use (0-1)`},
		{"server outside: the lowest such CPU", "0-1,4", Request{Driver: "1", Server: "0,9,3-4"}, "", "", "", "",
			`--server-cpus (IDPBENCH_SERVER_CPUS) "0,9,3-4": CPU 3 is not one this process may use (0-1,4)`},
		{"a huge range outside", "0-1", Request{Driver: "1-4000000000", Server: "0"}, "", "", "", "",
			`--driver-cpus (IDPBENCH_DRIVER_CPUS) "1-4000000000": CPU 2 is not one this process may use (0-1)`},
		{"the driver's list checked whole before the server's", "0-1", Request{Driver: "7", Server: "-"}, "", "", "", "",
			`--driver-cpus (IDPBENCH_DRIVER_CPUS) "7": CPU 7 is not one this process may use (0-1)`},
		{"overlap", "0-7", Request{Driver: "1,6-7", Server: "0-1,5-6"}, "", "", "", "",
			"--driver-cpus (1,6-7) and --server-cpus (0-1,5-6) overlap on CPUs 1,6: the sets must be disjoint"},
		{"same set", "0-1", Request{Driver: "1", Server: "1"}, "", "", "", "",
			"--driver-cpus (1) and --server-cpus (1) overlap on CPUs 1: the sets must be disjoint"},
	} {
		p, err := Resolve(tt.req, set(t, tt.allowed))
		if tt.mode == "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if p.Mode != tt.mode || p.Driver.String() != tt.driver || p.Server.String() != tt.server || p.Reason != tt.reason || p.Allowed.String() != tt.allowed {
			t.Errorf("%s: %s driver %q server %q reason %q allowed %q; want %s %q %q %q %q",
				tt.name, p.Mode, p.Driver, p.Server, p.Reason, p.Allowed, tt.mode, tt.driver, tt.server, tt.reason, tt.allowed)
		}
	}
}

// TestResolveIdempotent: what Resolve answers, given back as the request
// (the run tool exports it to its children, which may resolve it
// again), answers the same.
func TestResolveIdempotent(t *testing.T) {
	for _, allowed := range []string{"0", "0-2", "0-3", "0-7", "0-1,4-7"} {
		for _, req := range []Request{{}, {NoPin: true}} {
			first, err := Resolve(req, set(t, allowed))
			if err != nil {
				t.Fatal(err)
			}
			again, err := Resolve(Request{NoPin: req.NoPin, Driver: first.Driver.String(), Server: first.Server.String()}, first.Allowed)
			if err != nil || again.Meta() != first.Meta() {
				t.Errorf("on %s, %+v: again %+v, %v; want %+v", allowed, req, again.Meta(), err, first.Meta())
			}
		}
	}
}

func TestMeta(t *testing.T) {
	for _, tt := range []struct {
		name    string
		allowed string
		req     Request
		want    schema.Placement
	}{
		{"pinned", "0-3", Request{}, schema.Placement{Mode: schema.PlacementPinned, DriverCPUs: "3", ServerCPUs: "0-2", HostCPUs: 4}},
		{"shared: every CPU on both sides", "0-1", Request{}, schema.Placement{Mode: schema.PlacementShared, DriverCPUs: "0-1", ServerCPUs: "0-1", HostCPUs: 2,
			Reason: "2 CPUs: fewer than 4, driver and server share them"}},
	} {
		p, err := Resolve(tt.req, set(t, tt.allowed))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Meta(); got != tt.want {
			t.Errorf("%s: Meta() = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want Request
	}{
		{nil, Request{}},
		{map[string]string{EnvPin: "0"}, Request{NoPin: true}},
		{map[string]string{EnvPin: "1"}, Request{}},
		{map[string]string{EnvPin: "no"}, Request{}}, // only 0 turns it off, as the scripts read it
		{map[string]string{EnvDriver: "3", EnvServer: "0-2"}, Request{Driver: "3", Server: "0-2"}},
	} {
		if got := FromEnv(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("FromEnv(%v) = %+v, want %+v", tt.env, got, tt.want)
		}
	}
}

// TestEnv: what every child inherits, for a pinned and a shared
// placement.
func TestEnv(t *testing.T) {
	all, _ := Parse("0-3")
	p, err := Resolve(Request{}, all)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"IDPBENCH_DRIVER_CPUS=3", "IDPBENCH_SERVER_CPUS=0-2", "IDPBENCH_PLACEMENT=pinned", "IDPBENCH_PLACEMENT_REASON=", "IDPBENCH_HOST_CPUS=4"}
	if got := Env(p); !slices.Equal(got, want) {
		t.Errorf("pinned: got %q, want %q", got, want)
	}
	p, _ = Resolve(Request{NoPin: true}, all)
	want = []string{"IDPBENCH_DRIVER_CPUS=", "IDPBENCH_SERVER_CPUS=", "IDPBENCH_PLACEMENT=shared",
		"IDPBENCH_PLACEMENT_REASON=pinning turned off (--no-pin, IDPBENCH_PIN=0): driver and server share 4 CPUs", "IDPBENCH_HOST_CPUS=4"}
	if got := Env(p); !slices.Equal(got, want) {
		t.Errorf("shared: got %q, want %q", got, want)
	}
}
