package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// PhaseV1 is the schema string of a phase record.
const PhaseV1 = "idpbench.phase/v1"

// PhasesFile is the name of the phase records' file in a run directory
// (RUN_DIR/phases.jsonl): one Phase per line, appended as each phase ends;
// a resumed run appends the phases of its new session.
const PhasesFile = "phases.jsonl"

// Phase kinds (Phase.Kind): what a span of a run's wall time was spent on.
const (
	PhaseKindBuild     = "build"     // building the tools (the first phase of a session also holds its start-up)
	PhaseKindDatabase  = "database"  // the shared PostgreSQL up or down
	PhaseKindInstall   = "install"   // installing a product (cached after the first run)
	PhaseKindColdstart = "coldstart" // a timed start: A (fresh database) or B (restart)
	PhaseKindSetup     = "setup"     // provisioning clients and users, starting the sampler
	PhaseKindLadder    = "ladder"    // one scenario's connection ladder: pools, warmups, measured windows
	PhaseKindShare     = "share"     // one scenario's rate-mode windows at fixed shares of its capacity
	PhaseKindGCJitter  = "gcjitter"  // the GC-jitter run
	PhaseKindTeardown  = "teardown"  // meta, down, the checks that nothing is left, cleanup
	PhaseKindReport    = "report"    // aggregate report
	PhaseKindOther     = "other"     // anything else
)

// PhaseKinds lists every kind a v1 record may have.
func PhaseKinds() []string {
	return []string{PhaseKindBuild, PhaseKindDatabase, PhaseKindInstall, PhaseKindColdstart, PhaseKindSetup,
		PhaseKindLadder, PhaseKindShare, PhaseKindGCJitter, PhaseKindTeardown, PhaseKindReport, PhaseKindOther}
}

// Phase is one phase of a run (scripts/run-comparison.sh), written when it
// ends. The phases of one session follow each other without gaps, from the
// session's start to its exit (an interrupted session's last phase
// included), so their seconds add up to the session's wall time.
type Phase struct {
	Schema string `json:"schema"` // PhaseV1
	// Session identifies the run-comparison session that ran the phase:
	// every session (a run resumed after an interruption is a new one) has
	// its own id and its own phases.
	Session string    `json:"session"`
	Product string    `json:"product"` // the product the phase belongs to; "" for a run-wide phase
	Kind    string    `json:"kind"`    // one of PhaseKinds
	Name    string    `json:"name"`    // as logged, e.g. "hydra ladder discovery"
	Start   time.Time `json:"start"`   // when the phase began (RFC 3339)
	End     time.Time `json:"end"`     // when it ended (RFC 3339)
	Seconds float64   `json:"seconds"` // End - Start, seconds
}

// NewPhase returns a phase record with its Seconds from start and end
// (rounded to the microsecond).
func NewPhase(session, product, kind, name string, start, end time.Time) Phase {
	return Phase{Schema: PhaseV1, Session: session, Product: product, Kind: kind, Name: name,
		Start: start, End: end, Seconds: math.Round(end.Sub(start).Seconds()*1e6) / 1e6}
}

// Validate reports what a phase record lacks: a session, a known kind, a
// name, start and end in order and seconds that are end - start (to the
// millisecond). Errors name every problem found.
func (p *Phase) Validate() error {
	var probs []string
	if strings.TrimSpace(p.Session) == "" {
		probs = append(probs, "no session")
	}
	if !slices.Contains(PhaseKinds(), p.Kind) {
		probs = append(probs, fmt.Sprintf("kind %q is not one of %s", p.Kind, strings.Join(PhaseKinds(), ", ")))
	}
	if strings.TrimSpace(p.Name) == "" {
		probs = append(probs, "no name")
	}
	switch {
	case p.Start.IsZero() || p.End.IsZero():
		probs = append(probs, "no start or end")
	case p.End.Before(p.Start):
		probs = append(probs, fmt.Sprintf("end %s before start %s", p.End.Format(time.RFC3339Nano), p.Start.Format(time.RFC3339Nano)))
	case math.Abs(p.Seconds-p.End.Sub(p.Start).Seconds()) > 0.001:
		probs = append(probs, fmt.Sprintf("seconds %g != end - start (%g)", p.Seconds, p.End.Sub(p.Start).Seconds()))
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("not a valid phase record: %s", strings.Join(probs, "; "))
}

// DecodePhase reads one phase record and validates it.
func DecodePhase(r io.Reader, name string) (*Phase, error) {
	var p Phase
	if err := decodeOne(r, name, PhaseV1, &p, func() string { return p.Schema }); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &p, nil
}

// DecodePhases reads a phases file: one JSON phase record per line (blank
// lines are skipped). An error names the file and the line.
func DecodePhases(r io.Reader, name string) ([]Phase, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var out []Phase
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		p, err := decodePhaseLine(line, fmt.Sprintf("%s: line %d", name, n))
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return out, nil
}

// decodePhaseLine decodes a line that must hold exactly one record.
func decodePhaseLine(line []byte, name string) (*Phase, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if rest := bytes.TrimSpace(line[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("%s: %q after the record (want one JSON object per line)", name, truncate(rest, 20))
	}
	return DecodePhase(bytes.NewReader(raw), name)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
