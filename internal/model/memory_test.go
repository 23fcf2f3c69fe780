package model

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
}

// TestMemoryFromContainers: in compose mode the sampler sees the IdP and
// its database only as containers; the report takes the product's
// container as the IdP and the -postgres container as the database, and
// keeps PostgreSQL's statistics from the postgres source.
func TestMemoryFromContainers(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	const m = 1 << 20
	rec := func(sec int, src string, rss int64, conns int) schema.Sample {
		return schema.Sample{Schema: schema.SampleV1, T: t0.Add(time.Duration(sec) * time.Second), Source: src,
			RSSBytes: rss, CPUPct: 10, Connections: conns}
	}
	samples := []schema.Sample{
		rec(1, "container:idpbench-zitadel", 300*m, 0), rec(2, "container:idpbench-zitadel", 320*m, 0),
		rec(1, "container:idpbench-zitadel-postgres", 900*m, 0), rec(2, "container:idpbench-zitadel-postgres", 1000*m, 0),
		rec(1, "container:idpbench-other", 5000*m, 0), // another product's leftover: never the IdP
		// --postgres over the container's published port: statistics, no process figures
		rec(1, SourcePostgres, 0, 12), rec(2, SourcePostgres, 0, 14),
	}
	if got := IdPSource("zitadel", samples); got != "container:idpbench-zitadel" {
		t.Errorf("IdPSource = %q, want the product's container", got)
	}
	if got := IdPSource("keycloak", samples[:4]); got != "container:idpbench-zitadel" {
		t.Errorf("IdPSource without the product's container = %q, want the largest non-database container", got)
	}
	if got := DBSource(samples); got != "container:idpbench-zitadel-postgres" {
		t.Errorf("DBSource = %q, want the database container", got)
	}
	if got := DBSource([]schema.Sample{rec(1, SourcePostgres, 400*m, 3), rec(1, "container:x-postgres", 1, 0)}); got != SourcePostgres {
		t.Errorf("DBSource with native process figures = %q, want postgres", got)
	}
	res := Resources{IdPSource: IdPSource("zitadel", samples), DBSource: DBSource(samples)}
	res.memory(samples, samples)
	if res.IdPRSS.Value != 310 || res.IdPMem != MemCgroup || res.DBRSS.Value != 950 || res.DBMem != MemCgroup {
		t.Errorf("IdP %v %s, PostgreSQL %v %s; want 310 and 950 MiB of cgroup memory",
			res.IdPRSS.Value, res.IdPMem, res.DBRSS.Value, res.DBMem)
	}
	if res.StackRSS.Value != 1260 || res.ConnsMax.Value != 14 {
		t.Errorf("full stack %v (want 1260), connections max %v (want 14)", res.StackRSS.Value, res.ConnsMax.Value)
	}
}
