package ladder

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/idpbench/idpbench/internal/atomicfile"
	"github.com/idpbench/idpbench/internal/schema"
)

// StepPath is the file of round round's window at c connections of a
// scenario in a product's directory (Run names them so):
// SCENARIO-c<N>.json for round 1, SCENARIO-c<N>-r<k>.json for k >= 2.
func StepPath(dir, scenario string, c, round int) string {
	if round <= 1 {
		return filepath.Join(dir, fmt.Sprintf("%s-c%d.json", scenario, c))
	}
	return filepath.Join(dir, fmt.Sprintf("%s-c%d-r%d.json", scenario, c, round))
}

// TwinPath is the file of the A/A twin of round round's window at c
// connections (Config.Twin): SCENARIO-c<N>-r<k>-twin.json.
func TwinPath(dir, scenario string, c, round int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-c%d-r%d-twin.json", scenario, c, round))
}

// SharePath is the file of window k (1-based) at share percent of a
// scenario's capacity in a product's directory (RunShares names them so):
// SCENARIO-share<P>.json, SCENARIO-share<P>-r<k>.json for k >= 2.
func SharePath(dir, scenario string, share, k int) string {
	if k <= 1 {
		return filepath.Join(dir, fmt.Sprintf("%s-share%d.json", scenario, share))
	}
	return filepath.Join(dir, fmt.Sprintf("%s-share%d-r%d.json", scenario, share, k))
}

// SearchPath is the share search record of a scenario in a product's
// directory (RunShares writes it when a share was not sustained).
func SearchPath(dir, scenario string) string {
	return filepath.Join(dir, scenario+".search.json")
}

// WriteSearch writes a share search record atomically.
func WriteSearch(path string, s *schema.Search) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return atomicfile.Write(path, 0o644, append(data, '\n'), nil)
}

// KneePath is the knee record of a scenario in a product's directory.
func KneePath(dir, scenario string) string {
	return filepath.Join(dir, scenario+".knee.json")
}

// ReadRound1 reads the round-1 steps of a scenario's ladder in dir, in
// ladder order, up to the first level without a step file.
func ReadRound1(dir, scenario string, ladder []int) ([]*schema.Step, error) {
	var out []*schema.Step
	for _, c := range ladder {
		s, err := ReadStep(StepPath(dir, scenario, c, 1))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		if s.Scenario != scenario || s.Connections != c {
			return nil, fmt.Errorf("%s: a step of %s at c=%d, want %s at c=%d", StepPath(dir, scenario, c, 1), s.Scenario, s.Connections, scenario, c)
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadStep reads one step file (schema.DecodeStep names the file in its errors).
func ReadStep(path string) (*schema.Step, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return schema.DecodeStep(f, path)
}

// ReadKnee reads a knee record; an error wrapping fs.ErrNotExist when there is none.
func ReadKnee(path string) (*schema.Knee, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	return schema.DecodeKnee(f, path)
}

// WriteKnee writes a knee record atomically (complete or not at all).
func WriteKnee(path string, k *schema.Knee) error {
	if err := k.Validate(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	f, err := atomicfile.Create(path, 0o644, nil)
	if err != nil {
		return err
	}
	defer f.Abort()
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(k); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// KneeConfig is one question to the knee rule: a scenario's ladder in a
// product's directory.
type KneeConfig struct {
	Dir      string  // RUN_DIR/PRODUCT
	Scenario string  // scenario name
	Ladder   []int   // the connection counts of the whole ladder, in order
	NoisePct float64 // DefaultNoisePct unless set
	// Flat is how many last levels must add less than NoisePct to stop:
	// 2 (0 means 2), or 1 (the full profile's search: Config.KneeFlat).
	Flat       int
	FullLadder bool // measure to the end; record where the rule would have stopped
	// At is the level just measured: only the steps up to it count (a
	// resumed round 1 has the files of later levels already); 0 = every
	// step present.
	At int
}

// DecideKnee applies the knee rule to the round-1 steps present in
// cfg.Dir: it reports whether round 1 stops now, and returns the knee record
// to write once there is one -- when the rule stops (with FullLadder: would
// have stopped) or the ladder is measured to its end -- else nil. The rule
// is applied to every prefix of the steps, so a resumed round 1 stops where
// the first session did.
func DecideKnee(cfg KneeConfig) (bool, *schema.Knee, error) {
	ladder := cfg.Ladder
	if cfg.At != 0 {
		i := slices.Index(ladder, cfg.At)
		if i < 0 {
			return false, nil, fmt.Errorf("c=%d is not a level of the ladder %v", cfg.At, ladder)
		}
		ladder = ladder[:i+1]
	}
	steps, err := ReadRound1(cfg.Dir, cfg.Scenario, ladder)
	if err != nil {
		return false, nil, err
	}
	if len(steps) == 0 {
		return false, nil, fmt.Errorf("no round-1 step of %s in %s (want %s)", cfg.Scenario, cfg.Dir, StepPath(cfg.Dir, cfg.Scenario, cfg.Ladder[0], 1))
	}
	k, d := FirstKnee(steps, cfg.NoisePct, cfg.Flat)
	if cfg.At != 0 && steps[len(steps)-1].Connections != cfg.At {
		return false, nil, fmt.Errorf("no round-1 step of %s at c=%d or a level before it: want %s", cfg.Scenario, cfg.At, StepPath(cfg.Dir, cfg.Scenario, ladder[len(steps)], 1))
	}
	if k == 0 && len(steps) < len(cfg.Ladder) {
		return false, nil, nil
	}
	rec := &schema.Knee{
		Schema: schema.KneeV1, Product: steps[0].Product, Scenario: cfg.Scenario,
		Ladder: cfg.Ladder, Measured: connections(steps), Skipped: []int{},
		Reason: d.Reason, NoisePct: cfg.NoisePct, FullLadder: cfg.FullLadder,
	}
	if cfg.Flat == 1 {
		rec.FlatLevels = 1
	}
	if k > 0 {
		rec.StoppedAfter = steps[k-1].Connections
		rec.Skipped = append(rec.Skipped, cfg.Ladder[k:]...)
	} else {
		rec.Reason = "no knee before the end of the ladder: " + d.Reason
	}
	return k > 0 && !cfg.FullLadder, rec, nil
}

// DecideCandidates reads the knee record of a scenario (round 1 is
// complete once it exists) and its round-1 steps, and returns the record
// with Candidates and CandidatesReason set.
func DecideCandidates(dir, scenario string) (*schema.Knee, error) {
	k, err := ReadKnee(KneePath(dir, scenario))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("round 1 of %s is not complete: no knee record %s (ladder --round 1 writes it)", scenario, KneePath(dir, scenario))
	}
	if err != nil {
		return nil, err
	}
	var steps []*schema.Step
	for _, c := range k.Measured {
		s, err := ReadStep(StepPath(dir, scenario, c, 1))
		if err != nil {
			return nil, fmt.Errorf("reading the round-1 step the knee record %s lists: %w", KneePath(dir, scenario), err)
		}
		steps = append(steps, s)
	}
	k.Candidates, k.CandidatesReason = Candidates(steps)
	if b := best(steps); b >= 0 {
		k.Best = steps[b].Connections
	}
	return k, nil
}

func connections(steps []*schema.Step) []int {
	out := make([]int, len(steps))
	for i, s := range steps {
		out[i] = s.Connections
	}
	return out
}
