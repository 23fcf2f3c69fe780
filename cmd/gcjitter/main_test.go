package main

import (
	"context"
	"strings"
	"testing"
)

func TestUsageAndHelp(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--run-dir", "r", "--state-dir", "s"}, 2, "want PRODUCT, got 0 arguments"},
		{[]string{"refop", "--run-dir", "r"}, 2, "RUN_DIR and STATE_DIR"},
		{[]string{"--quick", "refop", "--run-dir", "r", "--state-dir", "s", "--adapter", "/nonexistent"}, 1, "gcjitter: no adapter /nonexistent"},
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), tt.args, &stdout, &stderr, func(string) string { return "" })
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
	}
	var stdout strings.Builder
	if code := run(context.Background(), []string{"--help"}, &stdout, &stdout, func(string) string { return "" }); code != 0 ||
		!strings.Contains(stdout.String(), "IDPBENCH_GCJITTER_WARMUP_S") || !strings.Contains(stdout.String(), "--step-offset K") {
		t.Errorf("--help: exit %d, %q", code, stdout.String())
	}
}
