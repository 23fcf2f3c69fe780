package report

import (
	"testing"

	"github.com/idpbench/idpbench/internal/model"
)

// TestMemKinds: the memory table names the measure of each side where they
// differ (model's TestMemoryPrefersPSSWhereReadable makes such a pair).
func TestMemKinds(t *testing.T) {
	for _, tc := range []struct {
		res  model.Resources
		want string
	}{
		{model.Resources{IdPMem: model.MemRSS, DBMem: model.MemPSS, DBRSS: model.Figure{OK: true}}, "IdP RSS, PostgreSQL PSS"},
		{model.Resources{IdPMem: model.MemRSS, DBMem: model.MemRSS, DBRSS: model.Figure{OK: true}}, model.MemRSS},
		{model.Resources{IdPMem: model.MemPSS}, model.MemPSS},
		{model.Resources{}, "–"},
	} {
		if got := memKinds(tc.res); got != tc.want {
			t.Errorf("memKinds(%s, %s) = %q, want %q", tc.res.IdPMem, tc.res.DBMem, got, tc.want)
		}
	}
}
