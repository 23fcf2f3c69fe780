package compose

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/products"
)

// The compose mode of the product adapters (scripts/lib/compose.sh) cannot
// start a container where no Docker engine runs. These tests drive the real
// adapters through a stand-in compose command instead: it records its
// arguments and, for `up`, serves 200 on the run's published ports, so the
// mode selection, the commands, the cold start records, the sampler
// arguments, the meta and down's checks are exercised end to end.

// modeEnv is the environment of an adapter run: nothing from the caller's
// IDPBENCH_* variables, tools and caches in dir.
func modeEnv(dir string, extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"IDPBENCH_CACHE=" + filepath.Join(dir, "cache"),
		"IDPBENCH_TMP=" + dir,
		"IDPBENCH_BIN=" + filepath.Join(dir, "bin"),
	}
	return append(env, extra...)
}

// modeBash runs a bash snippet with scripts/lib/adapter.sh sourced.
func modeBash(t *testing.T, env []string, snippet string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "bash", "-c",
		`set -o errexit -o nounset -o pipefail; source "$1/scripts/lib/adapter.sh"; `+snippet, "bash", root)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not found: compose mode checks need it", n)
		}
	}
}

// fakeDocker writes a `docker` that answers `info` with the given status.
func fakeDocker(t *testing.T, dir string, infoStatus int) string {
	t.Helper()
	bin := filepath.Join(dir, "fakebin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n[ \"$1\" = info ] && exit " + map[bool]string{true: "0", false: "1"}[infoStatus == 0] + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestModeSelection(t *testing.T) {
	needTools(t, "bash", "jq", "python3")
	dir := t.TempDir()
	up := fakeDocker(t, filepath.Join(dir, "up"), 0)
	down := fakeDocker(t, filepath.Join(dir, "down"), 1)
	cases := []struct {
		name    string
		env     []string
		want    string
		wantErr bool
	}{
		{"engine answers", []string{"PATH=" + up + ":" + os.Getenv("PATH")}, "compose", false},
		{"engine does not answer", []string{"PATH=" + down + ":" + os.Getenv("PATH")}, "native", false},
		{"stub true", []string{"IDPBENCH_DOCKER=true"}, "compose", false},
		{"stub false", []string{"IDPBENCH_DOCKER=false"}, "native", false},
		{"override native over an engine", []string{"IDPBENCH_MODE=native", "IDPBENCH_DOCKER=true"}, "native", false},
		{"override compose without an engine", []string{"IDPBENCH_MODE=compose", "IDPBENCH_DOCKER=false"}, "compose", false},
		{"bad mode", []string{"IDPBENCH_MODE=kubernetes"}, "", true},
		{"bad stub", []string{"IDPBENCH_DOCKER=maybe"}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := modeBash(t, modeEnv(dir, tc.env...), "idpbench_mode")
			if tc.wantErr {
				if err == nil {
					t.Errorf("idpbench_mode = %q, want an error", out)
				}
				return
			}
			if err != nil || strings.TrimSpace(out) != tc.want {
				t.Errorf("idpbench_mode = %q (%v), want %q", out, err, tc.want)
			}
		})
	}
}

// fakeCompose is the stand-in compose command: it appends its arguments to
// $FAKE_COMPOSE_LOG; `up` serves 200 on every IDPBENCH_*_PORT of the env
// file except PostgreSQL's, until stopped; `ps` prints $FAKE_COMPOSE_LEFT, or fails as an unreachable engine does when
// $FAKE_COMPOSE_PS_FAIL is set; `config --format json` gives the services
// of the first -f file with their container names.
const fakeCompose = `#!/usr/bin/env bash
printf '%s\n' "$*" >>"$FAKE_COMPOSE_LOG"
envfile="" sub="" file=""
while (($# > 0)); do
	case "$1" in
	--project-directory) shift 2 ;;
	-f) file="${file:-$2}" && shift 2 ;;
	--env-file) envfile="$2" && shift 2 ;;
	*) sub="$1" && break ;;
	esac
done
case "$sub" in
up)
	ports="$(sed -n 's/^IDPBENCH_\([A-Z_]*\)_PORT=\([0-9]*\)$/\1 \2/p' "$envfile" | grep -v '^PG ' | cut -d' ' -f2)"
	exec python3 -c '
import http.server, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *a): pass
servers = [http.server.ThreadingHTTPServer(("127.0.0.1", int(p)), H) for p in sys.argv[1:]]
for s in servers[1:]:
    threading.Thread(target=s.serve_forever, daemon=True).start()
servers[0].serve_forever()' $ports ;;
ps)
	if [[ -n "${FAKE_COMPOSE_PS_FAIL:-}" ]]; then
		echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock" >&2
		exit 1
	fi
	printf '%s' "${FAKE_COMPOSE_LEFT:-}" ;;
config)
	awk '/^  [a-z][a-z0-9-]*:$/ { svc = substr($1, 1, length($1) - 1) } /^    container_name:/ { print svc, $2 }' "$file" |
		jq -R -s '{services: (split("\n") | map(select(. != "") | split(" ") | {key: .[0], value: {container_name: .[1]}}) | from_entries)}' ;;
esac
exit 0
`

// fakeInspect is the stand-in docker of the lifecycle test: `inspect` gives
// two containers, one of a local equivalent (its image labelled
// org.idpbench.local) and one of an official image, as compose_images reads them.
const fakeInspect = `#!/bin/sh
case "$1" in
inspect) cat <<'JSON'
[{"Name": "/idpbench-x", "Image": "sha256:1111", "Config": {"Image": "idpbench/x:1.0-local", "Labels": {"com.docker.compose.service": "x"}}},
 {"Name": "/idpbench-postgres", "Image": "sha256:2222", "Config": {"Image": "postgres:15.18-bookworm", "Labels": {"com.docker.compose.service": "postgres"}}}]
JSON
;;
image) cat <<'JSON'
[{"Id": "sha256:1111", "Config": {"Labels": {"org.idpbench.local": "x/x:1.0"}}}, {"Id": "sha256:2222", "Config": {"Labels": null}}]
JSON
;;
*) exit 1 ;;
esac
`

// buildTools builds cmd/coldstart (adapter_coldstart needs it),
// cmd/provision (the meta, the N/A reasons, the placement override and the
// limits) and cmd/runstate (down's check of what is left) into dir/bin.
func buildTools(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "bin")+"/", "../../cmd/coldstart", "../../cmd/provision", "../../cmd/runstate")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building coldstart, provision and runstate: %v: %s", err, out)
	}
}

