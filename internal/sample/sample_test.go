package sample

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
)

// startTree starts sh (busy in a loop) with two sleeping children; the
// marker is in sh's command line only.
func startTree(t *testing.T) (pid int, marker string) {
	t.Helper()
	marker = fmt.Sprintf("idpbench-sampler-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & sleep 30 & i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done; wait", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		table := NewProcTable("")
		table.Scan()
		for _, p := range table.Procs {
			if p.PPID == cmd.Process.Pid {
				syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Wait until both children exist.
	table := NewProcTable("")
	for i := 0; i < 100; i++ {
		table.Scan()
		if st := NewTree(100, false).Measure(table, []int{cmd.Process.Pid}); st.Processes == 3 {
			return cmd.Process.Pid, marker
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("children of sh did not appear")
	return 0, ""
}

func readSamples(t *testing.T, path string) map[string][]schema.Sample {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := schema.DecodeSamples(f, path)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]schema.Sample{}
	for _, r := range recs {
		by[r.Source] = append(by[r.Source], r)
	}
	return by
}

func TestRunProcessTrees(t *testing.T) {
	pid, marker := startTree(t)
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "sh.pid")
	writeFile(t, pidfile, strconv.Itoa(pid)+"\n")
	cfg := Config{
		Selectors: []Selector{
			{Kind: SelectPID, Value: strconv.Itoa(pid), Name: "viapid"},
			{Kind: SelectMatch, Value: marker},
			{Kind: SelectPidfile, Value: pidfile, Name: "viafile"},
		},
		Every: 100 * time.Millisecond, Duration: 700 * time.Millisecond, PSSEvery: time.Millisecond, Host: true,
		Output: filepath.Join(dir, "samples.jsonl"),
	}
	var stderr strings.Builder
	start := time.Now()
	if err := Run(context.Background(), cfg, nil, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 700*time.Millisecond || d > 5*time.Second {
		t.Errorf("ran %s, want about 700ms", d)
	}
	by := readSamples(t, cfg.Output)
	for _, src := range []string{"process:viapid", "process:sh", "process:viafile"} {
		recs := by[src]
		if len(recs) < 4 || len(recs) > 8 {
			t.Errorf("%s: %d records, want about 7 (stderr %q)", src, len(recs), stderr.String())
			continue
		}
		var cpu float64
		for _, r := range recs {
			cpu += r.CPUPct
			if r.Processes != 3 || r.RSSBytes <= 0 || r.PSSBytes <= 0 || r.PSSBytes > r.RSSBytes || r.Threads != 3 || r.CPUPct < 0 {
				t.Errorf("%s: %+v, want 3 processes, 3 threads, 0 < pss <= rss", src, r)
			}
		}
		if cpu/float64(len(recs)) < 2 {
			t.Errorf("%s: mean cpu_pct %.2f; the busy shell should show", src, cpu/float64(len(recs)))
		}
	}
	host := by["host"]
	if len(host) < 4 || host[0].CPUPct < 0 || host[0].CPUPct > 100 {
		t.Errorf("host records %v", host)
	}
}

func TestRunStops(t *testing.T) {
	tests := []struct {
		name string
		run  func(cfg Config, out io.Writer) error
	}{
		{"stdin EOF", func(cfg Config, out io.Writer) error {
			r, w := io.Pipe()
			time.AfterFunc(300*time.Millisecond, func() { w.Close() })
			cfg.UntilStdinEOF = true
			return Run(context.Background(), cfg, r, out, io.Discard)
		}},
		{"cancel (SIGINT)", func(cfg Config, out io.Writer) error {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(300*time.Millisecond, cancel)
			return Run(ctx, cfg, nil, out, io.Discard)
		}},
		{"duration", func(cfg Config, out io.Writer) error {
			cfg.Duration = 300 * time.Millisecond
			return Run(context.Background(), cfg, nil, out, io.Discard)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Selectors: []Selector{{Kind: SelectPID, Value: strconv.Itoa(os.Getpid())}}, Every: 100 * time.Millisecond, Host: true}
			var out strings.Builder
			start := time.Now()
			if err := tt.run(cfg, &out); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("stopped after %s", d)
			}
			if !strings.HasSuffix(out.String(), "}\n") || strings.Count(out.String(), "\n") < 4 {
				t.Errorf("output %q: want complete lines, a few ticks", out.String())
			}
		})
	}
}

func TestRunStartupErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		sel  Selector
		want string
	}{
		{"no such pid", Selector{Kind: SelectPID, Value: "999999999"}, "--pid 999999999: no such process"},
		{"missing pidfile", Selector{Kind: SelectPidfile, Value: filepath.Join(dir, "none.pid")}, "--pidfile"},
		{"bad pidfile", Selector{Kind: SelectPidfile, Value: filepath.Join(dir, "bad.pid")}, "not a process id"},
	}
	writeFile(t, filepath.Join(dir, "bad.pid"), "hello\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+".jsonl")
			cfg := Config{Selectors: []Selector{tt.sel}, Every: 50 * time.Millisecond, Output: out}
			err := Run(context.Background(), cfg, nil, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) || cli.ExitCode(err) != cli.ExitRuntime {
				t.Errorf("error %v, want a runtime error with %q", err, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output created despite the error")
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Every: time.Second, Host: true}
	tests := []struct {
		name string
		edit func(*Config)
		flag string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"zero every", func(c *Config) { c.Every = 0 }, "--every"},
		{"tiny every", func(c *Config) { c.Every = time.Millisecond }, "--every"},
		{"negative duration", func(c *Config) { c.Duration = -time.Second }, "--duration"},
		{"nothing", func(c *Config) { c.Host = false }, "nothing to sample"},
		{"bad regex", func(c *Config) { c.Selectors = []Selector{{Kind: SelectMatch, Value: "("}} }, "--match"},
		{"empty pid", func(c *Config) { c.Selectors = []Selector{{Kind: SelectPID, Value: " "}} }, "--pid"},
		{"bad glob", func(c *Config) { c.DockerGlobs = []string{"["} }, "--docker"},
		{"name with space", func(c *Config) { c.Selectors = []Selector{{Kind: SelectPID, Value: "1", Name: "a b"}} }, "--name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.Validate()
			if tt.flag == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), tt.flag) {
				t.Errorf("error %v, want a usage error naming %s", err, tt.flag)
			}
		})
	}
}

