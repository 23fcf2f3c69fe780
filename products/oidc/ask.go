package oidc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/idpbench/idpbench/internal/product"
)

// StateConfig is the key under which the adapter's up records the
// configuration file of its run (absolute) in its state: the in-process
// answers read the same file the adapter started the IdP from.
const StateConfig = "OIDC_CONFIG"

// ask is the entry's Ask: a scenario's answer from the run's configuration
// file and discovery document (what provision oidc na, endpoint, loadargs
// and pool print), its metrics arguments and its pool's lifetime.
func ask(stateDir, scenario string) (product.Answer, error) {
	c, d, err := ReadRun(stateDir)
	if err != nil {
		return product.Answer{}, err
	}
	if why := c.NA(scenario, d); why != "" {
		return product.Answer{}, fmt.Errorf("oidc %s: %w: %s", scenario, product.ErrNA, why)
	}
	url, err := c.Endpoint(scenario, d)
	if err != nil {
		return product.Answer{}, err
	}
	a := product.Answer{Endpoint: url, Load: c.LoadArgs(scenario, d), Metrics: c.MetricsArgs(scenario), Process: c.Get("NAME")}
	if slices.Contains(a.Load, "--pool-mode") {
		p, err := c.Pool(scenario, d)
		if err != nil {
			return product.Answer{}, err
		}
		if p.Flow != "command" { // TOKEN_COMMAND runs in the adapter's shell (its pools)
			a.Pool = &product.Pool{Kind: p.Kind, Mode: p.Mode, Flow: p.Flow, Args: p.Args}
		}
	}
	if s := c.TTL(scenario); s != "" {
		if a.TTL, err = strconv.Atoi(s); err != nil || a.TTL < 1 {
			return product.Answer{}, fmt.Errorf("%s: the %s lifetime %q is not a number of seconds", c.Abs, scenario, s)
		}
	}
	return a, nil
}

// samples is the entry's Samples: the configuration's (OIDCConfig.SampleArgs),
// the process group the adapter started in STATE/pids/NAME.pid (its PRODUCT
// is the configuration's NAME).
func samples(stateDir string) ([]string, string, error) {
	c, _, err := ReadRun(stateDir)
	if err != nil {
		return nil, "", err
	}
	args, warning := c.SampleArgs(filepath.Join(stateDir, "pids", c.Get("NAME")+".pid"))
	return args, warning, nil
}

// meta is the entry's Meta: the configuration's NAME (the adapter's
// PRODUCT), then provision meta's --entry oidc, the configuration's params
// and lines, then each scenario's --scenario-na or --endpoint by the
// discovery document.
func meta(stateDir string) (string, []string, error) {
	c, d, err := ReadRun(stateDir)
	if err != nil {
		return "", nil, err
	}
	return c.Get("NAME"), append(c.MetaArgs(), c.MetaScenarioArgs(d)...), nil
}

// ReadRun reads the configuration file the adapter's up recorded in the
// state directory (StateConfig) and the discovery document it fetched
// (ReadDiscovery).
func ReadRun(stateDir string) (*OIDCConfig, OIDCDiscovery, error) {
	st, err := product.ReadState(stateDir, "oidc")
	if err != nil {
		return nil, nil, err
	}
	name := st.Get(StateConfig)
	if err := st.Err(); err != nil {
		return nil, nil, err
	}
	home, _ := os.UserHomeDir()
	c, err := ReadOIDCConfig(name, home)
	if err != nil {
		return nil, nil, err
	}
	d, err := ReadDiscovery(stateDir)
	return c, d, err
}

// ReadDiscovery reads STATE/discovery.json (provision oidc discover wrote
// it at up); nil when there is none.
func ReadDiscovery(stateDir string) (OIDCDiscovery, error) {
	name := filepath.Join(stateDir, "discovery.json")
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(b) == 0) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	d, err := ParseOIDCDiscovery(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}
