package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
)

func discoveryServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"issuer":"http://op/","access_token":"at","active":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func writeFile(t *testing.T, dir, name, content string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runArgs runs loadstep in-process.
func runArgs(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	url := discoveryServer(t)
	empty := writeFile(t, dir, "empty.pool", "# idpbench-pool kind=access_token\n")
	small := writeFile(t, dir, "small.pool", "a\nb\n")
	ctrl := writeFile(t, dir, "ctrl.pool", "good\nbad\x01token\n")
	secretFile := writeFile(t, dir, "secret", "s3cret\n")
	base := []string{"--url", url, "--warmup", "0", "--duration", "50ms"}
	tests := []struct {
		name string
		args []string
		want string // must appear in the one-line error
	}{
		{"unknown scenario", []string{"--scenario", "nope"}, "--scenario"},
		{"no scenario", []string{}, "--scenario"},
		{"unknown flag", []string{"--scenario", "discovery", "--bogus"}, "bogus"},
		{"malformed url", []string{"--scenario", "discovery", "--url", "localhost:9998/x"}, "--url"},
		{"url without host", []string{"--scenario", "discovery", "--url", "http:///x"}, "--url"},
		{"zero duration", []string{"--scenario", "discovery", "--duration", "0s"}, "--duration"},
		{"negative duration", []string{"--scenario", "discovery", "--duration", "-1s"}, "--duration"},
		{"zero connections", []string{"--scenario", "discovery", "-c", "0"}, "-c"},
		{"zero interval", []string{"--scenario", "discovery", "--interval", "0s"}, "--interval"},
		{"negative rate", []string{"--scenario", "discovery", "--rate", "-5"}, "--rate"},
		{"rate not a number", []string{"--scenario", "discovery", "--rate", "NaN"}, "--rate"},
		{"missing pool", []string{"--scenario", "userinfo"}, "--pool"},
		{"pool file missing", []string{"--scenario", "userinfo", "--pool", filepath.Join(dir, "nope.pool")}, "nope.pool"},
		{"pool file empty", []string{"--scenario", "userinfo", "--pool", empty}, "empty.pool"},
		{"pool smaller than -c (consume)", []string{"--scenario", "userinfo", "--pool", small, "--pool-mode", "consume", "-c", "3"}, "small.pool"},
		{"pool smaller than -c (chain)", []string{"--scenario", "refresh", "--pool", small, "--pool-mode", "chain", "-c", "3",
			"--client-id", "c", "--client-secret-file", secretFile}, "small.pool"},
		{"unknown pool mode", []string{"--scenario", "userinfo", "--pool", small, "--pool-mode", "lifo"}, "--pool-mode"},
		{"client_credentials without secret", []string{"--scenario", "client_credentials", "--client-id", "c"}, "--client-secret-file"},
		{"secret file missing", []string{"--scenario", "client_credentials", "--client-id", "c",
			"--client-secret-file", filepath.Join(dir, "nosecret")}, "--client-secret-file"},
		{"assertion without pool", []string{"--scenario", "introspect", "--pool", small, "--client-auth", "assertion"}, "--client-assertion-pool"},
		{"unknown client auth", []string{"--scenario", "introspect", "--pool", small, "--client-auth", "mtls"}, "--client-auth"},
		{"unknown introspect check", []string{"--scenario", "introspect", "--pool", small, "--client-id", "c",
			"--client-secret-file", secretFile, "--introspect-check", "inactive"}, "--introspect-check"},
		{"introspect check elsewhere", []string{"--scenario", "userinfo", "--pool", small, "--introspect-check", "answered"}, "--introspect-check"},
		{"header without colon", []string{"--scenario", "request", "--header", "X-Token abc"}, "--header"},
		{"header with a line break", []string{"--scenario", "request", "--header", "X-Token: a\r\nX-Evil: 1"}, "--header"},
		{"pool placeholder in a header name", []string{"--scenario", "request", "--header", "X-{{pool}}: 1", "--pool", small}, "--header"},
		{"pool credential unfit for a header", []string{"--scenario", "userinfo", "--pool", ctrl}, "ctrl.pool"},
		{"unknown engine", []string{"--scenario", "discovery", "--engine", "fasthttp"}, "--engine"},
		{"label without =", []string{"--scenario", "discovery", "--label", "run"}, "--label"},
		{"pool for discovery", []string{"--scenario", "discovery", "--pool", small}, "--pool"},
		{"positional argument", []string{"--scenario", "discovery", "extra"}, "extra"},
		{"warmup-max negative", []string{"--scenario", "discovery", "--warmup-max", "-1s"}, "--warmup-max"},
		{"warmup-max below the floor", []string{"--scenario", "discovery", "--warmup", "10s", "--warmup-max", "5s"}, "--warmup-max"},
		{"ramp in a closed loop", []string{"--scenario", "discovery", "--ramp", "1s"}, "--ramp"},
		{"ramp longer than the warmup", []string{"--scenario", "discovery", "--rate", "100", "--warmup", "1s", "--ramp", "2s"}, "--ramp"},
		{"warmup-stable too few", []string{"--scenario", "discovery", "--warmup-max", "5s", "--warmup-stable", "1"}, "--warmup-stable"},
		{"warmup-stable too many", []string{"--scenario", "discovery", "--warmup-max", "5s", "--warmup-stable", "61"}, "--warmup-stable"},
		{"warmup-tolerance zero", []string{"--scenario", "discovery", "--warmup-max", "5s", "--warmup-tolerance", "0"}, "--warmup-tolerance"},
		{"warmup-tolerance 100", []string{"--scenario", "discovery", "--warmup-max", "5s", "--warmup-tolerance", "100"}, "--warmup-tolerance"},
		{"warmup-jit-max without a JVM to watch", []string{"--scenario", "discovery", "--warmup-max", "5s", "--warmup-jit-max", "10"}, "--warmup-jit-max"},
		{"warmup-jit-max without an adaptive warmup", []string{"--scenario", "discovery", "--jit-pidfile", "p.pid", "--warmup-jit-max", "10"}, "--warmup-jit-max"},
		{"warmup-jit-max negative", []string{"--scenario", "discovery", "--warmup-max", "5s", "--jit-pidfile", "p.pid", "--warmup-jit-max", "-1"}, "--warmup-jit-max"},
		{"login for discovery", []string{"--scenario", "discovery", "--login", "admin-accept"}, "--login"},
		{"userinfo url for auth_code", []string{"--scenario", "auth_code", "--userinfo-url", "http://x/u"}, "--userinfo-url"},
		{"auth_code without login", []string{"--scenario", "auth_code", "--client-id", "c", "--client-secret-file", secretFile}, "--login"},
		{"auth_code form login without password", []string{"--scenario", "auth_code", "--login", "form", "--client-id", "c",
			"--client-secret-file", secretFile, "--token-url", "http://x/t", "--username", "u", "--redirect-uri", "http://x/cb"}, "--password-file"},
		{"login consent for discovery", []string{"--scenario", "discovery", "--login-consent"}, "--login-consent"},
		{"login field for userinfo", []string{"--scenario", "userinfo", "--login-field", "a=b"}, "--login-field"},
		{"login field without =", []string{"--scenario", "auth_code", "--login", "form", "--login-field", "tenant", "--client-id", "c",
			"--client-secret-file", secretFile, "--token-url", "http://x/t", "--username", "u", "--redirect-uri", "http://x/cb"}, "--login-field"},
		{"login user field for admin-accept", []string{"--scenario", "auth_code", "--login", "admin-accept", "--login-user-field", "u",
			"--admin-url", "http://x", "--client-id", "c", "--client-secret-file", secretFile, "--token-url", "http://x/t",
			"--username", "u", "--redirect-uri", "http://x/cb"}, "--login-user-field"},
		{"auth_code bad token url", []string{"--scenario", "auth_code", "--token-url", "x/t"}, "--token-url"},
		{"client_credentials_login without userinfo url", []string{"--scenario", "client_credentials_login", "--client-id", "c",
			"--client-secret-file", secretFile}, "--userinfo-url"},
		// One rule per scenario: the per-product userinfo check is gone.
		{"client_credentials_login removed --userinfo-check", []string{"--scenario", "client_credentials_login", "--client-id", "c",
			"--client-secret-file", secretFile, "--userinfo-url", "http://x/u", "--userinfo-check", "403"}, "--userinfo-check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("IDPBENCH_CLIENT_SECRET", "")
			out := filepath.Join(dir, "out.json")
			code, stdout, stderr := runArgs(context.Background(), append(append(base, "-o", out), tt.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.HasPrefix(stderr, "loadstep: ") || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSuffix(stderr, cli.Hint("loadstep")+"\n"), "\n") != 1 {
				t.Errorf("stderr %q: want one line naming %s", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output file exists after a usage error")
			}
		})
	}
}

func TestRunWritesStep(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s1.json")
	code, stdout, stderr := runArgs(context.Background(), "--url", discoveryServer(t), "--scenario", "discovery",
		"-c", "2", "--warmup", "50ms", "--duration", "200ms", "--interval", "100ms",
		"--product", "test", "--label", "run=r1", "-o", out)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	s := decodeStep(t, out)
	if s.Status != schema.StatusComplete || s.Requests == 0 || s.OK != s.Requests || len(s.Intervals) != 2 ||
		s.Product != "test" || s.Labels["run"] != "r1" || s.Connections != 2 {
		t.Errorf("step: %+v", s)
	}
	if !strings.HasPrefix(stderr, "loadstep: discovery c=2 complete: ") || strings.Count(strings.TrimSuffix(stderr, cli.Hint("loadstep")+"\n"), "\n") != 1 ||
		!strings.Contains(stderr, "p99") {
		t.Errorf("stderr %q: want the one-line summary", stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the result", len(entries))
	}
}

// TestAdaptiveWarmup: --warmup-max records the rule, the verdict and the
// warmup's curve, and the summary line says how the warmup ended; a fixed
// warmup records none of it and says nothing of it.
func TestAdaptiveWarmup(t *testing.T) {
	dir := t.TempDir()
	url := discoveryServer(t)
	out := filepath.Join(dir, "adaptive.json")
	code, _, stderr := runArgs(context.Background(), "--url", url, "--scenario", "discovery", "-c", "2",
		"--warmup", "200ms", "--warmup-max", "3s", "--warmup-stable", "2", "--warmup-tolerance", "50",
		"--duration", "200ms", "--interval", "100ms", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	s := decodeStep(t, out)
	want := schema.WarmupRule{MinS: 0.2, MaxS: 3, StableIntervals: 2, TolerancePct: 50}
	if s.WarmupRule == nil || *s.WarmupRule != want || s.WarmupStable == nil || len(s.WarmupQPS) == 0 ||
		s.WarmupS < 0.2 || s.WarmupS > 3 {
		t.Fatalf("warmup_s %v, rule %+v, stable %v, qps %v: want the rule, a verdict and the curve of a warmup of 0.2 to 3 s",
			s.WarmupS, s.WarmupRule, s.WarmupStable, s.WarmupQPS)
	}
	how := "stable"
	if !*s.WarmupStable {
		how = "cap: not stable"
	}
	if line := fmt.Sprintf("; warmup %.1f s (%s)", s.WarmupS, how); !strings.Contains(stderr, line) || strings.Count(strings.TrimSuffix(stderr, cli.Hint("loadstep")+"\n"), "\n") != 1 {
		t.Errorf("stderr %q: want one line with %q", stderr, line)
	}

	fixed := filepath.Join(dir, "fixed.json")
	code, _, stderr = runArgs(context.Background(), "--url", url, "--scenario", "discovery",
		"--warmup", "100ms", "--duration", "100ms", "-o", fixed)
	b, err := os.ReadFile(fixed)
	if code != 0 || err != nil {
		t.Fatalf("exit %d, %v, stderr %q", code, err, stderr)
	}
	if bytes.Contains(b, []byte(`"warmup_rule"`)) || bytes.Contains(b, []byte(`"warmup_stable"`)) ||
		bytes.Contains(b, []byte(`"warmup_qps"`)) || !bytes.Contains(b, []byte(`"warmup_s": 0.1,`)) || strings.Contains(stderr, "warmup") {
		t.Errorf("a fixed warmup: stderr %q, record %s", stderr, b)
	}
}

// TestEngines runs a step on each engine; https always uses nethttp, rate
// mode raw; the default is epoll on Linux, raw elsewhere.
func TestEngines(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"issuer":"https://op/"}`)
	}))
	t.Cleanup(tlsSrv.Close)
	plain := discoveryServer(t)
	tests := []struct {
		url  string
		args []string
		want string
	}{
		{plain, nil, map[bool]string{true: "epoll", false: "raw"}[runtime.GOOS == "linux"]},
		{plain, []string{"--engine", "raw"}, "raw"},
		{plain, []string{"--engine", "nethttp"}, "nethttp"},
		{plain, []string{"--rate", "50"}, "raw"},
		{tlsSrv.URL, []string{"--engine", "raw", "--insecure"}, "nethttp"},
		{tlsSrv.URL, []string{"--insecure"}, "nethttp"},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, []struct {
			url  string
			args []string
			want string
		}{
			{plain, []string{"--engine", "epoll"}, "epoll"},
			{plain, []string{"--engine", "epoll", "--rate", "50"}, "raw"},
		}...)
	}
	for _, tt := range tests {
		out := filepath.Join(t.TempDir(), "s.json")
		args := append([]string{"--url", tt.url, "--scenario", "discovery", "--warmup", "0", "--duration", "100ms", "-o", out}, tt.args...)
		if code, _, stderr := runArgs(context.Background(), args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, stderr)
		}
		if s := decodeStep(t, out); s.Driver.Engine != tt.want || s.Requests == 0 || s.OK != s.Requests {
			t.Errorf("%s %v: engine %q, %d requests %d ok; want engine %s, all ok", tt.url, tt.args, s.Driver.Engine, s.Requests, s.OK, tt.want)
		}
	}
}

func decodeStep(t *testing.T, path string) *schema.Step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := schema.DecodeStep(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSecretNeverPrinted(t *testing.T) {
	const secret = "tops3cret-value"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, pw, ok := r.BasicAuth(); !ok || id != "cid" || pw != secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"access_token":"at"}`)
	}))
	t.Cleanup(srv.Close)
	for _, source := range []string{"file", "env"} {
		t.Run(source, func(t *testing.T) {
			args := []string{"--url", srv.URL + "/token", "--scenario", "client_credentials", "--client-id", "cid",
				"--warmup", "0", "--duration", "100ms"}
			if source == "file" {
				t.Setenv("IDPBENCH_CLIENT_SECRET", "")
				args = append(args, "--client-secret-file", writeFile(t, t.TempDir(), "secret", secret+"\n"))
			} else {
				t.Setenv("IDPBENCH_CLIENT_SECRET", secret)
			}
			code, stdout, stderr := runArgs(context.Background(), args...)
			if code != 0 || !strings.Contains(stdout, `"ok"`) {
				t.Fatalf("exit %d stderr %q", code, stderr)
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Error("the secret appears in the output")
			}
			s, err := schema.DecodeStep(strings.NewReader(stdout), "-")
			if err != nil || s.OK == 0 || s.OK != s.Requests {
				t.Errorf("step %+v, %v: want every request authenticated", s, err)
			}
		})
	}
}

