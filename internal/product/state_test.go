package product

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// trickyValues are values state_set must carry: what printf %q escapes
// with backslashes, what it writes as $'...', and what it leaves alone.
var trickyValues = map[string]string{
	"EMPTY": "", "PLAIN": "plain", "SPACE": "a b", "QUOTE": "it's", "DQUOTE": `say "hi"`, "DOLLAR": "$HOME",
	"BACKTICK": "`x`", "BACKSLASH": `back\slash`, "NEWLINE": "new\nline", "TILDE": "~tilde", "HASH": "#hash",
	"UNICODE": "ü-unicode", "MIDTILDE": "a~b:~c", "GLOB": "*?[x] {a,b}", "EQUALS": "a=b", "LATER": "second", "TAB": "tab\there",
	"CONTROL": "\x01ctl\x1b[0m",
}

// TestReadEnvFilePrintfQ: testdata/state/printf-q.env was written by
// bash 5.2's printf '%s=%q\n' (state_set's) from trickyValues (LATER twice:
// the later line wins).
func TestReadEnvFilePrintfQ(t *testing.T) {
	env, err := readEnvFile(filepath.Join("testdata", "state", "printf-q.env"))
	if err != nil {
		t.Fatal(err)
	}
	checkEnv(t, env, trickyValues)
}

// TestReadEnvFileBash: what this machine's bash writes with state_set's
// printf reads back as the value, and the fabricated states' files read.
func TestReadEnvFileBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := `for k in "${!V[@]}"; do printf '%s=%q\n' "$k" "${V[$k]}"; done`
	var decl strings.Builder
	decl.WriteString("declare -A V=(")
	for k := range trickyValues {
		decl.WriteString("[" + k + "]=\"$" + k + "\" ")
	}
	decl.WriteString(")\n")
	cmd := exec.Command(bash, "-c", decl.String()+script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range trickyValues {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "state.env")
	if err := os.WriteFile(name, out, 0o600); err != nil {
		t.Fatal(err)
	}
	env, err := readEnvFile(name)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkEnv(t, env, trickyValues)
}

func checkEnv(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %q (recorded %v), want %q", k, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d values, want %d: %q", len(got), len(want), got)
	}
}

// TestShellWord: the quoting forms a hand-written state or pg.env uses
// read as bash assigns them; expansions and second words are errors.
func TestShellWord(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`'a b'`, "a b"}, {`"a \"b\" \$c \\ \x"`, `a "b" $c \ \x`}, {`pre'mid'"post"`, "premidpost"},
		{`$'\x41\101\u00fc\q'`, `AAü\q`}, {`a~b`, "a~b"}, {`a:~b`, ""}, {`http://127.0.0.1:8080/`, "http://127.0.0.1:8080/"},
	} {
		got, err := shellWord(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("shellWord(%q) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("shellWord(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"$HOME", "a b", "`x`", `"$x"`, `'open`, `"open`, `$'open`, `a\`, "~/x", "a;b", "$(x)"} {
		if got, err := shellWord(bad); err == nil {
			t.Errorf("shellWord(%q) = %q, want an error", bad, got)
		}
	}
}

func TestReadEnvFileBadLine(t *testing.T) {
	name := filepath.Join(t.TempDir(), "state.env")
	if err := os.WriteFile(name, []byte("A=1\n\n# a comment\nB=$(id)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readEnvFile(name); err == nil || !strings.Contains(err.Error(), "state.env:4: B:") {
		t.Errorf("err = %v, want one naming state.env:4 and B", err)
	}
	if err := os.WriteFile(name, []byte("not an assignment\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readEnvFile(name); err == nil || !strings.Contains(err.Error(), ":1: not a KEY=value line") {
		t.Errorf("err = %v", err)
	}
}

// TestPGUser: the user every product connects as is postgres.sh's.
func TestPGUser(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "lib", "postgres.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\nPG_DB_USER="+PGUser+"\n") {
		t.Errorf("scripts/lib/postgres.sh sets no PG_DB_USER=%s", PGUser)
	}
}

// TestSampleArgs: the sampler follows the product's process group, and its
// database on the cluster it recorded (the first of DIR/dbs) when it has one;
// in compose mode, the project's containers and the compose PostgreSQL.
func TestSampleArgs(t *testing.T) {
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pg, dir := t.TempDir(), t.TempDir()
	write(filepath.Join(pg, "pg.env"), "PG_DIR='"+pg+"'\nPG_PORT='54321'\n")
	tests := []struct {
		name, env, dbs string
		want           []string
	}{
		{"no database", "ISSUER=http://127.0.0.1:9000/\n", "", []string{"--pidfile", filepath.Join(dir, "pids", "refop.pid"), "--name", "refop"}},
		{"a cluster, no database yet", "PG_SHARED_DIR=" + pg + "\n", "", []string{"--pidfile", filepath.Join(dir, "pids", "refop.pid"), "--name", "refop"}},
		{"its database", "PG_PRIVATE_DIR=" + pg + "\n", "hydra_db\nother_db\n", []string{"--pidfile", filepath.Join(dir, "pids", "refop.pid"), "--name", "refop",
			"--postgres", "postgres://idpbench@127.0.0.1:54321/hydra_db?sslmode=disable", "--pg-reset"}},
		{"compose mode", "MODE=compose\nCOMPOSE_PG_PORT=45678\nCOMPOSE_DB=hydra\n", "", []string{"--docker", "idpbench-*",
			"--postgres", "postgres://idpbench@127.0.0.1:45678/hydra?sslmode=disable", "--pg-reset"}},
	}
	for _, tt := range tests {
		write(filepath.Join(dir, "state.env"), tt.env)
		os.Remove(filepath.Join(dir, "dbs"))
		if tt.dbs != "" {
			write(filepath.Join(dir, "dbs"), tt.dbs)
		}
		st, err := ReadState(dir, "refop")
		if err != nil {
			t.Fatal(err)
		}
		if got := st.SampleArgs(); strings.Join(got, " ") != strings.Join(tt.want, " ") || st.Err() != nil {
			t.Errorf("%s: %q (%v), want %q", tt.name, got, st.Err(), tt.want)
		}
	}
}

// TestPortsAndPGDir: the *_PORT values by key (printf %q's quoting undone),
// nothing else; the private cluster before the shared one, "" for none.
func TestPortsAndPGDir(t *testing.T) {
	dir := t.TempDir()
	env := "PUBLIC_PORT=4444\nADMIN_PORT=$'4445'\nPORTS=1\nISSUER=http://127.0.0.1:4444/\nPG_SHARED_DIR=/s\nPG_PRIVATE_DIR=/p\n"
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := ReadState(dir, "hydra")
	if err != nil {
		t.Fatal(err)
	}
	checkEnv(t, st.Ports(), map[string]string{"PUBLIC_PORT": "4444", "ADMIN_PORT": "4445"})
	if st.PGDir() != "/p" {
		t.Errorf("PGDir = %q, want the private /p", st.PGDir())
	}
	if err := os.WriteFile(filepath.Join(dir, "state.env"), []byte("PUBLIC_PORT=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, _ = ReadState(dir, "hydra"); st.PGDir() != "" {
		t.Errorf("PGDir without a cluster = %q, want none", st.PGDir())
	}
}
