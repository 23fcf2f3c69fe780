package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/products/oidc"
)

// "provision oidc" answers the generic adapter (products/oidc/adapter) from
// its configuration file (oidc.OIDCConfig) and the discovery document
// its state holds, so the adapter only starts, orders and stops things.

const oidcHead = `Usage: provision oidc VERB --config FILE [--state DIR] [flags] [SCENARIO]

Reads and checks the generic adapter's configuration file, whole: every
problem is reported, each as FILE:LINE: what (exit 2), before any verb
answers. Then it answers the adapter, one value a line:

  check                the preflight: every problem of the file (unknown keys,
                       values a key does not take, required keys, what one key
                       needs of another, URLs not on loopback, credential files
                       missing or open to group or others), and, unless
                       START_COMMAND is to start the IdP, its discovery document
                       fetched; problems on stderr (exit 2; 1 when the file is
                       good and only the IdP did not answer), else the plan on
                       stdout: every scenario, run (how its requests and tokens
                       are had) or N/A (why)
  env                  KEY=value of every key in force: defaults applied, files
                       absolute; then CONFIG, CONFIG_DIR, IDP_PORT (a loopback
                       ISSUER's port). No value is a secret: the file names files
  discover             fetches the discovery document into STATE/discovery.json
                       (a JSON object; a different issuer is a warning)
  na SCENARIO          why SCENARIO is N/A, or nothing
  endpoint SCENARIO    the URL measured
  loadargs SCENARIO    loadstep's arguments
  pool SCENARIO        the pool's kind, mode and flow (client_credentials,
                       password: mintpool; command: TOKEN_COMMAND), then mintpool's
                       arguments but -n and -o (client_credentials: setup's check)
  tokens               a pool of TOKEN_COMMAND's output (stdin; '#' and blank lines
                       dropped) into --output (0600): --kind, --count

na, endpoint, loadargs and pool read the discovery document from --state,
when it is there. What the ladder measures of a scenario and the sampler's
arguments and the meta's are read in-process from the file up recorded
(products/oidc: Product.Answer, SampleArgs, MetaArgs). The file: KEY=value lines, read and never evaluated: one optional pair
of surrounding quotes, no expansion, no inline comments, # comment lines, a
later line wins, an empty value is unset; a file may start with ~/ or be
relative to the file's directory. Repeatable: NOTE=text, DEVIATION=what | why,
CONFIG_SOURCE=what | url, SETTING=key=value, LOGIN_FIELD=name=value (sent
with the login form; it travels in argv, so no secret). Every URL the tools
send requests to must be on loopback (127.0.0.0/8, [::1], localhost; a name is
never looked up): every IdP is measured on this machine, so that no network
adds its latency and variance to one IdP's numbers. The template with every
key: examples/oidc/myidp.env.
The other keys (* required):
%s
Flags:
`

const oidcTail = `
Exit status: 0 ok, 1 a failure (check: the IdP did not answer), 2 usage error or
a bad configuration file.

Examples:
  provision oidc check --config examples/oidc/myidp.env
  provision oidc endpoint --config examples/oidc/refop.env --state "$state" userinfo
`

// oidcFlags are provision oidc's flags (each verb uses some).
type oidcFlags struct {
	config, state, pidfile, kind, out string
	count                             int
}

// oidcVerbs maps a verb to whether it takes a SCENARIO and what it does.
var oidcVerbs = map[string]struct {
	scenario bool
	run      func(ctx context.Context, c *oidc.OIDCConfig, f oidcFlags, scenario string, e env) error
}{
	"env": {false, func(_ context.Context, c *oidc.OIDCConfig, _ oidcFlags, _ string, e env) error {
		return say(e, c.Env())
	}},
	"discover": {false, oidcDiscover},
	"na":       {true, oidcNA},
	"endpoint": {true, oidcEndpoint},
	"loadargs": {true, oidcLoadArgs},
	"pool":     {true, oidcPool},
	"tokens":   {false, oidcTokens},
}

func oidcKeyHelp() string {
	var b strings.Builder
	for _, k := range oidc.OIDCKeys {
		b.WriteString("  " + k.Name)
		if k.Required {
			b.WriteString(" *")
		}
		if k.OneOf != nil {
			b.WriteString("=" + strings.Join(k.OneOf, "|"))
		}
		if k.Default != "" {
			b.WriteString(" (default " + k.Default + ")")
		}
		b.WriteString("\n      " + k.Doc + "\n")
	}
	return b.String()
}

