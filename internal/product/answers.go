package product

import (
	"strconv"

	"github.com/idpbench/idpbench/internal/schema"
)

// Answers are what a product's adapter asks of its entry about one run
// ("provision args"), each a function of the run's state so that it needs
// only what it reads: endpoints are known after up, a pool's plan after
// setup. The generic adapter has none: it answers from its configuration
// file ("provision oidc").
type Answers struct {
	// Table is the scenario table: the URL, the loadstep arguments, the
	// pool and its lifetime of every scenario the product runs.
	Table func(st *State) Table
	// Readback is readback's arguments after setup (--product and
	// --want-version are the adapter's); nil, or none: nothing is read back.
	Readback func(st *State) []string
	// Setup is the arguments of "provision PRODUCT", which provisions the
	// product through its API; nil: the adapter provisions it itself.
	Setup func(st *State) []string
	// Config is the configuration file the adapter writes before the first
	// start; nil: none.
	Config func(st *State) string
	// Start is the start command's arguments after the program; nil: the
	// adapter's own.
	Start func(st *State) []string
}

// Endpoints returns the URL measured of every scenario p runs, from its
// scenario table on st (each what "provision args endpoint" answers); nil
// for a product without answers (the generic adapter passes its own). An
// error is a value up has not recorded.
func (p Product) Endpoints(st *State) (map[string]string, error) {
	if p.Answers == nil {
		return nil, nil
	}
	t := p.Answers.Table(st)
	if err := st.Err(); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range Scenarios() {
		if r, ok := t.Scenarios[s]; ok && p.NA[s] == "" && r.Endpoint != "" {
			out[s] = r.Endpoint
		}
	}
	return out, nil
}

// Table is a product's scenario table for one run.
type Table struct {
	// Scenarios has a row for every scenario the product runs and none for
	// the scenarios it cannot (Product.NA).
	Scenarios map[string]Scenario
	// Metrics is loadstep's --server-metrics arguments, the same for every
	// scenario; nil: the product exposes no metrics.
	Metrics []string
	// Pools are the product's own pools beyond its scenarios', by name; their
	// Args hold the size (-n), which is the product's, not the ladder's.
	Pools map[string]Pool
}

// Scenario is one row of a product's table.
type Scenario struct {
	Endpoint string   // the URL measured
	Load     []string // loadstep's arguments beyond the ladder's; a pool-fed scenario's --pool-mode
	Pool     *Pool    // how its pool is minted; nil: it takes none
	TTL      int      // how long the pool's credentials stay valid, s; 0: unknown or unbounded
	// Before names the product's own pools (Table.Pools) Load reads, which
	// the ladder mints before a window when missing or stale (Answer.Before).
	Before []string
}

// Pool is how a pool is minted (mintpool) and recorded (provision pool,
// STATE/pools.jsonl).
type Pool struct {
	Kind string   // what it holds: access_token | refresh_token | assertion
	Mode string   // how loadstep uses it (--pool-mode): reuse | consume | chain
	Flow string   // how it is minted, as recorded: mintpool's --flow
	Args []string // mintpool's arguments but -n and -o
	// MaxAgeS: a product's own pool (Table.Pools) this old is minted again.
	MaxAgeS int
}

// TTLText is TTL as the adapter's ttl prints it: seconds, or nothing.
func (s Scenario) TTLText() string {
	if s.TTL == 0 {
		return ""
	}
	return strconv.Itoa(s.TTL)
}

// basicAuth is a client authenticating with client_secret_basic, its
// secret in a file.
func BasicAuth(id, secretFile string) []string {
	return []string{"--client-id", id, "--client-secret-file", secretFile, "--client-auth", "basic"}
}

// Reuse and Chain are the --pool-mode arguments.
var (
	Reuse = []string{"--pool-mode", "reuse"}
	Chain = []string{"--pool-mode", "chain"}
)

// Scenarios are the scenarios an adapter is asked about, in report order:
// the benchmark's (schema.Scenarios) but the custom request.
func Scenarios() []string {
	var n []string
	for _, s := range schema.Scenarios {
		if s.Name != schema.ScenarioRequest {
			n = append(n, s.Name)
		}
	}
	return n
}
