package model

import (
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	base := Usage{Cores: 2, HasIdP: true, HasDB: true, HasHost: true, DriverProcs: 2}
	with := func(f func(*Usage)) Usage {
		u := base
		f(&u)
		return u
	}
	tests := []struct {
		name     string
		u        Usage
		kind     string
		wantText string
	}{
		{"driver-limited wins over everything", with(func(u *Usage) {
			u.DriverLimit, u.DriverCPU, u.IdPCPU, u.DBCPU, u.HostBusy = true, 1, 190, 180, 99
			u.DriverReason = "1 loop(s) running or queued 99% of the window (>= 80%): cpu 1%, queued 98%, host 99% busy"
		}), VerdictDriver, "driver-limited: 1 loop(s) running or queued 99% of the window"},
		{"driver-limited, a record without a reason", with(func(u *Usage) { u.DriverLimit, u.DriverCPU, u.IdPCPU, u.HostBusy = true, 170, 190, 99 }),
			VerdictDriver, "driver-limited: driver 170% of 200%"},
		{"a driver not flagged is never the bottleneck, however busy", with(func(u *Usage) { u.DriverCPU, u.IdPCPU, u.HostBusy = 190, 165, 99 }),
			VerdictIdP, "IdP CPU-bound: IdP 165% of 200%"},
		{"IdP at the threshold", with(func(u *Usage) { u.IdPCPU, u.DBCPU, u.HostBusy = 160, 20, 95 }),
			VerdictIdP, "IdP CPU-bound: IdP 160% of 200%, PostgreSQL 20%"},
		{"IdP just below the threshold, host busy", with(func(u *Usage) { u.IdPCPU, u.DBCPU, u.DriverCPU, u.HostBusy = 159.4, 20, 15, 98 }),
			VerdictHost, "host saturated: host 98% busy (IdP 159%, PostgreSQL 20%, driver 15%)"},
		{"database", with(func(u *Usage) { u.IdPCPU, u.DBCPU, u.HostBusy = 22, 192, 99 }),
			VerdictDB, "database CPU-bound: PostgreSQL 192% of 200%, IdP 22%"},
		{"database on 8 cores is not bound at 192%", with(func(u *Usage) { u.Cores, u.IdPCPU, u.DBCPU, u.HostBusy = 8, 22, 192, 30 }),
			VerdictNone, "no CPU bottleneck: host 30% busy (IdP 22%, PostgreSQL 192%, driver 0%)"},
		{"host at the threshold", with(func(u *Usage) { u.IdPCPU, u.DBCPU, u.DriverCPU, u.HostBusy = 120, 40, 35, HostSaturatedPct }),
			VerdictHost, "host saturated: host 90% busy (IdP 120%, PostgreSQL 40%, driver 35%)"},
		{"no database sampled", with(func(u *Usage) { u.HasDB, u.DBCPU, u.IdPCPU, u.HostBusy = false, 190, 70, 48 }),
			VerdictNone, "no CPU bottleneck: host 48% busy (IdP 70%, driver 0%)"},
		{"no IdP samples", with(func(u *Usage) { u.HasIdP = false }), VerdictNA, "N/A: no IdP process samples in the window"},
		{"no host figures", with(func(u *Usage) { u.HasHost = false }), VerdictNA, "N/A: no host CPU figures in the window"},
		{"zero cores counts as one", with(func(u *Usage) { u.Cores, u.IdPCPU, u.HostBusy = 0, 85, 50 }), VerdictIdP, "IdP 85% of 100%"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind, text := Verdict(tc.u)
			if kind != tc.kind || !strings.Contains(text, tc.wantText) {
				t.Errorf("Verdict = %q, %q; want %q containing %q", kind, text, tc.kind, tc.wantText)
			}
			if !strings.HasPrefix(text, tc.kind) {
				t.Errorf("text %q does not start with its kind %q", text, tc.kind)
			}
		})
	}
}

func TestVerdictRulesNameTheThresholds(t *testing.T) {
	rules := strings.Join(VerdictRules(), "\n")
	for _, want := range []string{"80% of all cores", "90% busy", "at least 80% of the window", "run-queue wait", VerdictDriver, VerdictIdP, VerdictDB, VerdictHost, VerdictNone} {
		if !strings.Contains(rules, want) {
			t.Errorf("rules lack %q:\n%s", want, rules)
		}
	}
}
