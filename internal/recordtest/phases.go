package recordtest

import (
	"time"

	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// PhaseT0 is where PhaseRun's seconds count from.
var PhaseT0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// Sec is s seconds after PhaseT0.
func Sec(s float64) time.Time { return PhaseT0.Add(time.Duration(s * float64(time.Second))) }

// Ph is a phase of session, product and kind from..to seconds after PhaseT0.
func Ph(session, product, kind string, from, to float64) schema.Phase {
	return schema.NewPhase(session, product, kind, product+" "+kind, Sec(from), Sec(to))
}

// Win is a step of product with the phase label, measured from..to after a warmup.
func Win(product, label string, warmup, from, to float64) steps.File {
	return steps.File{Path: product + "/x.json", Step: &schema.Step{Product: product, Scenario: "discovery",
		Labels: map[string]string{"phase": label}, WarmupS: warmup, Start: Sec(from), End: Sec(to)}}
}

// PhaseRun is a resumed run's phases, session by session, and its steps:
// session s1 ran hydra's setup and discovery ladder and was interrupted;
// s2 ran its client_credentials ladder and GC-jitter run, then keycloak,
// which failed its cold start (no ladder at all).
func PhaseRun() (sessions [][]schema.Phase, records []steps.File) {
	phases := []schema.Phase{
		Ph("s1", "", schema.PhaseKindBuild, 0, 30),
		Ph("s1", "", schema.PhaseKindDatabase, 30, 32),
		Ph("s1", "hydra", schema.PhaseKindInstall, 32, 40),
		Ph("s1", "hydra", schema.PhaseKindColdstart, 40, 60),
		Ph("s1", "hydra", schema.PhaseKindSetup, 60, 70),
		Ph("s1", "hydra", schema.PhaseKindLadder, 70, 130),
		Ph("s1", "hydra", schema.PhaseKindTeardown, 130, 135), // the EXIT trap's cleanup
		Ph("s2", "", schema.PhaseKindBuild, 1000, 1002),
		Ph("s2", "", schema.PhaseKindDatabase, 1002, 1004),
		Ph("s2", "hydra", schema.PhaseKindLadder, 1004, 1064),
		Ph("s2", "hydra", schema.PhaseKindGCJitter, 1064, 1140),
		Ph("s2", "keycloak", schema.PhaseKindInstall, 1140, 1150),
		Ph("s2", "keycloak", schema.PhaseKindColdstart, 1150, 1200),
		Ph("s2", "keycloak", schema.PhaseKindTeardown, 1200, 1210),
		Ph("s2", "", schema.PhaseKindReport, 1210, 1212),
	}
	records = []steps.File{
		Win("hydra", steps.PhaseLadder, 5, 80, 90),
		Win("hydra", steps.PhaseLadder, 5, 100, 110),
		Win("hydra", steps.PhaseLadder, 5, 125, 135),      // straddles the end of its ladder: counted nowhere
		Win("hydra", steps.PhaseLadder, 5, 300, 310),      // between the sessions: inside no phase
		Win("keycloak", steps.PhaseLadder, 5, 90, 100),    // another product's step inside hydra's ladder
		Win("hydra", steps.PhaseGCJitter, 5, 112, 118),    // a GC-jitter step inside a ladder phase: not a ladder step
		Win("hydra", steps.PhaseLadder, 5, 1010, 1020),    // the second session's ladder
		Win("hydra", steps.PhaseGCJitter, 5, 1070, 1130),  // the GC-jitter run's window
		Win("keycloak", steps.PhaseLadder, 5, 1160, 1170), // inside keycloak's cold start, not a ladder phase
	}
	return [][]schema.Phase{phases[:7], phases[7:]}, records
}
