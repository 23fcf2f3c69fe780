package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/nginxtest"
)

const key = "0123456789abcdef0123456789abcdef" // 32 characters

// config is a zitadel.yaml as far as the stand-in reads one: the port and
// the first instance's PAT path.
func config(t *testing.T, dir string, port int) string {
	t.Helper()
	path := filepath.Join(dir, "zitadel.yaml")
	text := fmt.Sprintf("Port: %d\nExternalPort: %d\nFirstInstance:\n  PatPath: %s\n", port, port, filepath.Join(dir, "pat"))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStandinRefuses: each start the adapter must not make exits 1 with
// its reason on stderr, and logs nothing.
func TestStandinRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the stand-in")
	}
	bin := nginxtest.Build(t, "products/zitadel/zitadeltest/standin")["standin"]
	// The configs' port is held here: a stand-in that wrongly passes a
	// check fails to listen, at once, instead of serving until the timeout.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	cfg := config(t, dir, port)
	keyed := filepath.Join(dir, "keyed.yaml")
	if err := os.WriteFile(keyed, []byte(fmt.Sprintf("Port: %d\nMasterkey: %s\n", port, key)), 0o600); err != nil {
		t.Fatal(err)
	}
	portless := filepath.Join(dir, "portless.yaml")
	if err := os.WriteFile(portless, []byte("ExternalPort: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	patless := filepath.Join(dir, "patless.yaml")
	if err := os.WriteFile(patless, []byte(fmt.Sprintf("Port: %d\n", port)), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "standin.log")
	good := []string{"ZITADEL_MASTERKEY=" + key, "ZITADEL_FIRSTINSTANCE_ORG_HUMAN_PASSWORD=pw", "ZITADEL_STANDIN_LOG=" + log}
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"no argv", nil, good, `stand-in: want start-from-init or start, got []`},
		{"another subcommand", []string{"init", "--config", cfg}, good,
			`stand-in: want start-from-init or start, got ["init" "--config" "` + cfg + `"]`},
		{"no --masterkeyFromEnv", []string{"start", "--config", cfg}, good, "stand-in: want --masterkeyFromEnv and --config"},
		{"no --config", []string{"start", "--masterkeyFromEnv"}, good, "stand-in: want --masterkeyFromEnv and --config"},
		{"no masterkey", []string{"start", "--config", cfg, "--masterkeyFromEnv"}, good[1:],
			"stand-in: ZITADEL_MASTERKEY has 0 characters, want 32"},
		{"short masterkey", []string{"start", "--config", cfg, "--masterkeyFromEnv"},
			append([]string{"ZITADEL_MASTERKEY=" + key[1:]}, good[1:]...), "stand-in: ZITADEL_MASTERKEY has 31 characters, want 32"},
		{"masterkey in argv", []string{"start", "--config", cfg, "--masterkeyFromEnv", "--masterkey=" + key}, good,
			"stand-in: the masterkey is in argv"},
		{"masterkey in the config", []string{"start", "--config", keyed, "--masterkeyFromEnv"}, good,
			"stand-in: the masterkey is in the config file"},
		{"no Port line", []string{"start", "--config", portless, "--masterkeyFromEnv"}, good,
			"stand-in: no Port: line in " + portless},
		{"no admin password", []string{"start-from-init", "--config", cfg, "--masterkeyFromEnv"},
			[]string{good[0], good[2]}, "stand-in: no first-instance admin password in the environment"},
		{"no PatPath line", []string{"start-from-init", "--config", patless, "--masterkeyFromEnv"}, good,
			"stand-in: no PatPath: line in " + patless},
		{"no log", []string{"start", "--config", cfg, "--masterkeyFromEnv"}, good[:2], "stand-in: ZITADEL_STANDIN_LOG is not set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, c.args...)
			cmd.Env = c.env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || stderr.String() != c.want+"\n" || stdout.Len() != 0 {
				t.Errorf("stand-in %q: %v, stdout %q, stderr %q; want exit 1 and %q", c.args, err, &stdout, &stderr, c.want)
			}
			if _, err := os.Stat(log); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stand-in %q: a refused start wrote the log %s (%v)", c.args, log, err)
				os.Remove(log)
			}
		})
	}
	for _, arg := range []string{"--help", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil || !strings.HasPrefix(string(out), "zitadel stand-in") {
			t.Errorf("stand-in %s: %v, %q; want exit 0 and a line", arg, err, out)
		}
	}
}

// TestStandinServes: start-from-init writes the PAT, then it and start each
// log their argv, answer 200 on /debug/ready (404 elsewhere) on 127.0.0.1
// and end on TERM, promptly and with 0, as the adapter stops them.
func TestStandinServes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and starts the stand-in")
	}
	bin := nginxtest.Build(t, "products/zitadel/zitadeltest/standin")["standin"]
	dir := t.TempDir()
	port := nginxtest.FreePort(t)
	cfg, log := config(t, dir, port), filepath.Join(dir, "standin.log")
	t.Setenv("ZITADEL_MASTERKEY", key)
	t.Setenv("ZITADEL_STANDIN_LOG", log)
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	var want string
	for _, sub := range []string{"start-from-init", "start"} {
		pw := ""
		if sub == "start-from-init" {
			pw = "pw"
		}
		t.Setenv("ZITADEL_FIRSTINSTANCE_ORG_HUMAN_PASSWORD", pw)
		argv := []string{bin, sub, "--config", cfg, "--masterkeyFromEnv", "--tlsMode", "disabled"}
		p := nginxtest.Start(t, dir, sub, argv...)
		nginxtest.WaitHTTP(t, url+"/debug/ready", p)
		resp, err := http.Get(url + "/debug/readyz")
		if err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: GET /debug/readyz: %v, %v; want 404", sub, resp, err)
		}
		if resp != nil {
			resp.Body.Close()
		}
		p.Kill(t, syscall.SIGTERM)
		if code := p.Wait(t, 5*time.Second); code != 0 {
			t.Errorf("%s: exit %d after TERM, want 0; log: %s", sub, code, p.LogText())
		}
		want += strings.Join(argv[1:], " ") + "\n"
	}
	if b, err := os.ReadFile(log); err != nil || string(b) != want {
		t.Errorf("log %s: %q, %v; want %q", log, b, err, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "pat")); err != nil || string(b) != "stand-in-pat\n" {
		t.Errorf("PAT: %q, %v; want %q", b, err, "stand-in-pat\n")
	}
}
