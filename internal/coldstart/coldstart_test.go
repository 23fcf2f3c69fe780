package coldstart

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
)

// runHelper runs coldstart on the test binary in helper mode and decodes the record.
func runHelper(t *testing.T, ctx context.Context, mode string, edit func(*Config)) (*schema.Coldstart, error, string) {
	t.Helper()
	t.Setenv("COLDSTART_HELPER", mode)
	dir := t.TempDir()
	addr := "127.0.0.1:1"
	if a, ok := strings.CutPrefix(mode, "serve:"); ok {
		addr = a
	}
	cfg := Config{
		ReadyURL: "http://" + addr + "/ready", ReadyStatus: 200, Timeout: 10 * time.Second,
		Poll: 20 * time.Millisecond, Mode: "B", Product: "helper", ProductVersion: "v0",
		Output: filepath.Join(dir, "coldstart.json"), Command: []string{os.Args[0], "-arg"},
		StopGrace: 2 * time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	var stderr strings.Builder
	err := Run(ctx, cfg, os.Stdout, &stderr)
	f, ferr := os.Open(cfg.Output)
	if ferr != nil {
		t.Fatalf("no record written: %v (run error %v)", ferr, err)
	}
	defer f.Close()
	rec, derr := schema.DecodeColdstart(f, cfg.Output)
	if derr != nil {
		t.Fatal(derr)
	}
	return rec, err, stderr.String()
}

func TestReadyThenStop(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "p.pid")
	rec, err, _ := runHelper(t, context.Background(), "serve:"+freeAddr(t), func(c *Config) {
		c.Stop, c.Pidfile = true, pidfile
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seconds_to_ready %.3f peak_rss %d", rec.SecondsToReady, rec.PeakRSSBytes)
	if rec.Status != StatusComplete || rec.SecondsToReady < 0.3 || rec.SecondsToReady > 8 {
		t.Errorf("status %q, seconds_to_ready %.3f, want complete and >= 0.3", rec.Status, rec.SecondsToReady)
	}
	if rec.PeakRSSBytes < 16<<20 {
		t.Errorf("peak_rss_bytes %d, want >= 16 MiB (the helper's ballast)", rec.PeakRSSBytes)
	}
	if rec.Mode != "B" || rec.Product != "helper" || rec.ReadyStatus != 200 || len(rec.Command) != 2 || rec.Start.IsZero() {
		t.Errorf("record fields: %+v", rec)
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("pidfile left after --stop: %v", err)
	}
}

// TestPeakOfContainers: with Containers the peak is the containers' memory
// (compose mode), its greatest sum over the polls, with every container
// measured named; the command's process tree (16 MiB of ballast here, the
// compose client there) is not what is measured.
func TestPeakOfContainers(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	figures := []struct {
		mem     int64
		sources []string
	}{{0, nil}, {3 << 20, []string{"container:p-db"}}, {7 << 20, []string{"container:p-db", "container:p"}}}
	rec, err, _ := runHelper(t, context.Background(), "serve:"+freeAddr(t), func(c *Config) {
		c.Stop, c.Containers = true, []string{"p", "p-*"}
		c.containerMemory = func(context.Context) (int64, []string, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return 0, nil, errors.New("no engine yet")
			}
			f := figures[min(calls-2, len(figures)-1)]
			return f.mem, f.sources, nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.PeakRSSBytes != 7<<20 || rec.PeakMeasuredAs != schema.PeakCgroup ||
		!slices.Equal(rec.PeakSources, []string{"container:p", "container:p-db"}) {
		t.Errorf("peak %d %q %v, want %d cgroup [container:p container:p-db]", rec.PeakRSSBytes, rec.PeakMeasuredAs, rec.PeakSources, 7<<20)
	}
	plain, err, _ := runHelper(t, context.Background(), "serve:"+freeAddr(t), func(c *Config) { c.Stop = true })
	if err != nil || plain.PeakMeasuredAs != "" || plain.PeakSources != nil || plain.PeakRSSBytes < 16<<20 {
		t.Errorf("without containers: %v, peak %d %q %v; want the tree's RSS (>= 16 MiB), nothing else", err, plain.PeakRSSBytes, plain.PeakMeasuredAs, plain.PeakSources)
	}
}

func TestReadyStopLeavesNoProcess(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "p.pid")
	var pgid int
	_, err, _ := runHelper(t, context.Background(), "serve:"+freeAddr(t), func(c *Config) {
		c.Stop = true
		c.Pidfile = pidfile
		c.Command = []string{"/bin/sh", "-c", "echo $$ > " + pidfile + ".sh; exec " + os.Args[0]}
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pidfile + ".sh")
	pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	if pgid <= 0 {
		t.Fatalf("no pid from the shell: %q", b)
	}
	if alive(pgid) {
		killGroup(t, pgid)
		t.Fatalf("process group %d still alive after --stop", pgid)
	}
}

func TestReadyLeftRunning(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "p.pid")
	rec, err, stderr := runHelper(t, context.Background(), "serve:"+freeAddr(t), func(c *Config) {
		c.Pidfile = pidfile
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pidLine, idLine, _ := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
	pid, _ := strconv.Atoi(pidLine)
	if pid <= 0 {
		t.Fatalf("pidfile holds %q", b)
	}
	defer killGroup(t, pid)
	if !alive(pid) {
		t.Errorf("product pid %d not running after coldstart returned", pid)
	}
	if want := identity(t, pid); idLine != want {
		t.Errorf("pidfile's second line %q, want the product's start time and boot id %q", idLine, want)
	}
	if rec.Status != StatusComplete || !strings.Contains(stderr, "left running as pid "+strconv.Itoa(pid)) {
		t.Errorf("status %q, stderr %q", rec.Status, stderr)
	}
}

func TestNotReady(t *testing.T) {
	tests := []struct {
		name, mode string
		timeout    time.Duration
		grace      time.Duration
		wantErr    []string // in the record's error
	}{
		{"exits early", "exit", 10 * time.Second, time.Second,
			[]string{"exited before ready", "exit status 3", "fatal: database unreachable", "connection refused"}},
		{"timeout", "hang", 400 * time.Millisecond, time.Second, []string{"not ready after 400ms"}},
		{"ignores SIGTERM", "stubborn", 300 * time.Millisecond, 200 * time.Millisecond, []string{"not ready after 300ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "p.pid")
			start := time.Now()
			rec, err, _ := runHelper(t, context.Background(), tt.mode, func(c *Config) {
				c.Timeout, c.StopGrace, c.Pidfile = tt.timeout, tt.grace, pidfile
				c.Log = filepath.Join(dir, "product.log")
			})
			if err == nil || cli.ExitCode(err) != cli.ExitRuntime {
				t.Fatalf("error %v, want a runtime error", err)
			}
			if rec.Status != StatusError || rec.SecondsToReady != 0 {
				t.Errorf("status %q seconds %.3f, want error and 0", rec.Status, rec.SecondsToReady)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(rec.Error, w) {
					t.Errorf("record error %q lacks %q", rec.Error, w)
				}
			}
			if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
				t.Errorf("pidfile left after the product was stopped")
			}
			if time.Since(start) > tt.timeout+tt.grace+5*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
		})
	}
}

func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	pidfile := filepath.Join(t.TempDir(), "p.pid")
	rec, err, _ := runHelper(t, ctx, "hang", func(c *Config) { c.Pidfile = pidfile })
	if !errors.Is(err, context.Canceled) || cli.ExitCode(err) != cli.ExitInterrupted {
		t.Fatalf("error %v, want interrupted (130)", err)
	}
	if rec.Status != StatusInterrupted {
		t.Errorf("status %q, want interrupted", rec.Status)
	}
}

func TestStartFails(t *testing.T) {
	rec, err, _ := runHelper(t, context.Background(), "hang", func(c *Config) {
		c.Command = []string{"/nonexistent/product"}
	})
	if err == nil || rec.Status != StatusError || !strings.Contains(rec.Error, "/nonexistent/product") {
		t.Errorf("error %v, record %+v", err, rec)
	}
}

func TestValidate(t *testing.T) {
	ok := Config{ReadyURL: "http://127.0.0.1:1/r", ReadyStatus: 200, Timeout: time.Second, Poll: 100 * time.Millisecond, Command: []string{"x"}}
	tests := []struct {
		name string
		edit func(*Config)
		flag string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"no url", func(c *Config) { c.ReadyURL = "" }, "--ready"},
		{"relative url", func(c *Config) { c.ReadyURL = "/health" }, "--ready"},
		{"bad status", func(c *Config) { c.ReadyStatus = 42 }, "--ready-status"},
		{"zero timeout", func(c *Config) { c.Timeout = 0 }, "--timeout"},
		{"zero poll", func(c *Config) { c.Poll = 0 }, "--poll"},
		{"poll above timeout", func(c *Config) { c.Poll = time.Minute }, "--poll"},
		{"bad mode", func(c *Config) { c.Mode = "C" }, "--mode"},
		{"no command", func(c *Config) { c.Command = nil }, "command"},
		{"stdout pidfile", func(c *Config) { c.Pidfile = "-" }, "--pidfile"},
		{"containers", func(c *Config) { c.Containers = []string{"idpbench-hydra", "idpbench-hydra-*"} }, ""},
		{"bad container glob", func(c *Config) { c.Containers = []string{"idpbench-[hydra"} }, "--containers"},
		{"empty container glob", func(c *Config) { c.Containers = []string{""} }, "--containers"},
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

// identity reads "START BOOT_ID" of a running process straight from /proc:
// field 22 of /proc/PID/stat, counted after the command name's last ')'.
func identity(t *testing.T, pid int) string {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	return fields[19] + " " + strings.TrimSpace(string(boot))
}