// runOIDC is "provision oidc".
func runOIDC(ctx context.Context, args []string, e env) error {
	var f oidcFlags
	fs := cli.NewFlagSet("oidc")
	fs.StringVar(&f.config, "config", "", "the configuration file (the adapter's IDPBENCH_OIDC_CONFIG); required")
	fs.StringVar(&f.state, "state", "", "the adapter's state directory: its discovery.json")
	fs.StringVar(&f.pidfile, "pidfile", "", "sampleargs: the pidfile of the process group the adapter started")
	fs.StringVar(&f.kind, "kind", "", "tokens: access_token or refresh_token")
	fs.IntVar(&f.count, "count", 0, "tokens: how many were asked for (fewer is a warning), count")
	fs.StringVarP(&f.out, "output", "o", "", "tokens: the pool file, written atomically (0600)")
	if err := parse(fs, args, fmt.Sprintf(oidcHead, oidcKeyHelp()), oidcTail, e); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("a verb is required: check, env, discover, na, endpoint, loadargs, pool, tokens")
	}
	home, _ := os.UserHomeDir()
	if fs.Arg(0) == "check" {
		if fs.NArg() != 1 || f.config == "" {
			return cli.Usagef("check wants --config FILE and no argument")
		}
		return oidcCheck(ctx, f.config, home, e)
	}
	verb, ok := oidcVerbs[fs.Arg(0)]
	if !ok {
		return cli.Usagef("unknown verb %q (provision oidc --help lists them)", fs.Arg(0))
	}
	if want := map[bool]int{false: 1, true: 2}[verb.scenario]; fs.NArg() != want {
		return cli.Usagef("%s wants %d argument(s) after the verb, got %d", fs.Arg(0), want-1, fs.NArg()-1)
	}
	if f.config == "" {
		return cli.Usagef("--config FILE is required")
	}
	c, err := oidc.ReadOIDCConfig(f.config, home)
	if err != nil {
		return cli.CodeError{Code: cli.ExitUsage, Err: err} // a bad file: every problem, each at its line (no --help hint)
	}
	return verb.run(ctx, c, f, fs.Arg(1), e)
}

func say(e env, s string) error {
	_, err := io.WriteString(e.Stdout, s)
	return err
}

func printLines(e env, l []string) error {
	if len(l) == 0 {
		return nil
	}
	return say(e, strings.Join(l, "\n")+"\n")
}

// lines adapts a method that returns arguments for a scenario.
func lines(m func(*oidc.OIDCConfig, string) []string) func(context.Context, *oidc.OIDCConfig, oidcFlags, string, env) error {
	return func(_ context.Context, c *oidc.OIDCConfig, _ oidcFlags, s string, e env) error {
		return printLines(e, m(c, s))
	}
}

// discovery reads STATE/discovery.json; nil when there is none.
func discovery(f oidcFlags) (oidc.OIDCDiscovery, error) {
	if f.state == "" {
		return nil, nil
	}
	return oidc.ReadDiscovery(f.state)
}

func oidcNA(_ context.Context, c *oidc.OIDCConfig, f oidcFlags, s string, e env) error {
	d, err := discovery(f)
	if err != nil {
		return err
	}
	if why := c.NA(s, d); why != "" {
		return say(e, why+"\n")
	}
	return nil
}

func oidcLoadArgs(_ context.Context, c *oidc.OIDCConfig, f oidcFlags, s string, e env) error {
	d, err := discovery(f)
	if err != nil {
		return err
	}
	return printLines(e, c.LoadArgs(s, d))
}

func oidcEndpoint(_ context.Context, c *oidc.OIDCConfig, f oidcFlags, s string, e env) error {
	d, err := discovery(f)
	if err != nil {
		return err
	}
	url, err := c.Endpoint(s, d)
	if err != nil {
		return err
	}
	return say(e, url+"\n")
}

func oidcPool(_ context.Context, c *oidc.OIDCConfig, f oidcFlags, s string, e env) error {
	d, err := discovery(f)
	if err != nil {
		return err
	}
	p, err := c.Pool(s, d)
	if err != nil {
		return err
	}
	return printLines(e, append([]string{p.Kind, p.Mode, p.Flow}, p.Args...))
}