func TestComposeLifecycle(t *testing.T) {
	needTools(t, "bash", "jq", "python3", "curl", "go")
	if testing.Short() {
		t.Skip("-short: builds coldstart, provision and runstate and starts stand-in servers")
	}
	dir := t.TempDir()
	buildTools(t, dir)
	fake := filepath.Join(dir, "compose")
	if err := os.WriteFile(fake, []byte(fakeCompose), 0o755); err != nil {
		t.Fatal(err)
	}
	fakebin := filepath.Join(dir, "fakebin")
	if err := os.MkdirAll(fakebin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fakebin, "docker"), []byte(fakeInspect), 0o755); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		product, db, heapDeviation, limits string
	}{
		{"hydra", "hydra", "", "hydra-migrate 2G, hydra 2G"},
		{"keycloak", "keycloak", "JAVA_OPTS_KC_HEAP", "keycloak 2G"},
		{"zitadel", "zitadel", "native mode connects as the cluster superuser", "zitadel 2G"},
	}
	for _, tc := range cases {
		t.Run(tc.product, func(t *testing.T) {
			log := filepath.Join(dir, tc.product+".log")
			state := filepath.Join(dir, tc.product+"-state")
			env := modeEnv(dir, "IDPBENCH_MODE=compose", "IDPBENCH_DOCKER_COMPOSE="+fake,
				"FAKE_COMPOSE_LOG="+log)
			env[0] = "PATH=" + fakebin + ":" + os.Getenv("PATH")
			adapter := `"$1/products/` + tc.product + `/adapter" `
			run := func(args string, extra ...string) string {
				t.Helper()
				out, err := modeBash(t, append(env, extra...), adapter+args)
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", tc.product, args, err, out)
				}
				return out
			}
			t.Cleanup(func() { _, _ = modeBash(t, env, adapter+"down "+state) })

			// While it runs, `compose ps -a -q` lists its containers (compose_images).
			run("up "+state, "FAKE_COMPOSE_LEFT=c0ffee")
			run("restart "+state, "FAKE_COMPOSE_LEFT=c0ffee")
			checkComposeState(t, state, tc.db)
			for _, mode := range []string{"A", "B"} {
				var rec struct {
					Status, Mode   string
					PeakMeasuredAs string `json:"peak_measured_as"`
				}
				readJSON(t, filepath.Join(state, "coldstart-"+mode+".json"), &rec)
				// The peak is the containers' (the stand-in engine lists none), never the compose client's.
				if rec.Status != "complete" || rec.Mode != mode || rec.PeakMeasuredAs != "cgroup" {
					t.Errorf("coldstart-%s.json: status %q mode %q peak_measured_as %q, want complete %s cgroup",
						mode, rec.Status, rec.Mode, rec.PeakMeasuredAs, mode)
				}
			}
			checkComposeArgs(t, log, tc.product)

			entry, _ := products.Lookup(tc.product)
			sample, _, err := entry.SampleArgs(state)
			if err != nil {
				t.Fatalf("the sampler's arguments: %v", err)
			}
			want := regexp.MustCompile(`^--docker idpbench-\* --postgres postgres://idpbench@127\.0\.0\.1:\d+/` + tc.db + `\?sslmode=disable --pg-reset$`)
			if got := strings.Join(sample, " "); !want.MatchString(got) {
				t.Errorf("the sampler's arguments %q, want %s", got, want)
			}

			var meta struct {
				Settings   map[string]string
				Notes      []string
				Deviations []struct{ What string }
				Images     []map[string]string
			}
			// The meta as the run writes it: provision meta on the entry's
			// arguments and the state, compose mode's database asked with the pgpass.
			metaErr := filepath.Join(dir, tc.product+"-meta.err")
			name, metaArgs, err := entry.MetaArgs(state)
			if err != nil {
				t.Fatalf("the meta's arguments: %v", err)
			}
			provision := `PGPASSFILE=` + quote(filepath.Join(state, "secrets", "pgpass")) + ` "$(tool provision)" meta --product ` + quote(name) +
				` --product-version "$(` + adapter + `version)" --state ` + quote(state)
			for _, a := range metaArgs {
				provision += " " + quote(a)
			}
			out, err := modeBash(t, env, provision+" 2>"+quote(metaErr))
			if err != nil {
				t.Fatalf("provision meta: %v\n%s", err, out)
			}
			if err := json.Unmarshal([]byte(out), &meta); err != nil {
				t.Fatalf("meta: %v", err)
			}
			// The stand-in runs no PostgreSQL: the database is missing from the record, saying why.
			if e := readText(t, metaErr); !strings.Contains(e, "the compose PostgreSQL did not answer") {
				t.Errorf("meta's stderr: %q, want the warning that the compose PostgreSQL did not answer", e)
			}
			// The limits come from the file (provision compose limits), in its order.
			if meta.Settings["mode"] != "compose" || meta.Settings["memory_limit"] != "postgres 2G, "+tc.limits {
				t.Errorf("meta settings: mode %q, memory_limit %q; want compose, %q",
					meta.Settings["mode"], meta.Settings["memory_limit"], "postgres 2G, "+tc.limits)
			}
			// The images the containers ran, by ID, sorted by service, local or official.
			wantImages := []map[string]string{
				{"service": "postgres", "container": "idpbench-postgres", "ref": "postgres:15.18-bookworm", "id": "sha256:2222", "origin": "official"},
				{"service": "x", "container": "idpbench-x", "ref": "idpbench/x:1.0-local", "id": "sha256:1111", "origin": "local", "stands_for": "x/x:1.0"},
			}
			if got, _ := json.Marshal(meta.Images); string(got) != mustJSON(t, wantImages) {
				t.Errorf("meta images = %s, want %s", got, mustJSON(t, wantImages))
			}
			for _, d := range meta.Deviations {
				if tc.heapDeviation != "" && strings.HasPrefix(d.What, tc.heapDeviation) {
					t.Errorf("meta keeps the native-only deviation %q in compose mode", d.What)
				}
			}
			// A container left after down fails down, naming it.
			if out, err := modeBash(t, append(env, "FAKE_COMPOSE_LEFT=0123abcd"), adapter+"down "+state); err == nil ||
				!strings.Contains(out, "0123abcd") {
				t.Errorf("down with a container left: err %v, output %q; want a failure naming 0123abcd", err, out)
			}
			// A `compose ps` that fails cannot say nothing is left: down fails, saying so.
			if out, err := modeBash(t, append(env, "FAKE_COMPOSE_PS_FAIL=1"), adapter+"down "+state); err == nil ||
				!strings.Contains(out, "compose ps failed after compose down") {
				t.Errorf("down with a failing compose ps: err %v, output %q; want a failure saying compose ps failed", err, out)
			}
			run("down " + state)
		})
	}
}

