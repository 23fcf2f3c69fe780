package steps

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

// checkSegments verifies that the records of a segmented step (loadstep
// --segment I/N) are one whole: every record has a segment (or none has:
// agents lined up by hand merge as before), all of the same N, each index
// 0..N-1 exactly once, all of the same whole step (total_connections,
// total_rate_rps), and the agents' shares add up to it. Errors name the
// files.
func checkSegments(steps []File) error {
	i := slices.IndexFunc(steps, func(sf File) bool { return sf.Step.Segment != nil })
	if i < 0 {
		return nil
	}
	first, g := steps[i], steps[i].Step.Segment
	byIndex := map[int]string{}
	var conns int
	var rate float64
	for _, sf := range steps {
		s := sf.Step.Segment
		if err := sameSegmentation(first, sf); err != nil {
			return err
		}
		if prev, ok := byIndex[s.Index]; ok {
			return fmt.Errorf("merging: segment %d/%d twice, in %s and %s: each agent's record once", s.Index, s.Of, prev, sf.Path)
		}
		byIndex[s.Index] = sf.Path
		conns += sf.Step.Connections
		rate += sf.Step.RateRPS
	}
	if missing := missingIndexes(byIndex, g.Of); len(missing) > 0 {
		return fmt.Errorf("merging: segment %s of %d missing (have %s): the merge of a segmented step needs every agent's record",
			joinInts(missing), g.Of, segmentList(byIndex, g.Of))
	}
	if conns != g.TotalConnections || math.Abs(rate-g.TotalRateRPS) > 1e-9*g.TotalRateRPS {
		return fmt.Errorf("merging: the segments' connections %d and rate %g req/s do not add up to their whole step's %d and %g (%s)",
			conns, rate, g.TotalConnections, g.TotalRateRPS, segmentList(byIndex, g.Of))
	}
	return nil
}

// sameSegmentation checks that sf is a segment of the same whole step as first.
func sameSegmentation(first, sf File) error {
	a, b := first.Step.Segment, sf.Step.Segment
	switch {
	case b == nil:
		return fmt.Errorf("merging %s: it has no segment, but %s is segment %d/%d: merge the segments of one step only with each other",
			sf.Path, first.Path, a.Index, a.Of)
	case b.Of != a.Of:
		return fmt.Errorf("merging %s: segment %d/%d, but %s is %d/%d: the agents of one step share N",
			sf.Path, b.Index, b.Of, first.Path, a.Index, a.Of)
	case b.Index < 0 || b.Index >= b.Of:
		return fmt.Errorf("merging %s: segment %d/%d is not an index 0..%d", sf.Path, b.Index, b.Of, b.Of-1)
	case b.TotalConnections != a.TotalConnections || b.TotalRateRPS != a.TotalRateRPS:
		return fmt.Errorf("merging %s: a segment of c=%d rate=%g, but %s is of c=%d rate=%g: the agents of one step split the same whole",
			sf.Path, b.TotalConnections, b.TotalRateRPS, first.Path, a.TotalConnections, a.TotalRateRPS)
	}
	return nil
}

func missingIndexes(byIndex map[int]string, n int) []int {
	var out []int
	for i := range n {
		if _, ok := byIndex[i]; !ok {
			out = append(out, i)
		}
	}
	return out
}

// segmentList names the files by their segments, in index order.
func segmentList(byIndex map[int]string, n int) string {
	var parts []string
	for i := range n {
		if p, ok := byIndex[i]; ok {
			parts = append(parts, fmt.Sprintf("%d/%d %s", i, n, p))
		}
	}
	return strings.Join(parts, ", ")
}

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

// mergeStarts records the spread of the agents' actual starts, keeps the
// requested start they share, and gives a segmented step its whole rate
// exactly (the shares' sum may differ from it in the last bit).
func mergeStarts(out *schema.Step, steps []File) {
	var lo, hi time.Time
	for k, sf := range steps {
		t := sf.Step.Start
		if sf.Step.StartedAt != nil {
			t = *sf.Step.StartedAt
		}
		if k == 0 || t.Before(lo) {
			lo = t
		}
		if k == 0 || t.After(hi) {
			hi = t
		}
	}
	out.StartSkewMS = new(float64(hi.Sub(lo)) / float64(time.Millisecond))
	at := steps[0].Step.StartAt
	for _, sf := range steps[1:] {
		if at != nil && (sf.Step.StartAt == nil || !sf.Step.StartAt.Equal(*at)) {
			at = nil
		}
	}
	out.StartAt = at
	if g := steps[0].Step.Segment; g != nil {
		out.RateRPS = g.TotalRateRPS
	}
}
