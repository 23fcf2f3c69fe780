// Package e2e holds the assertions of scripts/test.sh's end-to-end phases.
// test.sh starts the servers and runs the tools; the checks are here.
//
// QuickChecks assert on the run directory of the quick comparison
// (scripts/run-comparison.sh --quick), read by internal/report's loader as
// `aggregate report` and `aggregate steady` read it (LoadRun). The other
// phases' checks are tests that drive the tools and the product adapters
// against the servers test.sh has started.
//
// The tests named TestE2E* are those phases: each needs what test.sh sets up
// at its phase, named by environment variables, and skips without them,
// or fails naming the missing one when IDPBENCH_INTEGRATION=1. test.sh runs
// each at its phase (go test -run '^TestE2EQuickRun$' ./internal/e2e) and
// skips them in its go test ./... pass (-skip '^TestE2E'):
//
//	TestE2EPostgresLoopback  IDPBENCH_PG_DIR (the shared PostgreSQL; its sockets read by readback)
//	TestE2EBeyondLoopback    IDPBENCH_BIN (the built tools; runs the generic oidc adapter itself)
//	TestE2ERefopGrants       IDPBENCH_BIN, IDPBENCH_REFOP_URL (its issuer), IDPBENCH_REFOP_KEY (service-key1.pem)
//	TestE2ERefopFresh        IDPBENCH_REFOP_STATE, IDPBENCH_HYDRA_STATE (the adapters' state directories)
//	TestE2EZitadelNative     IDPBENCH_BIN, IDPBENCH_PG_DIR (the shared PostgreSQL; runs the adapter on a stand-in)
//	TestE2EQuickRun          IDPBENCH_E2E_RUN (the quick comparison's run directory)
//	TestE2EEfficiency        IDPBENCH_BIN, IDPBENCH_REFOP_URL, IDPBENCH_REFOP_PIDFILE (a reference OP with no load yet)
//
// The other tests check QuickChecks on the committed run results/reference
// (and on the run IDPBENCH_E2E_RUN names, when set): every check holds, and
// each fails on a doctored copy.
package e2e
