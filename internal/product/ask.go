package product

import (
	"errors"
	"fmt"
)

// ErrNA is a scenario the product cannot run; the error wrapping it says why.
var ErrNA = errors.New("N/A")

// Answer is what a ladder measures of one scenario in one run, read
// in-process from the product's entry and the run's state directory (no
// adapter is asked): the tools that drive a running product (ladder,
// gcjitter) take it through an Asker.
type Answer struct {
	Endpoint string   // the URL measured
	Load     []string // loadstep's arguments beyond the ladder's; a pool-fed scenario's --pool-mode
	Metrics  []string // loadstep's --server-metrics arguments; nil: none
	TTL      int      // how long the pool's credentials stay valid, s; 0: unknown or unbounded
	// Pool is how a pool-fed scenario's pool is minted (mintpool with its
	// Args, -n and -o) and recorded (RecordPool); nil: no pool, or one only
	// the adapter can mint (its pools entry point: the generic adapter's
	// TOKEN_COMMAND).
	Pool *Pool
	// Fresh: the adapter's fresh runs before every window (Product.Fresh).
	Fresh bool
	// Process names the process group the adapter started,
	// STATE/pids/PROCESS.pid (the adapter's PRODUCT); "": the product's
	// name. The generic adapter's is its configuration's NAME.
	Process string
	// Before are the product's own pools Load names, each minted (mintpool)
	// before a window when it is missing or older than its MaxAgeS.
	Before []OwnPool
}

// OwnPool is one of a product's own pools (Table.Pools) as a run needs it.
type OwnPool struct {
	Name    string
	Path    string   // STATE/pools/NAME.pool, where Load names it
	Args    []string // mintpool's arguments but -o (its size is the product's)
	MaxAgeS int      // minted again when at least this old
}

// Asker answers a scenario of a run from the run's state directory; an
// error wrapping ErrNA when the product cannot run it.
type Asker func(stateDir, scenario string) (Answer, error)

// Answer answers scenario of the run whose state is stateDir: from the
// entry's Ask when it has one (the generic adapter's configuration file),
// else from its scenario table (Answers) on the state, which must hold
// what up and setup recorded. A scenario the entry declares N/A (NA), or
// has no row for, is ErrNA with the reason.
func (p Product) Answer(stateDir, scenario string) (Answer, error) {
	if why := p.NA[scenario]; why != "" {
		return Answer{}, fmt.Errorf("%s %s: %w: %s", p.Name, scenario, ErrNA, why)
	}
	if p.Ask != nil {
		return p.Ask(stateDir, scenario)
	}
	if p.Answers == nil {
		return Answer{}, fmt.Errorf("%s has no answers in its entry (Answers or Ask)", p.Name)
	}
	st, err := ReadState(stateDir, p.Name)
	if err != nil {
		return Answer{}, err
	}
	t := p.Answers.Table(st)
	if err := st.SetupErr(); err != nil {
		return Answer{}, err
	}
	r, ok := t.Scenarios[scenario]
	if !ok {
		return Answer{}, fmt.Errorf("%s %s: %w: no row in its scenario table", p.Name, scenario, ErrNA)
	}
	a := Answer{Endpoint: r.Endpoint, Load: r.Load, Metrics: t.Metrics, TTL: r.TTL, Pool: r.Pool, Fresh: p.Fresh}
	for _, name := range r.Before {
		own, ok := t.Pools[name]
		if !ok {
			return Answer{}, fmt.Errorf("%s %s: its table names no pool %q", p.Name, scenario, name)
		}
		a.Before = append(a.Before, OwnPool{Name: name, Path: st.Path("pools", name+".pool"), Args: own.Args, MaxAgeS: own.MaxAgeS})
	}
	return a, nil
}

// Asker is p's Answer as an Asker.
func (p Product) Asker() Asker { return p.Answer }

// SampleArgs are the sampler's arguments for the product of the run whose
// state is stateDir, and a warning for the log ("" for none): the entry's
// Samples when it has them (the generic adapter's configuration), else
// the state's (State.SampleArgs).
func (p Product) SampleArgs(stateDir string) (args []string, warning string, err error) {
	if p.Samples != nil {
		return p.Samples(stateDir)
	}
	st, err := ReadState(stateDir, p.Name)
	if err != nil {
		return nil, "", err
	}
	args = st.SampleArgs()
	return args, "", st.Err()
}

// MetaArgs are, for the run whose state is stateDir, the name its meta
// records (provision meta's --product: the entry's name, or the generic
// adapter's configuration's NAME) and provision meta's arguments beyond
// --product, --product-version and --state: the entry's Meta when it has
// one, else --param K=V of each of its MetaParams (none without).
func (p Product) MetaArgs(stateDir string) (name string, args []string, err error) {
	if p.Meta != nil {
		return p.Meta(stateDir)
	}
	if p.MetaParams == nil {
		return p.Name, nil, nil
	}
	st, err := ReadState(stateDir, p.Name)
	if err != nil {
		return "", nil, err
	}
	for _, kv := range p.MetaParams(st) {
		args = append(args, "--param", kv)
	}
	return p.Name, args, nil
}
