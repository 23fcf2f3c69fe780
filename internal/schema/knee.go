package schema

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// KneeV1 is the schema string of a knee record.
const KneeV1 = "idpbench.knee/v1"

// Knee records where round 1 of one scenario's connection ladder stopped
// and which levels later rounds repeat (`aggregate ladder knee` and
// `aggregate ladder candidates` write it as RUN_DIR/PRODUCT/SCENARIO.knee.json).
// The rule (internal/ladder): stop when the last two measured levels each
// raised the best throughput so far by less than NoisePct percent and the
// last level's P99 is above the best level's; never before 3 levels.
type Knee struct {
	Schema   string `json:"schema"`   // KneeV1
	Product  string `json:"product"`  // product name, as in the steps
	Scenario string `json:"scenario"` // scenario name, as in the steps
	// Ladder is the connection counts the ladder was to measure, in order.
	Ladder []int `json:"ladder"`
	// Measured is the connection counts whose round-1 step was measured
	// (a step file exists), in ladder order.
	Measured []int `json:"measured"`
	// Skipped is the connection counts after StoppedAfter: the levels the
	// rule left out of the ladder or, with FullLadder, the levels it would
	// have left out (measured anyway). Empty when the rule did not stop.
	Skipped []int `json:"skipped"`
	// StoppedAfter is the connection count after which the rule stopped (or,
	// with FullLadder, would have stopped); 0 = the rule did not stop the
	// ladder before its end.
	StoppedAfter int `json:"stopped_after"`
	// Reason says in words why the rule stopped, or why it did not.
	Reason string `json:"reason"`
	// NoisePct is the throughput gain, in percent of the best level's qps,
	// below which a level counts as not raising it.
	NoisePct float64 `json:"noise_pct"`
	// FlatLevels is how many last levels had to add less than NoisePct
	// for the rule to stop: absent, 2; 1 in the full profile's level
	// search since the schedule interleaves products (a level fewer).
	FlatLevels int `json:"flat_levels,omitempty"`
	// FullLadder: the ladder was measured to its end (--full-ladder), and
	// StoppedAfter and Skipped say where the rule would have stopped.
	FullLadder bool `json:"full_ladder"`
	// Candidates is the connection counts later rounds (--round K >= 2)
	// repeat: the candidate steady levels of round 1; empty when no level
	// qualified, or before `aggregate ladder candidates` ran.
	Candidates []int `json:"candidates,omitempty"`
	// CandidatesReason says why these levels are repeated (or none is).
	CandidatesReason string `json:"candidates_reason,omitempty"`
	// Best is round 1's best steady level, the one the interleaved rounds
	// measure (the first of the Candidates' qps order); absent when none.
	Best int `json:"best,omitempty"`
}

// DecodeKnee reads one knee record and validates it.
func DecodeKnee(r io.Reader, name string) (*Knee, error) {
	var k Knee
	if err := decodeOne(r, name, KneeV1, &k, func() string { return k.Schema }); err != nil {
		return nil, err
	}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &k, nil
}

// Validate reports what a knee record lacks that its readers rely on: a
// product and scenario, measured levels that belong to the ladder, a stop
// point among them, and skipped levels and candidates that are levels of the
// ladder. Errors name every problem found.
func (k *Knee) Validate() error {
	var probs []string
	if k.Product == "" {
		probs = append(probs, "no product")
	}
	if k.Scenario == "" {
		probs = append(probs, "no scenario")
	}
	if len(k.Ladder) == 0 {
		probs = append(probs, "no ladder")
	}
	if len(k.Measured) == 0 {
		probs = append(probs, "no measured level")
	}
	for _, f := range []struct {
		name string
		cs   []int
	}{{"measured", k.Measured}, {"skipped", k.Skipped}, {"candidates", k.Candidates}} {
		for _, c := range f.cs {
			if !slices.Contains(k.Ladder, c) {
				probs = append(probs, fmt.Sprintf("%s c=%d is not a level of the ladder %v", f.name, c, k.Ladder))
			}
		}
	}
	if k.StoppedAfter != 0 && !slices.Contains(k.Measured, k.StoppedAfter) {
		probs = append(probs, fmt.Sprintf("stopped_after c=%d was not measured", k.StoppedAfter))
	}
	if k.StoppedAfter == 0 && len(k.Skipped) > 0 {
		probs = append(probs, "skipped levels without a stop (stopped_after 0)")
	}
	if k.NoisePct <= 0 {
		probs = append(probs, fmt.Sprintf("noise_pct %g (want > 0)", k.NoisePct))
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("not a valid knee record: %s", strings.Join(probs, "; "))
}
