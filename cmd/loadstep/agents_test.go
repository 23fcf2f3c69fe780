package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/load"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestParseStartAt: both forms parse to the same instant, to the
// nanosecond; anything else is a usage error naming the flag.
func TestParseStartAt(t *testing.T) {
	want := time.Date(2026, 12, 2, 3, 0, 0, 250_000_000, time.UTC)
	for _, in := range []string{"2026-12-02T03:00:00.250Z", "2026-12-02T04:00:00.25+01:00", "1796180400.25", "1796180400.250000000"} {
		got, err := parseStartAt(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseStartAt(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if got, err := parseStartAt("1796180400.000000001"); err != nil || got.Sub(want) != -250*time.Millisecond+time.Nanosecond {
		t.Errorf("nanoseconds: %s, %v; want exact", got, err)
	}
	if got, err := parseStartAt("2026-12-02T03:00:00Z"); err != nil || !got.Equal(want.Add(-250*time.Millisecond)) {
		t.Errorf("whole seconds: %s, %v", got, err)
	}
	for _, in := range []string{"tomorrow", "2026-12-02 03:00:00", "2026-12-02T03:00:00", "-5", "1.2.3", "17961804e2", ".5", "1796180400.1234567891", "0x10"} {
		if _, err := parseStartAt(in); err == nil || !strings.Contains(err.Error(), "--start-at") {
			t.Errorf("parseStartAt(%q): %v, want a usage error naming --start-at", in, err)
		}
	}
}

func TestParseSegment(t *testing.T) {
	for in, want := range map[string]load.Segment{"0/1": {Index: 0, Of: 1}, "2/3": {Index: 2, Of: 3}, "": {}} {
		if got, err := parseSegment(in); err != nil || got != want {
			t.Errorf("parseSegment(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"3/3", "-1/3", "1/0", "0/0", "1", "1/", "/3", "a/b", "1/3/5", "1 /3"} {
		if _, err := parseSegment(in); err == nil || !strings.Contains(err.Error(), "--segment") {
			t.Errorf("parseSegment(%q): %v, want a usage error naming --segment", in, err)
		}
	}
}

// TestAgentFlagsBadInput: a malformed TIME or SEGMENT, a share of no
// connections and --start-at with an adaptive warmup exit 2, naming the
// flags, before any load.
func TestAgentFlagsBadInput(t *testing.T) {
	url := discoveryServer(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--start-at", "soon"}, "--start-at"},
		{[]string{"--start-at", "2026-12-02T03:00"}, "--start-at"},
		{[]string{"--segment", "3/3"}, "--segment"},
		{[]string{"--segment", "x"}, "--segment"},
		{[]string{"--segment", "2/3", "-c", "2"}, "--segment 2/3: -c 2 leaves agent 2 no connection"},
		{[]string{"--start-at", "2099-01-01T00:00:00Z", "--warmup", "1s", "--warmup-max", "10s"}, "--warmup-max 10s above --warmup 1s"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runArgs(context.Background(), append([]string{"--url", url, "--scenario", "discovery", "--duration", "50ms"}, tt.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSuffix(stderr, cli.Hint("loadstep")+"\n"), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line containing %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestStartAtPastRefuses: an agent more than one --interval past
// --start-at exits 1 saying how late, and writes no result.
func TestStartAtPastRefuses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "late.json")
	past := time.Now().Add(-90 * time.Second).UTC().Format(time.RFC3339Nano)
	code, _, stderr := runArgs(context.Background(), "--url", discoveryServer(t), "--scenario", "discovery",
		"--warmup", "0", "--duration", "100ms", "--interval", "1s", "--start-at", past, "-o", out)
	if code != 1 || !strings.Contains(stderr, "loadstep: --start-at "+past) || !strings.Contains(stderr, "late, more than one --interval (1s)") {
		t.Errorf("exit %d, stderr %q; want 1 and the reason, how late", code, stderr)
	}
	if !strings.Contains(stderr, "1m30") && !strings.Contains(stderr, "1m29") {
		t.Errorf("stderr %q: want the lateness, about 1m30s", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused step left %s", out)
	}
}

// TestSegmentStep: an agent of a segmented closed-loop step with a common
// start runs its share and records it with the whole, the requested and
// the actual start; the summary line says so.
func TestSegmentStep(t *testing.T) {
	dir := t.TempDir()
	pool := writeFile(t, dir, "at.pool", "# idpbench-pool kind=access_token\na\nb\nc\nd\ne\nf\ng\n")
	out := filepath.Join(dir, "agent-1.json")
	at := time.Now().Add(500 * time.Millisecond).UTC()
	unix := fmt.Sprintf("%d.%09d", at.Unix(), at.Nanosecond())
	code, _, stderr := runArgs(context.Background(), "--url", discoveryServer(t)+"/userinfo", "--scenario", "userinfo", "--pool", pool,
		"-c", "10", "--segment", "1/3", "--start-at", unix, "--warmup", "50ms", "--duration", "200ms", "--interval", "2s", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	s := decodeStep(t, out)
	if s.Connections != 3 || s.Segment == nil || *s.Segment != (schema.Segment{Index: 1, Of: 3, TotalConnections: 10}) {
		t.Errorf("c=%d segment %+v: want agent 1's 3 of 10 connections", s.Connections, s.Segment)
	}
	if s.Pool == nil || s.Pool.Size != 2 { // lines b and e of a..g
		t.Errorf("pool %+v: want the segment's 2 credentials", s.Pool)
	}
	if s.StartAt == nil || !s.StartAt.Equal(at) || s.StartedAt == nil || s.StartedAt.Before(at) || s.StartLateMS == nil ||
		!s.Start.Equal(at.Add(50*time.Millisecond)) {
		t.Errorf("start_at %v, started_at %v, start_late_ms %v, window start %s: want %s, no earlier, and the window at +50ms",
			s.StartAt, s.StartedAt, s.StartLateMS, s.Start, at)
	}
	if !strings.Contains(stderr, "; segment 1/3 of c=10; started ") || strings.Count(strings.TrimSuffix(stderr, cli.Hint("loadstep")+"\n"), "\n") != 1 {
		t.Errorf("stderr %q: want the summary line with the segment", stderr)
	}
}
