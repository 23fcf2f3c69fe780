// Package e2e holds the assertions of scripts/test.sh's end-to-end phases.
// test.sh starts the servers and runs the tools; the checks are here.
//
// QuickChecks assert on the run directory of the quick comparison
// (scripts/run-comparison.sh --quick), read by internal/report's loader as
// `aggregate report` and `aggregate steady` read it (LoadRun).
//
// The tests named TestE2E* are those phases: each needs what test.sh sets up
// at its phase, named by environment variables, and skips without them,
// or fails naming the missing one when IDPBENCH_INTEGRATION=1. test.sh runs
// each at its phase (go test -run '^TestE2E(QuickRun)$' ./internal/e2e) and
// skips them in its go test ./... pass (-skip '^TestE2E'):
//
//	TestE2EQuickRun  IDPBENCH_E2E_RUN (the quick comparison's run directory)
//
// The other tests check QuickChecks on the committed run results/reference
// (and on the run IDPBENCH_E2E_RUN names, when set): every check holds, and
// each fails on a doctored copy.
package e2e
