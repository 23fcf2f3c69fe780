package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/ladder"
	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/products"
)

// TestE2ERefopGrants: jwt-bearer grants and private_key_jwt introspection
// (the calls of Zitadel's S2j and S3, docs/products/zitadel.md) against the
// reference OP, which is built on Zitadel's OIDC library, as a pipeline of
// the tools: assertions signed with the example's key by mintpool, measured
// by loadstep, with zero errors. The example answers introspection by
// "service" (authenticated by its client assertion) with active:false for
// every token: it marks a token active only for callers in its audience
// whose subject is a user. So the introspect step checks for a valid RFC
// 7662 answer (--introspect-check answered, recorded as its check: a test of
// client authentication, never a comparison cell), and a pool of tampered
// assertions must fail every request with 401.
func TestE2ERefopGrants(t *testing.T) {
	env := need(t, "IDPBENCH_REFOP_URL", "IDPBENCH_REFOP_KEY")
	issuer, key := strings.TrimRight(env[0], "/")+"/", env[1] // the issuer as the OP names it, with its slash
	mintpool, loadstep := tool(t, "mintpool"), tool(t, "loadstep")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out := t.TempDir() // 0700: the pools are secrets
	mint := func(flow, file string) string {
		p := filepath.Join(out, file)
		run(ctx, t, nil, mintpool, "--flow", flow, "--key-file", key, "--kid", "key1", "--iss", "service", "--aud", issuer,
			"--ttl", "10m", "-n", "200", "-o", p)
		return p
	}
	step := func(file string, args ...string) *schema.Step {
		p := filepath.Join(out, file)
		args = append(args, "-c", "4", "--warmup", "1s", "--duration", "3s", "--product", "refop", "-o", p)
		run(ctx, t, nil, loadstep, args...)
		s, err := ladder.ReadStep(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	grants := mint("jwt-bearer", "grants.pool")
	s := step("jwt_bearer.json", "--url", issuer+"oauth/token", "--scenario", "jwt_bearer", "--pool", grants, "--scope", "openid")
	if s.Status != schema.StatusComplete || s.Requests == 0 || s.ErrorRate != 0 {
		t.Fatalf("jwt_bearer against the reference OP: want zero errors, got %s", jsonOf(map[string]any{"requests": s.Requests, "errors": s.Errors}))
	}
	t.Logf("ok: refop jwt_bearer %d requests, %.0f/s, errors %g", s.Requests, s.QPS, s.ErrorRate)

	// Access tokens to introspect: 20 jwt-bearer grants.
	p, err := pool.ReadFile(grants, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for _, a := range p.Creds[:min(20, len(p.Creds))] {
		tokens = append(tokens, jwtBearerGrant(ctx, t, issuer, a))
	}
	tokenPool := filepath.Join(out, "tokens.pool")
	if err := pool.WriteFile(tokenPool, map[string]string{"kind": "access_token", "product": "refop", "flow": "jwt-bearer"}, tokens, nil); err != nil {
		t.Fatal(err)
	}
	assertions := mint("client-assertion", "assertions.pool")
	// The signature's last characters replaced: the OP must refuse every one.
	a, err := pool.ReadFile(assertions, nil)
	if err != nil {
		t.Fatal(err)
	}
	tampered := make([]string, len(a.Creds))
	for i, c := range a.Creds {
		tampered[i] = c[:len(c)-4] + "AAAA"
	}
	tamperedPool := filepath.Join(out, "tampered.pool")
	if err := pool.WriteFile(tamperedPool, a.Header, tampered, nil); err != nil {
		t.Fatal(err)
	}
	introspect := func(file, assertions string) *schema.Step {
		return step(file, "--url", issuer+"oauth/introspect", "--scenario", "introspect", "--pool", tokenPool,
			"--client-auth", "assertion", "--client-assertion-pool", assertions, "--introspect-check", "answered")
	}
	good, bad := introspect("introspect-0.json", assertions), introspect("introspect-1.json", tamperedPool)
	if good.Status != schema.StatusComplete || good.Requests == 0 || good.ErrorRate != 0 || good.Check != "2xx json active=bool" {
		t.Errorf("private_key_jwt introspection against the reference OP: want zero errors, got %s",
			jsonOf(map[string]any{"requests": good.Requests, "errors": good.Errors, "check": good.Check}))
	}
	if bad.Requests == 0 || bad.Errors.Non2xx != bad.Requests || bad.StatusCodes["401"] != bad.Requests {
		t.Errorf("private_key_jwt introspection with tampered assertions: want every request refused with 401, got %s",
			jsonOf(map[string]any{"requests": bad.Requests, "errors": bad.Errors, "status_codes": bad.StatusCodes}))
	}
	if !t.Failed() {
		t.Logf("ok: refop introspect (private_key_jwt) %d requests, %.0f/s, errors %g; tampered assertions: all %d refused with 401",
			good.Requests, good.QPS, good.ErrorRate, bad.Requests)
	}
}

// jwtBearerGrant exchanges the assertion a for an access token (RFC 7523).
func jwtBearerGrant(ctx context.Context, t *testing.T, issuer, a string) string {
	t.Helper()
	form := url.Values{"scope": {"openid"}, "grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {a}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, issuer+"oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("jwt-bearer grant for the token pool: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode/100 != 2 || body.AccessToken == "" {
		t.Fatalf("jwt-bearer grant for the token pool failed: %s (%v)", resp.Status, err)
	}
	return body.AccessToken
}

// TestE2ERefopFresh: the reference OP's fresh start before a load step
// (ladder.sh and gcjitter.sh call the adapter's fresh before every step).
// refop, which never frees a token it issued, starts again when the load
// since its start issued tokens (unknown at first: it does), and the pools
// of its own tokens go with the old process; after a step that only read it
// stays up. For a product without product_fresh (Hydra) it is a no-op.
// IDPBENCH_REFOP_STATE and IDPBENCH_HYDRA_STATE are the adapters' state
// directories of the running servers.
func TestE2ERefopFresh(t *testing.T) {
	env := need(t, "IDPBENCH_REFOP_STATE", "IDPBENCH_HYDRA_STATE")
	st, hydra := env[0], env[1]
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	refop := func(args ...string) string { return strings.TrimSpace(adapter(ctx, t, nil, "refop", args...)) }
	pidfile, poolFile := filepath.Join(st, "pids", "refop.pid"), filepath.Join(st, "pools", "userinfo.pool")
	refop("setup", st) // the login page's credentials (the integration tests needed only up)
	entry, _ := products.Lookup("refop")
	ans, err := entry.Answer(st, "userinfo") // the ladder's answer, read in-process
	if err != nil {
		t.Fatal(err)
	}
	userinfo := ans.Endpoint
	mintOne := func() string {
		refop("pools", st, "userinfo", "2", poolFile)
		p, err := pool.ReadFile(poolFile, nil)
		if err != nil {
			t.Fatal(err)
		}
		if code := bearerStatus(ctx, t, userinfo, p.Creds[0]); code != http.StatusOK {
			t.Fatalf("refop userinfo with a token just minted: want 200, got %d", code)
		}
		return p.Creds[0]
	}

	// 1. Nothing recorded about the load since the start: it starts again.
	tok := mintOne()
	before := pidOf(t, pidfile)
	refop("fresh", st, "userinfo")
	after := pidOf(t, pidfile)
	if after == before {
		t.Fatalf("refop fresh (first step): still the process %d", before)
	}
	// Gone, or a zombie its new parent has not reaped yet (coldstart, which
	// started it, has exited).
	if f, err := procStat(before); err == nil && f[0] != "Z" {
		t.Fatalf("refop fresh: the old process %d still runs (%s)", before, f[0])
	}
	if _, err := os.Stat(poolFile); !os.IsNotExist(err) {
		t.Fatalf("refop fresh: the pool of the old process's tokens is still there (%v)", err)
	}
	old := bearerStatus(ctx, t, userinfo, tok)
	if old != http.StatusUnauthorized && old != http.StatusForbidden {
		t.Fatalf("refop userinfo with a token of the old process answered %d, want 401 or 403 (an empty store)", old)
	}
	if _, stderr, err := runErr(ctx, nil, filepath.Join(repoRoot(t), "products", "refop", "adapter"), "health", st); err != nil {
		t.Fatalf("refop fresh: not healthy after the fresh start: %v\n%s", err, stderr)
	}

	// 2. After a step that only read (userinfo), and before one that issues: it stays up, its pool valid.
	tok = mintOne()
	refop("fresh", st, "client_credentials")
	fi, err := os.Stat(poolFile)
	if pidOf(t, pidfile) != after || err != nil || fi.Size() == 0 || bearerStatus(ctx, t, userinfo, tok) != http.StatusOK {
		t.Fatalf("refop fresh after a userinfo step: want the same process (%d) and its pool still valid", after)
	}
	// 3. After a step that issued tokens (client_credentials): it starts again.
	refop("fresh", st, "introspect")
	if pidOf(t, pidfile) == after {
		t.Fatalf("refop fresh after a client_credentials step: still the process %d", after)
	}

	if _, stderr, err := runErr(ctx, nil, filepath.Join(repoRoot(t), "products", "hydra", "adapter"), "fresh", hydra, "userinfo"); err != nil {
		t.Fatalf("hydra fresh: want a no-op, it failed: %v\n%s", err, stderr)
	}
	if pid := pidOf(t, filepath.Join(hydra, "pids", "hydra.pid")); syscall.Kill(pid, 0) != nil {
		t.Fatalf("hydra fresh: Hydra (%d) no longer runs", pid)
	}
	t.Logf("ok: refop fresh: a new process, its old token refused (%d), after a first step and after client_credentials; "+
		"the same after userinfo; hydra fresh: a no-op", old)
}

// bearerStatus is the status url answers a GET with the bearer token tok.
func bearerStatus(ctx context.Context, t *testing.T, url, tok string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
