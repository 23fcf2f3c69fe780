// Command readback reads a product's configuration back from the running
// product and its database — version, password and secret hashing, token
// lifespans, refresh-token rotation, heap, database pool — and prints it as
// an "idpbench.facts/v1" record, which the run scripts merge into the
// product's meta. A fact nothing running tells is marked "documented, not
// read" with its source.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/readback"
	"github.com/idpbench/idpbench/internal/sample"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/products"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageHead is the help's head; %s are the products readback reads and,
// one a line, what each reads (its entry's ReadFactsFrom).
const usageHead = `Usage: readback --product %s [sources] [-o FILE]
       readback --product NAME --listeners PIDFILE [-o FILE]

Reads from the running product what is in force:
%sand, with --token-url, the access-token lifespan of a client_credentials
grant (expires_in). Every product: the connections it holds open to its
database (pg_stat_activity). With --want-version the product must report
that version. A source that cannot be read is an error naming it; nothing is
written then. Secrets come from --client-secret-file or IDPBENCH_CLIENT_SECRET,
never argv, and are never printed.

With --listeners, readback reads only the listening TCP sockets (IPv4 and
IPv6, /proc/net/tcp and tcp6) of the process group led by the pid in PIDFILE
(coldstart's --pidfile) into the fact "listeners", and fails naming every
socket bound beyond loopback (127.0.0.0/8, ::1, ::ffff:127.x are loopback),
or when the group listens on nothing.

Flags:
`

const usageTail = `
Exit codes: 0 every fact read and written, 1 a source could not be read or a
socket listens beyond loopback (nothing written), 2 usage error, 130
interrupted.

Example (Keycloak after setup, into the run's meta):
  readback --product keycloak --want-version 26.7.3 \
    --postgres 'postgres://idpbench@127.0.0.1:5432/keycloak?sslmode=disable' \
    --realm bench --metrics http://127.0.0.1:9000/metrics \
    --token-url http://127.0.0.1:8080/realms/bench/protocol/openid-connect/token \
    --client-id bench-svc --client-secret-file state/secrets/bench-svc -o state/facts.json &&
  jq -r '.facts[] | "\(.name): \(.value) [\(.source)]"' state/facts.json

Example (after a start: does the product listen on loopback only?):
  readback --product hydra --listeners state/pids/hydra.pid -o state/listeners.json
`

type flags struct {
	cfg                      readback.Config
	metrics, admin, tokenURL string
	secretFile, out          string
	listeners                string
	version                  bool
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("readback", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	c := &f.cfg
	fs.StringVar(&c.Product, "product", "", "product to read: "+strings.Join(reading(), ", ")+" (required)")
	fs.StringVar(&c.Postgres, "postgres", "", "DSN of the product's own database")
	fs.StringVar(&f.metrics, "metrics", "", "URL of the product's Prometheus metrics (Keycloak: management /metrics)")
	fs.StringVar(&f.admin, "admin-url", "", "Hydra's admin API base URL")
	fs.StringVar(&c.Binary, "binary", "", "the product's executable (refop: its Go build info)")
	fs.StringVar(&c.Realm, "realm", "", "Keycloak: the benchmark realm")
	fs.StringVar(&f.tokenURL, "token-url", "", "token endpoint: read the access-token lifespan from a client_credentials grant")
	fs.StringVar(&c.ClientID, "client-id", "", "client of that grant (Hydra: also whose secret hash is read)")
	fs.StringVar(&f.secretFile, "client-secret-file", "", "file holding its secret (default: env IDPBENCH_CLIENT_SECRET)")
	fs.StringVar(&c.Scope, "scope", "", "scope of that grant")
	fs.StringVar(&f.listeners, "listeners", "", "pidfile of the product's process group leader: read only its TCP listeners; one beyond loopback is an error")
	fs.StringVar(&c.WantVersion, "want-version", "", "fail unless the product reports this version")
	fs.DurationVar(&c.Timeout, "timeout", 10*time.Second, "timeout per request or query")
	fs.StringVarP(&f.out, "output", "o", "-", "output file (- = stdout), written only when every fact was read")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	return fs
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f flags
	fs := newFlagSet(&f)
	if code, done := (cli.Help{Tool: "readback", Head: head(), Tail: usageTail}).Parse(fs, args, &f.version, stdout, stderr); done {
		return code
	}
	return cli.Fail(stderr, "readback", f.run(ctx, fs, stdout, stderr))
}

func (f *flags) run(ctx context.Context, fs *pflag.FlagSet, stdout, stderr io.Writer) error {
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q (readback takes flags only)", fs.Arg(0))
	}
	var err error
	for _, u := range []struct {
		flag, value string
		dst         **url.URL
	}{{"metrics", f.metrics, &f.cfg.Metrics}, {"admin-url", f.admin, &f.cfg.AdminURL}, {"token-url", f.tokenURL, &f.cfg.TokenURL}} {
		if *u.dst, err = parseURL(u.flag, u.value); err != nil {
			return err
		}
	}
	if f.listeners != "" {
		// coldstart's product leads its own group: its pid is the group's id.
		if f.cfg.Group, err = sample.ReadPidfile(f.listeners); err != nil {
			return cli.UsageError{Err: fmt.Errorf("--listeners: %w", err)}
		}
	}
	if f.cfg.ClientSecret, err = cli.ReadSecret("client-secret-file", f.secretFile, "IDPBENCH_CLIENT_SECRET"); err != nil {
		return cli.UsageError{Err: err}
	}
	if f.cfg.Group == 0 {
		p, _ := products.Lookup(f.cfg.Product)
		if f.cfg.Reads = p.ReadFacts; f.cfg.Reads == nil {
			return cli.Usagef("--product: %q is not one readback knows (%s)", f.cfg.Product, strings.Join(reading(), ", "))
		}
	}
	if err := f.cfg.Validate(); err != nil {
		return err
	}
	facts, err := readback.Read(ctx, f.cfg)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(facts, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.out, 0o644, append(b, '\n'), stdout); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "readback: %s\n", summary(facts))
	return nil
}

// summary is the line readback logs: the sockets of a --listeners read,
// else the names of the facts read from the running product.
func summary(facts *schema.Facts) string {
	var read []string
	for _, f := range facts.Facts {
		if f.Name == "listeners" {
			return fmt.Sprintf("%s listens on loopback only: %s", facts.Product, f.Value)
		}
		if f.Source == schema.FactRead {
			read = append(read, f.Name)
		}
	}
	return fmt.Sprintf("read from the running %s: %s", facts.Product, strings.Join(read, ", "))
}

// reading are the products whose facts readback reads (their entry's
// ReadFacts).
func reading() []string {
	return products.NamesWith(func(p product.Product) bool { return p.ReadFacts != nil })
}

// head is the help's head with what each product's entry reads.
func head() string {
	var from strings.Builder
	for _, name := range reading() {
		p, _ := products.Lookup(name)
		fmt.Fprintf(&from, "  %-9s %s\n", name, p.ReadFactsFrom)
	}
	return fmt.Sprintf(usageHead, strings.Join(reading(), "|"), from.String())
}

// parseURL parses an optional absolute http(s) URL flag.
func parseURL(flag, s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cli.Usagef("--%s: %q is not an http(s) URL", flag, s)
	}
	return u, nil
}
