// Package runtest holds the end-to-end tests of the orchestration scripts:
// scripts/run-comparison.sh's placement (TestPlacement), its rounds
// (TestRounds) and its cleaning after a kill -9 (TestKillRun), and the
// generic oidc adapter measuring Hydra, Keycloak and the reference OP from a
// configuration file alone (TestCheckOIDC). Each execs the real scripts and
// adapters, as a user would, and asserts on what they leave: result records,
// logs, processes and /proc.
//
// They run only with IDPBENCH_RUNTEST=1 (each takes a minute or more, up to
// a quarter of an hour): scripts/test.sh runs each at its own point in its
// order, e.g.
//
//	IDPBENCH_RUNTEST=1 go test -count=1 -timeout 15m -run '^TestPlacement$' ./internal/runtest
//
// With it set a missing prerequisite (a command, a second CPU) fails the
// test naming it. The tools are built into IDPBENCH_BIN first unless
// IDPBENCH_NO_BUILD=1 says they are there; scratch goes to a directory under
// IDPBENCH_TMP (default the system's), deleted at the end unless
// IDPBENCH_KEEP=1.
package runtest
