package report

import (
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/schema"
)

func TestMemoryPrefersPSSWhereReadable(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const m = 1 << 20
	rec := func(sec int, src string, rss, pss int64) schema.Sample {
		return schema.Sample{Schema: schema.SampleV1, T: t0.Add(time.Duration(sec) * time.Second), Source: src, RSSBytes: rss, PSSBytes: pss}
	}
	samples := []schema.Sample{
		// PostgreSQL: 20 backends each mapping 256 MiB of shared_buffers; RSS
		// counts it 20 times, PSS once. Only every other record has PSS.
		rec(1, SourcePostgres, 5400*m, 300*m), rec(2, SourcePostgres, 5400*m, 0),
		rec(3, SourcePostgres, 5400*m, 310*m), rec(4, SourcePostgres, 5400*m, 0),
		rec(1, "process:hydra", 60*m, 0), rec(2, "process:hydra", 62*m, 0),
		rec(3, "process:hydra", 64*m, 0), rec(4, "process:hydra", 66*m, 0),
	}
	var res Resources
	res.IdPSource = "process:hydra"
	res.memory(samples, samples)
	if res.DBMem != MemPSS || res.DBRSS.Value != 305 {
		t.Errorf("PostgreSQL = %v %s, want the median PSS 305 MiB", res.DBRSS.Value, res.DBMem)
	}
	if res.IdPMem != MemRSS || res.IdPRSS.Value != 63 {
		t.Errorf("IdP = %v %s, want the median RSS 63 MiB (no PSS records)", res.IdPRSS.Value, res.IdPMem)
	}
	// The stack sums only instants where both sources have their measure: t=1 and t=3.
	if res.StackRSS.Value != (360+374)/2.0 {
		t.Errorf("full stack = %v, want %v", res.StackRSS.Value, (360+374)/2.0)
	}
	if got := memKinds(res); got != "IdP RSS, PostgreSQL PSS" {
		t.Errorf("memKinds = %q", got)
	}
}
