package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestRateWithHlog: --rate makes an open-loop step; --hlog writes its
// interval histograms, which hdrhistogram-go's HistogramLogReader reads
// back with the counts of the step's intervals.
func TestRateWithHlog(t *testing.T) {
	dir := t.TempDir()
	out, hlog := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.hlog")
	code, stdout, stderr := runArgs(context.Background(), "--url", discoveryServer(t), "--scenario", "discovery",
		"-c", "2", "--rate", "200", "--warmup", "0", "--duration", "300ms", "--interval", "100ms", "-o", out, "--hlog", hlog)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "rate=200") || !strings.Contains(stderr, "corrected p50") {
		t.Errorf("stderr %q: want the rate-mode summary", stderr)
	}
	s := decodeStep(t, out)
	if s.RateRPS != 200 || s.LatencyModel != schema.ModelOpenLoop || s.Requests != 60 || s.CorrectedLatencyMS == nil || s.Late == nil {
		t.Fatalf("step: rate_rps %v, model %q, %d requests, corrected %v, late %v", s.RateRPS, s.LatencyModel, s.Requests, s.CorrectedLatencyMS, s.Late)
	}
	f, err := os.Open(hlog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	var counts []int64
	var tags []string
	for range 100 {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		counts, tags = append(counts, h.TotalCount()), append(tags, h.Tag())
	}
	var want []int64
	for _, iv := range s.Intervals {
		want = append(want, iv.Requests, iv.Requests) // corrected, service: every request answered
	}
	if len(s.Intervals) != 3 || strings.Join(tags, ",") != "corrected,service,corrected,service,corrected,service" ||
		!equal(counts, want) {
		t.Errorf("log: tags %v counts %v; step intervals want counts %v", tags, counts, want)
	}
	if fi, err := os.Stat(hlog); err != nil || fi.Mode().Perm() != resultMode {
		t.Errorf("hlog mode: %v %v", fi, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("directory holds %d entries, want the result and the log only", len(entries))
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHlogUsage(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	tests := []struct {
		name string
		args []string
	}{
		{"both on stdout", []string{"--hlog", "-"}},
		{"same file as -o", []string{"-o", out, "--hlog", out}},
	}
	for _, tt := range tests {
		args := append([]string{"--url", discoveryServer(t), "--scenario", "discovery", "--duration", "50ms"}, tt.args...)
		code, stdout, stderr := runArgs(context.Background(), args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "--hlog") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want a usage error naming --hlog", tt.name, code, stdout, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("directory holds %v after usage errors", entries)
	}
}

// TestFileLimit: with a hard open-file limit below -c plus the margin,
// loadstep fails (exit 1) before any load, naming the limit and how to raise
// it. It runs in a child process (this test binary again), whose limit it
// lowers for good.
func TestFileLimit(t *testing.T) {
	if os.Getenv("LOADSTEP_FILELIMIT_CHILD") == "1" {
		lim := syscall.Rlimit{Cur: 256, Max: 256}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "s.json")
		code, stdout, stderr := runArgs(context.Background(), "--url", discoveryServer(t), "--scenario", "discovery",
			"-c", "1000", "--duration", "50ms", "-o", out)
		os.Stdout.WriteString(stderr)
		if _, err := os.Stat(out); code != 1 || stdout != "" || err == nil {
			t.Fatalf("exit %d, stdout %q, output file stat %v: want exit 1 and no output", code, stdout, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileLimit$", "-test.v")
	cmd.Env = append(os.Environ(), "LOADSTEP_FILELIMIT_CHILD=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	for _, want := range []string{"loadstep: -c 1000 needs about 1064 open files", "RLIMIT_NOFILE", "hard limit 256", "ulimit -Hn"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("child output lacks %q:\n%s", want, b)
		}
	}
}
