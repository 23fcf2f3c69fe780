package e2e

import (
	"os"
	"testing"
)

// integration reports whether IDPBENCH_INTEGRATION=1: a missing server or
// file is then a failure, not a skip.
func integration() bool { return os.Getenv("IDPBENCH_INTEGRATION") == "1" }

// need returns the values of the environment variables names, which
// scripts/test.sh sets at the test's phase. Without one the test skips, or
// under IDPBENCH_INTEGRATION=1 fails naming it.
func need(t *testing.T, names ...string) []string {
	t.Helper()
	vals := make([]string, len(names))
	for i, n := range names {
		vals[i] = os.Getenv(n)
		if vals[i] != "" {
			continue
		}
		if integration() {
			t.Fatalf("IDPBENCH_INTEGRATION=1 but %s is not set (scripts/test.sh sets it at this test's phase; see the package doc)", n)
		}
		t.Skipf("%s not set (scripts/test.sh sets it; see the package doc)", n)
	}
	return vals
}
