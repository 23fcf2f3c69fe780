package schema

import (
	"fmt"
	"io"
	"strings"
)

// SearchV1 is the schema string of a share search record.
const SearchV1 = "idpbench.search/v1"

// How a share search ended (Search.Outcome).
const (
	SearchFound     = "found"     // a search window was sustained: Found
	SearchBelow     = "below"     // the next try was not above the highest share already sustained: Found is that share
	SearchBudget    = "budget"    // a window would have passed the run's budget
	SearchExhausted = "exhausted" // every window it may spend was not sustained
	SearchNone      = "none"      // no search (IDPBENCH_SHARE_SEARCH 0), or nothing left below (the next try 0%)
)

// Search records how the run looked for the highest share of a cell's
// capacity the product sustained, below the lowest share it did not
// (the ladder writes it as RUN_DIR/PRODUCT/SCENARIO.search.json after the
// cell's windows at shares; docs/design-methodology.md, "Latency at shares of
// capacity"). Absent when every share was sustained.
type Search struct {
	Schema   string `json:"schema"`   // SearchV1
	Product  string `json:"product"`  // product name, as in the steps
	Scenario string `json:"scenario"` // scenario name, as in the steps
	// Below is the lowest share (percent of the capacity) not sustained:
	// the search looks for the highest sustained share under it.
	Below int `json:"below"`
	// Tried is the shares the search measured, in order (percent).
	Tried []int `json:"tried"`
	// Found is the highest share sustained below Below (a search window's,
	// or a configured share's); 0 when none was.
	Found   int    `json:"found"`
	Outcome string `json:"outcome"` // SearchFound | SearchBelow | SearchBudget | SearchExhausted | SearchNone
	Why     string `json:"why"`     // the outcome in words, with its figures
}

// DecodeSearch reads one search record and validates it.
func DecodeSearch(r io.Reader, name string) (*Search, error) {
	var s Search
	if err := decodeOne(r, name, SearchV1, &s, func() string { return s.Schema }); err != nil {
		return nil, err
	}
	var probs []string
	if s.Product == "" || s.Scenario == "" {
		probs = append(probs, "no product or scenario")
	}
	switch s.Outcome {
	case SearchFound, SearchBelow, SearchBudget, SearchExhausted, SearchNone:
	default:
		probs = append(probs, fmt.Sprintf("outcome %q (want found, below, budget, exhausted or none)", s.Outcome))
	}
	if s.Below < 1 || s.Below > 100 || s.Found < 0 || s.Found >= s.Below {
		probs = append(probs, fmt.Sprintf("below %d%%, found %d%% (want 0 <= found < below <= 100)", s.Below, s.Found))
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%s: not a valid search record: %s", name, strings.Join(probs, "; "))
	}
	return &s, nil
}