func TestDSNHasPassword(t *testing.T) {
	tests := []struct {
		dsn  string
		want bool
	}{
		{"postgres://idpbench@127.0.0.1:5432/hydra?sslmode=disable", false},
		{"postgres://idpbench:s3cret@127.0.0.1:5432/hydra", true},
		{"postgresql://u:@h/db", true},
		{"postgres://u@h/db?password=x", true},
		{"host=127.0.0.1 user=idpbench dbname=hydra", false},
		{"host=127.0.0.1 password=x dbname=hydra", true},
		{"host=h password = x", true},
		{"postgres://u:p%zz@h/db", true}, // unparsable escape
	}
	for _, tt := range tests {
		if got := DSNHasPassword(tt.dsn); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.dsn, got, tt.want)
		}
	}
}

func TestPSSDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name  string
		every time.Duration
		ticks []time.Duration // offsets from t0; the first is the baseline
		want  []bool
	}{
		{"never", 0, []time.Duration{0, 1, 2}, []bool{false, false, false}},
		{"every 3s at 1s ticks", 3 * time.Second, []time.Duration{0, 1, 2, 3, 4, 5, 6, 7}, []bool{false, true, false, false, true, false, false, true}},
		{"below the interval", time.Millisecond, []time.Duration{0, 1, 2}, []bool{false, true, true}},
	}
	for _, tt := range tests {
		s := &sampler{cfg: Config{Every: time.Second, PSSEvery: tt.every}}
		for i, off := range tt.ticks {
			if got := s.pssDue(t0.Add(off*time.Second), i == 0); got != tt.want[i] {
				t.Errorf("%s: tick %d: %v, want %v", tt.name, i, got, tt.want[i])
			}
		}
	}
}
