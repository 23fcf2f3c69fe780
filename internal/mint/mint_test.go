package mint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/mint/minttest"
)

func TestGrantFlows(t *testing.T) {
	tests := []struct {
		name      string
		auth      string
		flow      string
		grant     string
		emit      string
		useIssuer bool
		prefix    string // each credential starts with it
		form      func(r *http.Request) string
	}{
		{name: "cc basic", auth: "basic", flow: FlowClientCredentials, grant: "client_credentials", emit: EmitAccessToken, prefix: "at-"},
		{name: "cc post", auth: "post", flow: FlowClientCredentials, grant: "client_credentials", emit: EmitAccessToken, prefix: "at-"},
		{name: "cc via discovery", auth: "basic", flow: FlowClientCredentials, grant: "client_credentials", emit: EmitAccessToken, useIssuer: true, prefix: "at-"},
		{name: "password refresh", auth: "basic", flow: FlowPassword, grant: "password", emit: EmitRefreshToken, prefix: "rt-", form: checkUser},
		{name: "password id_token", auth: "post", flow: FlowPassword, grant: "password", emit: EmitIDToken, prefix: "eyJ", form: checkUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := newFakeOP(t, tt.auth, tt.grant)
			op.form = tt.form
			srv := op.start()
			out := filepath.Join(t.TempDir(), "p.pool")
			cfg := baseConfig(srv, out)
			cfg.Flow, cfg.ClientAuth, cfg.Emit = tt.flow, tt.auth, tt.emit
			cfg.Username, cfg.Users, cfg.Password, cfg.Scope = "u%d", 3, "pw-secret", "openid"
			if tt.useIssuer {
				cfg.TokenURL, cfg.Issuer = "", srv.URL+"/"
			}
			var stderr minttest.SyncBuf
			before := time.Now().UTC().Truncate(time.Second)
			if err := Run(context.Background(), cfg, io.Discard, &stderr); err != nil {
				t.Fatalf("Run: %v\nstderr: %s", err, stderr.String())
			}
			p := minttest.ReadPool(t, out)
			if len(p.Creds) != cfg.N {
				t.Fatalf("%d credentials, want %d", len(p.Creds), cfg.N)
			}
			seen := map[string]bool{}
			for _, c := range p.Creds {
				if !strings.HasPrefix(c, tt.prefix) {
					t.Errorf("credential %q does not start with %q", c, tt.prefix)
				}
				seen[c] = true
			}
			if tt.emit != EmitIDToken && len(seen) != cfg.N {
				t.Errorf("%d distinct credentials, want %d", len(seen), cfg.N)
			}
			checkHeader(t, p.Header, tt.emit, tt.flow, before)
			if !strings.Contains(stderr.String(), "mintpool: minted 20 "+tt.emit+" in ") {
				t.Errorf("summary missing: %q", stderr.String())
			}
		})
	}
}

func checkUser(r *http.Request) string {
	u := r.PostForm.Get("username")
	if u != "u0" && u != "u1" && u != "u2" {
		return "unexpected user " + u
	}
	if r.PostForm.Get("password") != "pw-secret" || r.PostForm.Get("scope") != "openid" {
		return "bad password or scope"
	}
	return ""
}

func checkHeader(t *testing.T, h map[string]string, kind, flow string, before time.Time) {
	t.Helper()
	if h["kind"] != kind || h["flow"] != flow || h["product"] != "fake" {
		t.Errorf("header %v: want kind=%s flow=%s product=fake", h, kind, flow)
	}
	minted, err := time.Parse(time.RFC3339, h["minted"])
	if err != nil || minted.Before(before) || minted.After(time.Now().Add(time.Second)) {
		t.Errorf("minted=%q not RFC 3339 around now (%v)", h["minted"], err)
	}
	exp, err := time.Parse(time.RFC3339, h["expires"])
	if err != nil || exp.Before(minted.Add(4*time.Minute)) || exp.After(minted.Add(2*time.Hour)) {
		t.Errorf("expires=%q: want a time minutes after minted %s (%v)", h["expires"], h["minted"], err)
	}
}

