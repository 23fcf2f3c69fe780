package ladder

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/adapter"
	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/internal/schema"
)

// TestPoolSize: the sizes ladder.sh's jq gave before the sizing moved here.
func TestPoolSize(t *testing.T) {
	prev := &schema.Step{Connections: 4, QPS: 100}
	base := PoolSizing{WarmupS: 60, DurationS: 10, PerConnQPS: 50, Cap: 100000, Reuse: 256}
	tests := []struct {
		name string
		mode string
		c    int
		prev *schema.Step
		want int
	}{
		{"reuse", PoolReuse, 8, prev, 256},
		{"chain", PoolChain, 8, nil, 16},
		{"consume, first step", PoolConsume, 2, nil, 7000},             // 2 * 50 * 70
		{"consume, from the step before", PoolConsume, 8, prev, 16816}, // ceil(100 * 2 * 1.2 * 70) + 16
		{"consume, at the cap", PoolConsume, 128, &schema.Step{Connections: 64, QPS: 5000}, 100000},
		{"consume, a step before without connections", PoolConsume, 2, &schema.Step{}, 7000},
	}
	for _, tt := range tests {
		p := base
		p.Mode, p.Connections, p.Prev = tt.mode, tt.c, tt.prev
		if got, err := PoolSize(p); err != nil || got != tt.want {
			t.Errorf("%s: %d, %v; want %d", tt.name, got, err, tt.want)
		}
	}
	for _, p := range []PoolSizing{{Mode: "borrow", Connections: 1}, {Mode: PoolChain}} {
		if _, err := PoolSize(p); err == nil || !strings.Contains(err.Error(), "pool size") {
			t.Errorf("%+v: error %v", p, err)
		}
	}
}

// TestPoolSizeRate: a consumed pool in rate mode holds the schedule's
// requests over warmup and window with 20% margin, plus 2 per connection.
func TestPoolSizeRate(t *testing.T) {
	got, err := PoolSize(PoolSizing{Mode: PoolConsume, Connections: 8, WarmupS: 2, DurationS: 10, RateRPS: 100, Cap: 100000, PerConnQPS: 50})
	if want := int(math.Ceil(100*1.2*12)) + 16; err != nil || got != want {
		t.Errorf("PoolSize = %d, %v; want %d", got, err, want)
	}
}

// TestMintOwn: a product's own pool is minted (mintpool with its arguments
// and -o its path) when missing or at least MaxAgeS old, kept when
// younger; a failing mintpool is an error naming the pool.
func TestMintOwn(t *testing.T) {
	dir := t.TempDir()
	mintpool := fakeMintpool(t, dir, "calls")
	now := time.Now()
	own := func(name string, ageS int) product.OwnPool {
		p := product.OwnPool{Name: name, Path: filepath.Join(dir, name+".pool"), Args: []string{"--flow", name}, MaxAgeS: 1800}
		if ageS >= 0 {
			if err := os.WriteFile(p.Path, []byte("old\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			at := now.Add(-time.Duration(ageS) * time.Second)
			if err := os.Chtimes(p.Path, at, at); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	var log strings.Builder
	lg := cli.Logger{W: &log, Tag: "ladder"}
	pools := []product.OwnPool{own("missing", -1), own("young", 1799), own("stale", 1800)}
	if err := MintOwn(context.Background(), mintpool, "", pools, now, lg, Env{Stderr: &log}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	want := "--flow missing -o " + pools[0].Path + "\n--flow stale -o " + pools[2].Path + "\n"
	if string(calls) != want {
		t.Errorf("mintpool ran:\n%s\nwant:\n%s", calls, want)
	}
	if b, _ := os.ReadFile(pools[1].Path); string(b) != "old\n" {
		t.Errorf("the young pool was minted again: %q", b)
	}
	bad := product.OwnPool{Name: "client-assertions", Path: filepath.Join(dir, "bad.pool"), Args: []string{"--fail"}, MaxAgeS: 60}
	err := MintOwn(context.Background(), mintpool, "", []product.OwnPool{bad}, now, lg, Env{Stderr: &log})
	if err == nil || err.Error() != "minting the client-assertions pool failed (mintpool exit 1)" {
		t.Errorf("a failing mintpool: %v", err)
	}
}

// TestMintPool: with a plan, mintpool runs with the plan's arguments, -n
// and -o, and the pool is recorded in STATE/pools.jsonl; a failing mintpool
// records nothing; without a plan the adapter's pools mints it.
func TestMintPool(t *testing.T) {
	state := t.TempDir()
	mintpool := fakeMintpool(t, state, "mintpool.calls")
	fake, err := filepath.Abs("../adapter/testdata/fakeadapter")
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	env, ad := Env{Stderr: &log}, adapter.Adapter{Path: fake, Stderr: &log}
	plan := &product.Pool{Kind: "refresh_token", Mode: "chain", Flow: "admin-accept", Args: []string{"--flow", "admin-accept"}}
	out := filepath.Join(state, "refresh-c8.pool")
	if err := MintPool(context.Background(), env, ad, mintpool, state, "refresh", plan, 16, out); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	calls, _ := os.ReadFile(filepath.Join(state, "mintpool.calls"))
	rec, _ := os.ReadFile(filepath.Join(state, "pools.jsonl"))
	if string(calls) != "--flow admin-accept -n 16 -o "+out+"\n" ||
		string(rec) != `{"scenario":"refresh","kind":"refresh_token","mode":"chain","size":16,"flow":"admin-accept"}`+"\n" {
		t.Errorf("mintpool ran %q, recorded %q", calls, rec)
	}
	bad := &product.Pool{Kind: "access_token", Mode: "reuse", Flow: "password", Args: []string{"--fail"}}
	if err := MintPool(context.Background(), env, ad, mintpool, state, "userinfo", bad, 4, out); err == nil ||
		err.Error() != "minting the userinfo pool failed (mintpool exit 1)" {
		t.Errorf("a failing mintpool: %v", err)
	}
	if rec2, _ := os.ReadFile(filepath.Join(state, "pools.jsonl")); string(rec2) != string(rec) {
		t.Errorf("a failed mint was recorded: %q", rec2)
	}
	if err := MintPool(context.Background(), env, ad, mintpool, state, "userinfo", nil, 4, out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "calls")); string(b) != "pools userinfo 4\n" {
		t.Errorf("without a plan: adapter calls %q, want its pools", b)
	}
}

// fakeMintpool writes dir/mintpool, which appends its arguments to
// dir/calls, fails when the first is --fail, and else writes "minted" to
// the file its last argument names (-o's).
func fakeMintpool(t *testing.T, dir, calls string) string {
	t.Helper()
	mintpool := filepath.Join(dir, "mintpool")
	script := "#!/bin/sh\necho \"$*\" >>\"" + filepath.Join(dir, calls) + "\"\n[ \"$1\" != --fail ] || exit 1\nfor a; do out=\"$a\"; done\necho minted >\"$out\"\n"
	if err := os.WriteFile(mintpool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return mintpool
}
