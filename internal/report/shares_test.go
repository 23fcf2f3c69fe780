package report

import (
	"testing"

	"github.com/idpbench/idpbench/internal/model"
	"github.com/idpbench/idpbench/internal/schema"
	"github.com/idpbench/idpbench/internal/steps"
)

// TestShareP99: the main table's cell at a share prints the share's P99
// where it was sustained; where not, the rate it was not sustained at and
// the highest share below that was, with its share, or the search's
// outcome (model's TestSharesSustained makes such cells from windows).
func TestShareP99(t *testing.T) {
	p99 := model.Interval{N: 10, Center: 2.1, Lo: 2.0, Hi: 2.3}
	c := model.Cell{Shares: []model.ShareLatency{
		{Share: 50, Sustained: true, P99: p99},
		{Share: 64, Sustained: true, Search: true, P99: model.Interval{N: 10, Center: 3.1, Lo: 3.0, Hi: 3.3}},
		{Share: 80, Unsustained: true, RateRPS: 800, NA: "not sustained at 800/s (80% of capacity)"},
	}}
	if got, want := shareP99(c, 80), "not sustained (800/s); 64%: "+model.FormatInterval(c.Shares[1].P99, steps.FormatMS, ""); got != want {
		t.Errorf("at 80%%: %q, want %q", got, want)
	}
	if got, want := shareP99(c, 50), model.FormatInterval(p99, steps.FormatMS, ""); got != want {
		t.Errorf("at 50%%: %q, want its own figure %q", got, want)
	}
	if got := shareP99(c, 95); got != "–" {
		t.Errorf("at 95%%, not measured: %q, want –", got)
	}
	c.Shares = c.Shares[2:]
	if got, want := shareP99(c, 80), "not sustained (800/s); none sustained below (no search)"; got != want {
		t.Errorf("at 80%% without a search: %q, want %q", got, want)
	}
	c.Search = &schema.Search{Outcome: schema.SearchExhausted, Why: "not sustained at 41% either"}
	if got, want := shareP99(c, 80), "not sustained (800/s); none sustained below: not sustained at 41% either"; got != want {
		t.Errorf("at 80%% with nothing sustained: %q, want %q", got, want)
	}
}