// oidcTokens writes TOKEN_COMMAND's tokens (stdin) into a pool file.
func oidcTokens(_ context.Context, c *oidc.OIDCConfig, f oidcFlags, _ string, e env) error {
	if f.kind != "access_token" && f.kind != "refresh_token" || f.count < 1 || f.out == "" {
		return cli.Usagef("tokens needs --kind access_token|refresh_token, --count N (>= 1) and --output FILE")
	}
	toks, err := oidc.ParseOIDCTokens(e.Stdin)
	if err != nil {
		return err
	}
	if len(toks) < f.count {
		fmt.Fprintf(e.Stderr, "provision oidc: warning: TOKEN_COMMAND printed %d tokens, %d were asked for\n", len(toks), f.count)
	}
	h := map[string]string{"kind": f.kind, "product": c.Get("NAME"), "flow": "command",
		"minted": time.Now().UTC().Format(time.RFC3339)}
	return pool.WriteFile(f.out, h, toks, e.Stdout)
}

// oidcCheck is the preflight (verb check): every problem of the file, at
// its line, with the discovery document's answer unless START_COMMAND is
// to start the IdP; none: the plan.
func oidcCheck(ctx context.Context, name, home string, e env) error {
	c, probs, err := oidc.LoadOIDCConfig(name, home)
	if err != nil {
		return cli.CodeError{Code: cli.ExitUsage, Err: err}
	}
	var d oidc.OIDCDiscovery
	url, seen := c.Get("DISCOVERY_URL"), "discovery document not read"
	switch {
	case c.Get("START_COMMAND") != "":
		seen = "discovery document not read: START_COMMAND starts the IdP, so the scenarios it decides are settled at up"
	case oidc.LoopbackURLProblem(url) == "":
		if d, err = fetchDiscovery(ctx, c, e); err != nil {
			probs.List = append(probs.List, oidc.OIDCProblem{Line: c.Line("DISCOVERY_URL"), Msg: err.Error(), Runtime: true})
		} else {
			seen = "discovery document " + url
		}
	}
	if n := len(probs.List); n > 0 {
		for _, l := range probs.Lines() {
			fmt.Fprintln(e.Stderr, l)
		}
		err := fmt.Errorf("check: %d problem(s) in %s (each above, at its line); the first: %s", n, name, probs.Lines()[0])
		if probs.Runtime() {
			return err
		}
		return cli.CodeError{Code: cli.ExitUsage, Err: err}
	}
	return say(e, oidc.PlanText(c, c.Plan(d), seen))
}

// fetchDiscovery fetches and parses the discovery document; an issuer
// other than the file's is a warning.
func fetchDiscovery(ctx context.Context, c *oidc.OIDCConfig, e env) (oidc.OIDCDiscovery, error) {
	url := c.Get("DISCOVERY_URL")
	b, err := fetch(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("discovery document %s: no answer: %w (is the IdP up? without START_COMMAND it must be running)", url, err)
	}
	return fetchDiscoveryBody(c, b, e)
}

// fetchDiscoveryBody parses a discovery document; an issuer other than
// the file's is a warning.
func fetchDiscoveryBody(c *oidc.OIDCConfig, b []byte, e env) (oidc.OIDCDiscovery, error) {
	d, err := oidc.ParseOIDCDiscovery(b)
	if err != nil {
		return nil, fmt.Errorf("discovery document %s: %w", c.Get("DISCOVERY_URL"), err)
	}
	if got := d.String("issuer"); got != c.Get("ISSUER") {
		fmt.Fprintf(e.Stderr, "provision oidc: warning: discovery says issuer %q, the configuration %q\n", got, c.Get("ISSUER"))
	}
	return d, nil
}

// oidcDiscover fetches the discovery document into STATE/discovery.json.
func oidcDiscover(ctx context.Context, c *oidc.OIDCConfig, f oidcFlags, _ string, e env) error {
	if f.state == "" {
		return cli.Usagef("discover needs --state DIR")
	}
	b, err := fetch(ctx, c.Get("DISCOVERY_URL"))
	if err != nil {
		return fmt.Errorf("discovery document %s: request failed: %w", c.Get("DISCOVERY_URL"), err)
	}
	if _, err := fetchDiscoveryBody(c, b, e); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(f.state, "discovery.json"), 0o644, b, e.Stdout)
}

// fetch GETs url within 10 s; anything but a 2xx is an error, and so is a
// redirect (not followed, as curl does not).
func fetch(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 8<<20))
}
