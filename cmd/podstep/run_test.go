package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fixture is a step record as loadstep writes it (indented).
const fixture = "../../internal/schema/testdata/step-v1.json"

// fakeLoadstep writes a stand-in for loadstep: it records its arguments
// in DIR/args, says something on stderr without a final newline, and then,
// by $FAKE: "ok" copies the fixture to --output and exits 0; "lost" does so
// and exits 4; "usage" exits 2 and writes nothing; "silent" exits 0 and
// writes nothing; "term" waits for SIGTERM, then writes the fixture with
// status interrupted and exits 130.
func fakeLoadstep(t *testing.T) (bin, dir string) {
	t.Helper()
	dir = t.TempDir()
	src, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/bash
out=""
for a in "$@"; do case "$a" in --output=*) out="${a#--output=}" ;; esac; done
printf '%s\n' "$@" >"` + dir + `/args"
printf 'loadstep: a line on stdout\n'
printf 'loadstep: summary without a newline' >&2
case "$FAKE" in
ok) cp "` + src + `" "$out" ;;
lost) cp "` + src + `" "$out"; exit 4 ;;
usage) echo 'loadstep: bad flag' >&2; exit 2 ;;
silent) ;;
term)
	trap 'sed "s/\"status\": \"complete\"/\"status\": \"interrupted\"/" "` + src + `" >"$out"; exit 130' TERM
	touch "` + dir + `/ready"
	for ((i = 0; i < 600; i++)); do sleep 0.05; done
	exit 9 ;;
esac
`
	bin = filepath.Join(dir, "loadstep")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

func runPodstep(t *testing.T, ctx context.Context, fake string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("FAKE", fake)
	var out, errb bytes.Buffer
	code = run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// lastLine returns the output's last line and what came before it; the
// output must end with a newline.
func lastLine(t *testing.T, out string) (last string, before []string) {
	t.Helper()
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("output does not end with a newline: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1], lines[:len(lines)-1]
}

// sameJSON reports whether the line holds the same JSON value as the fixture.
func sameJSON(t *testing.T, line string, status string) {
	t.Helper()
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var want, got map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	want["status"] = status
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("last line is not JSON: %v: %.200q", err, line)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("last line is not the record loadstep wrote")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(line)); err != nil || compact.String() != line {
		t.Errorf("last line is not compact JSON")
	}
}

func TestRecordIsTheLastLine(t *testing.T) {
	bin, dir := fakeLoadstep(t)
	step := filepath.Join(dir, "step.json")
	code, stdout, stderr := runPodstep(t, context.Background(), "ok",
		"--step-file", step, "--", bin, "--scenario", "discovery", "-c", "4")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	last, before := lastLine(t, stdout)
	sameJSON(t, last, "complete")
	// loadstep's stdout and stderr came first, through the same stream; the
	// summary without a newline was ended so the record starts its own line.
	if want := []string{"loadstep: a line on stdout", "loadstep: summary without a newline"}; !reflect.DeepEqual(before, want) {
		t.Errorf("lines before the record %q, want %q", before, want)
	}
	args, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(args), "--output="+step+"\n--scenario\ndiscovery\n-c\n4\n"; got != want {
		t.Errorf("loadstep got args %q, want %q", got, want)
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		fake   string
		code   int
		record bool   // the last line is the record
		say    string // else stdout must say this
	}{
		{"lost", 4, true, "loadstep exited with status 4; its record follows"},
		{"usage", 2, false, "loadstep exited with status 2 and no record to report"},
		{"silent", 1, false, "loadstep exited with status 0 and no record to report"},
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			bin, dir := fakeLoadstep(t)
			code, stdout, _ := runPodstep(t, context.Background(), tt.fake,
				"--step-file", filepath.Join(dir, "step.json"), "--", bin)
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if !strings.Contains(stdout, "podstep: "+tt.say) {
				t.Errorf("stdout %q does not say %q", stdout, tt.say)
			}
			last, _ := lastLine(t, stdout)
			if tt.record {
				sameJSON(t, last, "complete")
			} else if strings.HasPrefix(last, "{") {
				t.Errorf("last line %q looks like a record, want none", last)
			}
		})
	}
}

// The first SIGTERM (here: the context's end) reaches loadstep as SIGTERM;
// podstep waits for its interrupted record and reports it.
func TestInterruptPassedOn(t *testing.T) {
	bin, dir := fakeLoadstep(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
				break
			}
		}
		cancel()
	}()
	code, stdout, stderr := runPodstep(t, ctx, "term", "--step-file", filepath.Join(dir, "step.json"), "--", bin)
	if code != 130 {
		t.Fatalf("exit %d, want 130 (stdout %q, stderr %q)", code, stdout, stderr)
	}
	last, _ := lastLine(t, stdout)
	sameJSON(t, last, "interrupted")
}

func TestUsage(t *testing.T) {
	bin, dir := fakeLoadstep(t)
	step := filepath.Join(dir, "step.json")
	exists := filepath.Join(dir, "exists.json")
	if err := os.WriteFile(exists, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		say  string
	}{
		{"no step file", []string{"--", bin}, "--step-file FILE is required"},
		{"stdout as step file", []string{"--step-file", "-", "--", bin}, "--step-file FILE is required"},
		{"no command", []string{"--step-file", step}, "no loadstep command line"},
		{"-o", []string{"--step-file", step, "--", bin, "-o", "x.json"}, `"-o" sets the output`},
		{"-oFILE", []string{"--step-file", step, "--", bin, "-ox.json"}, `"-ox.json" sets the output`},
		{"--output", []string{"--step-file", step, "--", bin, "--output", "x.json"}, `"--output" sets the output`},
		{"--output=", []string{"--step-file", step, "--", bin, "--output=-"}, `"--output=-" sets the output`},
		{"stale record", []string{"--step-file", exists, "--", bin}, "exists already"},
		{"unknown flag", []string{"--bogus", "--step-file", step, "--", bin}, "--bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runPodstep(t, context.Background(), "ok", tt.args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			if !strings.HasPrefix(stderr, "podstep: ") || !strings.Contains(stderr, tt.say) {
				t.Errorf("stderr %q does not say %q", stderr, tt.say)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "args")); err == nil {
		t.Error("loadstep ran despite a usage error")
	}
}

func TestMissingLoadstep(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runPodstep(t, context.Background(), "ok",
		"--step-file", filepath.Join(dir, "step.json"), "--", filepath.Join(dir, "nothing-here"))
	if code != 1 || stdout != "" || !strings.Contains(stderr, "podstep: starting ") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1 and a start error", code, stdout, stderr)
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, stdout, _ := runPodstep(t, context.Background(), "ok", "--help")
	for _, want := range []string{"Usage: podstep --step-file FILE -- LOADSTEP", "--step-file FILE", "--version", "Example", "tail -n 1"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("--help: exit %d, output lacks %q", code, want)
		}
	}
	code, stdout, _ = runPodstep(t, context.Background(), "ok", "--version")
	if code != 0 || !strings.HasPrefix(stdout, "podstep ") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}
