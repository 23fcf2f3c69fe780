package model

import (
	"slices"
	"time"
)

// sessionIndex is the sessions of the runs reported (their phase records):
// each session's span, to tell which session a window was measured in. A
// resumed run has several, and each started the products again.
type sessionIndex []sessionSpan

type sessionSpan struct {
	id         string
	start, end time.Time
}

func newSessionIndex(files []PhaseFile) sessionIndex {
	var out sessionIndex
	for _, f := range files {
		for _, p := range f.Phases {
			i := slices.IndexFunc(out, func(s sessionSpan) bool { return s.id == p.Session })
			if i < 0 {
				out = append(out, sessionSpan{p.Session, p.Start, p.End})
				continue
			}
			if p.Start.Before(out[i].start) {
				out[i].start = p.Start
			}
			if p.End.After(out[i].end) {
				out[i].end = p.End
			}
		}
	}
	return out
}

// of is the session whose span holds t; "" when none does.
func (x sessionIndex) of(t time.Time) string {
	for _, s := range x {
		if !t.Before(s.start) && !t.After(s.end) {
			return s.id
		}
	}
	return ""
}

// count is how many sessions the windows starting at starts were measured in.
func (x sessionIndex) count(starts []time.Time) int {
	var seen []string
	for _, t := range starts {
		if id := x.of(t); id != "" && !slices.Contains(seen, id) {
			seen = append(seen, id)
		}
	}
	return len(seen)
}
