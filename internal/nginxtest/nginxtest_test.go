package nginxtest

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestNginx: nginx answers, logs a line per request, its log empties,
// and after a kill it refuses connections until it is started again.
func TestNginx(t *testing.T) {
	n := StartNginx(t, Options{AccessLog: true})
	hc := &http.Client{Timeout: 2 * time.Second}
	get := func() error {
		resp, err := hc.Get(n.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	before := n.Requests(t) // the readiness check's
	for range 3 {
		if err := get(); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Requests(t); got != before+3 {
		t.Errorf("%d requests logged, want %d", got, before+3)
	}
	n.ClearLog(t)
	if got := n.Requests(t); got != 0 {
		t.Errorf("%d requests logged after ClearLog, want 0", got)
	}
	n.Kill(t)
	if err := get(); err == nil {
		t.Error("nginx answered after Kill")
	}
	n.Start(t)
	if err := get(); err != nil {
		t.Errorf("nginx started again: %v", err)
	}
}

// recorder is a testing.TB that records Skip and Fatalf instead of
// ending the test.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Skip(args ...any)                  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

// TestNeedMissing: a missing command skips the test naming it and its
// package, and fails it under IDPBENCH_INTEGRATION=1.
func TestNeedMissing(t *testing.T) {
	for _, integration := range []string{"", "1"} {
		t.Setenv("IDPBENCH_INTEGRATION", integration)
		r := &recorder{TB: t}
		if p := Need(r, "idpbench-no-such-command", "idpbench-pkg"); p != "" {
			t.Fatalf("Need found %s", p)
		}
		want := "idpbench-no-such-command is not installed (Debian package idpbench-pkg)"
		got := r.skipped
		if integration == "1" {
			want, got = "IDPBENCH_INTEGRATION=1 but "+want, r.fatal
		}
		if got != want || r.skipped != "" && r.fatal != "" {
			t.Errorf("IDPBENCH_INTEGRATION=%q: skipped %q, failed %q; want %q", integration, r.skipped, r.fatal, want)
		}
	}
	if p := Need(t, "sh", "dash"); p == "" {
		t.Error("Need(sh): not found")
	}
}