func TestFailureLeavesNothing(t *testing.T) {
	op := newFakeOP(t, "basic", "client_credentials")
	srv := op.start()
	dir := t.TempDir()
	cfg := baseConfig(srv, filepath.Join(dir, "p.pool"))
	cfg.ClientSecret = "wrong-secret-xyz"
	var stderr minttest.SyncBuf
	err := Run(context.Background(), cfg, io.Discard, &stderr)
	if err == nil {
		t.Fatal("Run succeeded with a wrong secret")
	}
	msg := err.Error()
	for _, want := range []string{"HTTP 401", "invalid_client", "client authentication failed for cli"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// Workers that fail together may overshoot the limit by one each.
	var n int
	if _, err := fmt.Sscanf(msg[strings.Index(msg, "): ")+3:], "%d consecutive failures", &n); err != nil ||
		n < cfg.MaxFailures || n >= cfg.MaxFailures+cfg.Parallel {
		t.Errorf("error %q: want %d to %d consecutive failures (MaxFailures, overshot by at most the other workers)",
			msg, cfg.MaxFailures, cfg.MaxFailures+cfg.Parallel-1)
	}
	if strings.Contains(msg+stderr.String(), "wrong-secret-xyz") {
		t.Errorf("secret leaked: %q %q", msg, stderr.String())
	}
	if n := op.requests.Load(); n < 10 || n > 10+int64(cfg.Parallel) {
		t.Errorf("%d requests; want about --max-failures (10)", n)
	}
	minttest.AssertEmptyDir(t, dir)
}

func TestConsecutiveFailures(t *testing.T) {
	tests := []struct {
		name   string
		fail   func(n int64) bool
		max    int
		wantOK bool
	}{
		{"every other fails, max 2", func(n int64) bool { return n%2 == 0 }, 2, true},
		{"three in a row, max 4", func(n int64) bool { return n >= 5 && n <= 7 }, 4, true},
		{"three in a row, max 3", func(n int64) bool { return n >= 5 && n <= 7 }, 3, false},
		{"all fail, max 1", func(int64) bool { return true }, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := newFakeOP(t, "basic", "client_credentials")
			op.fail = tt.fail
			srv := op.start()
			dir := t.TempDir()
			cfg := baseConfig(srv, filepath.Join(dir, "p.pool"))
			cfg.N, cfg.Parallel, cfg.MaxFailures = 10, 1, tt.max
			var stderr minttest.SyncBuf
			err := Run(context.Background(), cfg, io.Discard, &stderr)
			if tt.wantOK {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if p := minttest.ReadPool(t, cfg.Output); len(p.Creds) != 10 {
					t.Errorf("%d credentials, want 10", len(p.Creds))
				}
				if !strings.Contains(stderr.String(), "retried; first error:") {
					t.Errorf("no retry warning: %q", stderr.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "temporarily_unavailable") || !strings.Contains(err.Error(), "HTTP 503") {
				t.Fatalf("err = %v, want the server's 503 error", err)
			}
			minttest.AssertEmptyDir(t, dir)
		})
	}
}

func TestInterrupt(t *testing.T) {
	op := newFakeOP(t, "basic", "client_credentials")
	ctx, cancel := context.WithCancel(context.Background())
	op.form = func(r *http.Request) string {
		// >=, not ==: with two workers the counter can step over 5 between loads.
		if op.requests.Load() >= 5 {
			cancel()
		}
		return ""
	}
	srv := op.start()
	dir := t.TempDir()
	cfg := baseConfig(srv, filepath.Join(dir, "p.pool"))
	cfg.N, cfg.Parallel = 1000, 2
	err := Run(ctx, cfg, io.Discard, io.Discard)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v, want interrupted (context.Canceled)", err)
	}
	minttest.AssertEmptyDir(t, dir)
}

func TestStdoutPool(t *testing.T) {
	srv := newFakeOP(t, "basic", "client_credentials").start()
	cfg := baseConfig(srv, "-")
	cfg.N = 3
	var stdout strings.Builder
	if err := Run(context.Background(), cfg, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "# idpbench-pool kind=access_token ") {
		t.Errorf("stdout pool = %q", stdout.String())
	}
}

func TestMissingToken(t *testing.T) {
	op := newFakeOP(t, "basic", "client_credentials")
	srv := op.start()
	cfg := baseConfig(srv, filepath.Join(t.TempDir(), "p.pool"))
	cfg.Emit = "nonsense"
	if err := Run(context.Background(), cfg, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--emit") {
		t.Errorf("err = %v, want a --emit usage error", err)
	}
	tr := tokenResponse{AccessToken: "a"}
	if _, err := tr.pick(EmitRefreshToken, time.Now()); err == nil || !strings.Contains(err.Error(), "no refresh_token") {
		t.Errorf("pick refresh_token from a response without one: %v", err)
	}
}

func TestJWTExp(t *testing.T) {
	exp := time.Unix(1_900_000_000, 0).UTC()
	tests := []struct {
		tok  string
		want time.Time
	}{
		{fakeJWT(exp), exp},
		{"opaque-token", time.Time{}},
		{"a.b.c", time.Time{}},
		{"eyJ.e30.c2ln", time.Time{}}, // {} has no exp
	}
	for _, tt := range tests {
		if got := jwtExp(tt.tok); !got.Equal(tt.want) {
			t.Errorf("jwtExp(%q) = %v, want %v", tt.tok, got, tt.want)
		}
	}
}

func TestPickExpiry(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	jwtExpAt := now.Add(42 * time.Minute)
	tests := []struct {
		name string
		tr   tokenResponse
		emit string
		want time.Time
	}{
		{"expires_in", tokenResponse{AccessToken: "a", ExpiresIn: 300}, EmitAccessToken, now.Add(5 * time.Minute)},
		{"jwt exp when no expires_in", tokenResponse{AccessToken: fakeJWT(jwtExpAt)}, EmitAccessToken, jwtExpAt},
		{"refresh_expires_in", tokenResponse{RefreshToken: "r", ExpiresIn: 300, RefreshExpiresIn: 1800}, EmitRefreshToken, now.Add(30 * time.Minute)},
		{"opaque refresh: unknown", tokenResponse{RefreshToken: "r", ExpiresIn: 300}, EmitRefreshToken, time.Time{}},
		{"id token exp", tokenResponse{AccessToken: "a", ExpiresIn: 300, IDToken: fakeJWT(jwtExpAt)}, EmitIDToken, jwtExpAt},
	}
	for _, tt := range tests {
		c, err := tt.tr.pick(tt.emit, now)
		if err != nil || !c.exp.Equal(tt.want) {
			t.Errorf("%s: exp %v err %v, want %v", tt.name, c.exp, err, tt.want)
		}
	}
	if got := formatExpiry(earliest([]credential{{exp: now.Add(time.Hour)}, {}, {exp: now}})); got != "2026-01-02T03:04:05Z" {
		t.Errorf("earliest expiry %q", got)
	}
	if got := formatExpiry(earliest([]credential{{}, {}})); got != "unknown" {
		t.Errorf("no expiry known: %q", got)
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine(500, 2000, 2*time.Second)
	if !strings.Contains(got, "500/2000") || !strings.Contains(got, "250/s") || !strings.Contains(got, "ETA 6s") {
		t.Errorf("progress line %q", got)
	}
	var buf minttest.SyncBuf
	stop := startProgress(&buf, 10, func() int64 { return 5 }, time.Now().Add(-time.Second))
	// The line is drawn every 250 ms: wait for one, however late a busy
	// machine runs the drawing goroutine, rather than for a fixed time.
	for give := time.Now().Add(10 * time.Second); !strings.Contains(buf.String(), "minted") && time.Now().Before(give); {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if !strings.Contains(buf.String(), "5/10 minted") || !strings.HasSuffix(buf.String(), "\r\x1b[K") {
		t.Errorf("progress output %q", buf.String())
	}
}

func TestBasicAuthEncoding(t *testing.T) {
	a := newClientAuth("id:x", "p@ss word", "basic")
	req, _ := http.NewRequest(http.MethodPost, "http://h/", nil)
	req.Header.Set("Authorization", a.header)
	id, sec, ok := req.BasicAuth()
	if !ok || id != "id%3Ax" || sec != "p%40ss+word" {
		t.Errorf("basic credentials %q %q: want form-encoded parts (RFC 6749 2.3.1)", id, sec)
	}
	if body := newClientAuth("c", "s", "post").encode(map[string][]string{"grant_type": {"x"}}); body != "client_id=c&client_secret=s&grant_type=x" {
		t.Errorf("post body %q", body)
	}
}