func TestOutputFailures(t *testing.T) {
	dir := t.TempDir()
	isDir := filepath.Join(dir, "taken")
	if err := os.Mkdir(isDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, out string }{
		{"directory does not exist", filepath.Join(dir, "missing", "s.json")},
		{"path is a directory", isDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runArgs(context.Background(), "--url", discoveryServer(t), "--scenario", "discovery",
				"--warmup", "0", "--duration", "50ms", "-o", tt.out)
			if code != 1 || !strings.Contains(stderr, tt.out) {
				t.Errorf("exit %d, stderr %q: want 1 naming %s", code, stderr, tt.out)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || entries[0].Name() != "taken" {
				t.Errorf("directory holds %v, want no new file", entries)
			}
			if sub, _ := os.ReadDir(isDir); len(sub) != 0 {
				t.Errorf("directory %s holds %v", isDir, sub)
			}
		})
	}
}

func TestUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	out := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr := runArgs(context.Background(), "--url", "http://"+addr+"/x", "--scenario", "discovery", "-o", out)
	if code != 1 || !strings.HasPrefix(stderr, "loadstep: connecting to "+addr+": ") || stdout != "" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
		t.Errorf("output directory holds %v", entries)
	}
}

func TestInterruptWritesResult(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.json")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	code, _, stderr := runArgs(ctx, "--url", discoveryServer(t), "--scenario", "discovery",
		"--warmup", "100ms", "--duration", "10s", "-o", out)
	if code != 130 {
		t.Fatalf("exit %d, want 130 (stderr %q)", code, stderr)
	}
	s := decodeStep(t, out)
	if s.Status != schema.StatusInterrupted || s.Requests == 0 || s.End.Sub(s.Start) > time.Second {
		t.Errorf("status %q, %d requests over %s", s.Status, s.Requests, s.End.Sub(s.Start))
	}
	if !strings.Contains(stderr, "interrupted") {
		t.Errorf("stderr %q", stderr)
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, stdout, _ := runArgs(context.Background(), "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{"--warmup", "(default 5s)", "--duration", "(default 10s)", "--timeout",
		"SENT", "service time under N outstanding requests", "IDPBENCH_CLIENT_SECRET", "&& aggregate summary",
		"--rate", "open_loop_intended_start", "back to back", "intended times never move", "--hlog", "RLIMIT_NOFILE"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if code, stdout, _ := runArgs(context.Background(), "--version"); code != 0 || !strings.HasPrefix(stdout, "loadstep ") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

// TestOutputToSpecialFile: an existing FIFO or symlink (think /dev/null,
// /dev/stdout) is written in place, never replaced by a renamed temp file.
func TestOutputToSpecialFile(t *testing.T) {
	dir := t.TempDir()
	target := writeFile(t, dir, "target.json", "")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	for _, out := range []string{link, fifo} {
		code, _, stderr := runArgs(context.Background(), "--url", discoveryServer(t), "--scenario", "discovery",
			"--warmup", "0", "--duration", "50ms", "-o", out)
		if code != 0 {
			t.Fatalf("-o %s: exit %d: %s", out, code, stderr)
		}
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symlink", link)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO", fifo)
	}
	decodeStep(t, target)
	if _, err := schema.DecodeStep(bytes.NewReader(<-got), fifo); err != nil {
		t.Errorf("reading the FIFO: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("directory holds %d entries, want 3 (no temp files)", len(entries))
	}
}