// checkComposeState: compose mode recorded, the env file and the pgpass
// file private and holding what compose and the sampler need.
func checkComposeState(t *testing.T, state, db string) {
	t.Helper()
	stateEnv := readText(t, filepath.Join(state, "state.env"))
	for _, want := range []string{"MODE=compose", "COMPOSE_DB=" + db, "COMPOSE_PG_PORT="} {
		if !strings.Contains(stateEnv, want) {
			t.Errorf("state.env has no %s:\n%s", want, stateEnv)
		}
	}
	for _, f := range []string{"compose.env", "pgpass"} {
		fi, err := os.Stat(filepath.Join(state, "secrets", f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("secrets/%s: mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if env := readText(t, filepath.Join(state, "secrets", "compose.env")); !regexp.MustCompile(`(?m)^IDPBENCH_PG_PASSWORD=\w{24}$`).MatchString(env) {
		t.Error("compose.env: no generated IDPBENCH_PG_PASSWORD")
	}
}

// checkComposeArgs: every call names the product's file, in its folder,
// which is the project directory (its relative paths resolve against it),
// and the run's env file; mode A dropped the volume before its `up`; B
// stopped and started; each listed the containers once ready.
func checkComposeArgs(t *testing.T, log, product string) {
	t.Helper()
	file := filepath.Join(mustAbs(t, repoRoot), "products", product, "compose.yml")
	lines := strings.Split(strings.TrimSpace(readText(t, log)), "\n")
	var subs []string
	for _, l := range lines {
		if !strings.Contains(l, "--project-directory "+filepath.Dir(file)+" -f "+file+" ") ||
			!strings.Contains(l, "--env-file ") || !strings.Contains(l, "/secrets/compose.env") {
			t.Errorf("compose call without the product's folder and file or the run's env file: %s", l)
		}
		subs = append(subs, l[strings.Index(l, "compose.env ")+len("compose.env "):])
	}
	// Each `up` once ready: `ps -a -q`, the containers whose images the meta records.
	want := []string{"down -v --remove-orphans", "config --format json", "up --no-build --no-color --abort-on-container-failure", "ps -a -q",
		"stop", "config --format json", "up --no-build --no-color --abort-on-container-failure", "ps -a -q"}
	if strings.Join(subs, "|") != strings.Join(want, "|") {
		t.Errorf("compose calls %q, want %q", subs, want)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(readText(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// quote is s in single quotes for bash.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
