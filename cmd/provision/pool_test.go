package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// TestPool: two records appended, read back as provision meta reads them.
func TestPool(t *testing.T) {
	state := t.TempDir()
	for _, args := range [][]string{
		{"--scenario", "refresh", "--kind", "refresh_token", "--mode", "chain", "--size", "256", "--flow", "admin-accept"},
		{"--scenario", "introspect", "--kind", "access_token", "--mode", "reuse", "--size", "8", "--flow", "client_credentials"},
	} {
		if code, stdout, stderr := runArgs(t, context.Background(), append([]string{"pool", "--state", state}, args...)...); code != 0 || stdout != "" || stderr != "" {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	got, err := readPools(filepath.Join(state, "pools.jsonl"))
	want := []schema.PoolInfo{
		{Scenario: "refresh", Kind: "refresh_token", Mode: "chain", Size: 256, Flow: "admin-accept"},
		{Scenario: "introspect", Kind: "access_token", Mode: "reuse", Size: 8, Flow: "client_credentials"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("pools.jsonl read back %+v (%v), want %+v", got, err, want)
	}
}

// TestPoolBadInput: each exits 2 naming the flag and writes nothing.
func TestPoolBadInput(t *testing.T) {
	state := t.TempDir()
	ok := map[string]string{"--state": state, "--scenario": "refresh", "--kind": "refresh_token", "--mode": "chain", "--size": "4", "--flow": "admin-accept"}
	for _, tt := range []struct{ flag, value, want string }{
		{"--state", "", "--state is required"},
		{"--state", filepath.Join(state, "nosuch"), "not a directory"},
		{"--scenario", "login", `--scenario "login"`},
		{"--kind", "", "--kind and --flow are required"},
		{"--flow", " ", "--kind and --flow are required"},
		{"--mode", "once", `--mode "once"`},
		{"--size", "0", "--size 0: want >= 1"},
		{"--size", "many", "--size"},
	} {
		args := []string{"pool"}
		for _, k := range []string{"--state", "--scenario", "--kind", "--mode", "--size", "--flow"} {
			v := ok[k]
			if k == tt.flag {
				v = tt.value
			}
			args = append(args, k, v)
		}
		code, stdout, stderr := runArgs(t, context.Background(), args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "provision pool: ") || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want 2 and %q", tt.flag, tt.value, code, stdout, stderr, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "pools.jsonl")); err == nil {
		t.Errorf("pools.jsonl written by a refused call")
	}
}
