// Package mint mints credential pools through an identity provider's own API
// (client_credentials, password, Hydra's headless login, Zitadel's Session
// API login) or signs JWT assertions locally (jwt-bearer grants,
// private_key_jwt client assertions), and writes them as a pool file for
// loadstep. Nothing is written unless every credential was minted.
package mint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idpbench/idpbench/internal/pool"
)

// mintFunc mints credential number i using a worker's reusable state.
type mintFunc func(ctx context.Context, w *worker, i int) (credential, error)

// Run mints cfg.N credentials with cfg.Parallel workers and writes the pool.
// Progress and the summary go to stderr; the pool goes to cfg.Output ("-" = stdout).
// A cancelled ctx returns an error wrapping context.Canceled and writes nothing.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	kind := poolKind(cfg.Flow, cfg.Emit)
	mint, err := buildFlow(ctx, &cfg)
	if err != nil {
		return err
	}
	if err := checkOutputDir(cfg.Output); err != nil {
		return err
	}
	start := time.Now()
	r := newRun(&cfg, mint)
	creds, err := r.all(ctx, stderr)
	if err != nil {
		return fmt.Errorf("minting %s (flow %s): %w", kind, cfg.Flow, err)
	}
	elapsed := time.Since(start)
	exp := formatExpiry(earliest(creds))
	header := map[string]string{
		"kind": kind, "product": cfg.Product, "flow": cfg.Flow,
		"minted": start.UTC().Format(time.RFC3339), "expires": exp,
	}
	if err := pool.WriteFile(cfg.Output, header, values(creds), stdout); err != nil {
		return err
	}
	r.warnRetries(stderr)
	fmt.Fprintf(stderr, "mintpool: minted %d %s in %s (%.0f/s), expires %s\n",
		len(creds), kind, roundDuration(elapsed), float64(len(creds))/elapsed.Seconds(), exp)
	return nil
}

// poolKind is the header's kind: the emitted token, or the assertion type.
func poolKind(flow, emit string) string {
	switch flow {
	case FlowJWTBearer:
		return "assertion"
	case FlowClientAssertion:
		return "client_assertion"
	}
	return emit
}

// buildFlow loads keys or discovers endpoints and returns the flow's mint function.
func buildFlow(ctx context.Context, cfg *Config) (mintFunc, error) {
	if isJWTFlow(cfg.Flow) {
		f, err := newJWTFlow(cfg)
		if err != nil {
			return nil, err
		}
		return f.mint, nil
	}
	w := &worker{hc: newHTTPClient(cfg.Timeout)}
	defer w.hc.CloseIdleConnections()
	ep, err := resolveEndpoints(ctx, w, cfg)
	if err != nil {
		return nil, err
	}
	switch cfg.Flow {
	case FlowClientCredentials:
		return newClientCredentials(cfg, ep.token).mint, nil
	case FlowPassword:
		return newPasswordGrant(cfg, ep.token).mint, nil
	}
	f, err := newLogin(cfg, ep.token, ep.auth)
	if err != nil {
		return nil, err
	}
	return f.mint, nil
}

// checkOutputDir fails early, before any minting, when -o cannot be created.
func checkOutputDir(path string) error {
	if path == "-" || path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("output %s: directory %s does not exist", path, dir)
	}
	return nil
}

// errAllMinted stops the workers once every credential is in.
var errAllMinted = errors.New("all credentials minted")

// errTooManyFailures stops the workers after MaxFailures failures in a row.
var errTooManyFailures = errors.New("too many consecutive failures")

// run is one minting run. Slots 0..N-1 sit in jobs; a worker takes a slot,
// fills it, or puts it back after a failure, so the pool ends with exactly N
// credentials. Any success resets the consecutive-failure streak.
type run struct {
	cfg     *Config
	mint    mintFunc
	jobs    chan int
	creds   []credential
	done    atomic.Int64
	failed  atomic.Int64 // failed attempts in total
	streak  atomic.Int64 // failed attempts since the last success
	errOnce sync.Once
	first   error // first failure, redacted when printed
	cancel  context.CancelCauseFunc
}

func newRun(cfg *Config, mint mintFunc) *run {
	r := &run{cfg: cfg, mint: mint, jobs: make(chan int, cfg.N), creds: make([]credential, cfg.N)}
	for i := range cfg.N {
		r.jobs <- i
	}
	return r
}

func (r *run) all(parent context.Context, stderr io.Writer) ([]credential, error) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	r.cancel = cancel
	start := time.Now()
	if r.cfg.Progress {
		stop := startProgress(stderr, r.cfg.N, r.done.Load, start)
		defer stop()
	}
	var wg sync.WaitGroup
	for range min(r.cfg.Parallel, r.cfg.N) {
		wg.Go(func() { r.work(ctx) })
	}
	wg.Wait()
	switch {
	case r.done.Load() == int64(r.cfg.N):
		return r.creds, nil
	case parent.Err() != nil:
		return nil, fmt.Errorf("interrupted after %d of %d: %w", r.done.Load(), r.cfg.N, parent.Err())
	}
	return nil, fmt.Errorf("%d consecutive failures (%d minted); first error: %s",
		r.streak.Load(), r.done.Load(), r.redact(r.first.Error()))
}

func (r *run) work(parent context.Context) {
	// Each request hangs a child context on ctx; a context per worker keeps
	// the workers from contending for the run context's lock.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	w := &worker{hc: newHTTPClient(r.cfg.Timeout)}
	defer w.hc.CloseIdleConnections()
	for {
		var i int
		select {
		case <-ctx.Done():
			return
		case i = <-r.jobs:
		}
		c, err := r.mint(ctx, w, i)
		if ctx.Err() != nil {
			return // interrupted or aborted: the outcome of this attempt does not count
		}
		if err != nil {
			r.fail(err)
			r.jobs <- i // never blocks: the channel holds N slots and i was taken out
			continue
		}
		r.creds[i] = c
		r.streak.Store(0)
		if r.done.Add(1) == int64(r.cfg.N) {
			r.cancel(errAllMinted)
		}
	}
}

func (r *run) fail(err error) {
	r.errOnce.Do(func() { r.first = err })
	r.failed.Add(1)
	if r.streak.Add(1) >= int64(r.cfg.MaxFailures) {
		r.cancel(errTooManyFailures)
	}
}

// warnRetries reports failed attempts that later succeeded on a retry.
func (r *run) warnRetries(stderr io.Writer) {
	if n := r.failed.Load(); n > 0 {
		fmt.Fprintf(stderr, "mintpool: warning: %d failed attempts were retried; first error: %s\n", n, r.redact(r.first.Error()))
	}
}

// redact removes the secrets mintpool knows from a message, in case a server
// echoes them in an error.
func (r *run) redact(s string) string {
	var pairs []string
	for _, secret := range []string{r.cfg.ClientSecret, r.cfg.Password, r.cfg.LoginClientPAT} {
		if len(secret) >= 3 {
			pairs = append(pairs, secret, "[redacted]")
		}
	}
	if len(pairs) == 0 {
		return s
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// roundDuration keeps two or three significant digits: 3.2s, 45ms.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func values(creds []credential) []string {
	out := make([]string, len(creds))
	for i, c := range creds {
		out[i] = c.value
	}
	return out
}

// earliest is the first expiry among the credentials (zero when none is known).
func earliest(creds []credential) time.Time {
	var t time.Time
	for _, c := range creds {
		if !c.exp.IsZero() && (t.IsZero() || c.exp.Before(t)) {
			t = c.exp
		}
	}
	return t
}

func formatExpiry(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format(time.RFC3339)
}
