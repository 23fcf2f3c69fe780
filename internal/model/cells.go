package model

import (
	"encoding/json"
	"fmt"
	"io"
)

// CellRow is one scenario x product cell of the main table as data: the
// steady level's figures, or the N/A reason. `aggregate steady` writes
// these as JSON lines so scripts can assert on the table without parsing
// Markdown. qps, the percentiles and error_rate are the medians over the
// level's windows (a single window's own figures); requests, failed, file
// and by_name are the level's median window's (Cell.Steady).
type CellRow struct {
	Product     string  `json:"product"`
	ID          string  `json:"id"` // S1, S2 ...
	Scenario    string  `json:"scenario"`
	Steady      bool    `json:"steady"` // false = N/A, see Reason
	Connections int     `json:"c,omitempty"`
	QPS         float64 `json:"qps,omitempty"`
	P50MS       float64 `json:"p50_ms,omitempty"`
	P95MS       float64 `json:"p95_ms,omitempty"`
	P99MS       float64 `json:"p99_ms,omitempty"`
	Requests    int64   `json:"requests,omitempty"`
	Failed      int64   `json:"failed"`
	ErrorRate   float64 `json:"error_rate"` // a fraction
	Reason      string  `json:"reason,omitempty"`
	Check       string  `json:"check,omitempty"` // the steady step's success rule (schema.Step.Check)
	File        string  `json:"file,omitempty"`
	// A level of several windows (--repeats N): their count, the qps
	// spread in percent (Spread.Pct) and whether it exceeds UnstablePct.
	// Absent for a single window.
	Windows      int     `json:"windows,omitempty"`
	QPSSpreadPct float64 `json:"qps_spread_pct,omitempty"`
	Unstable     bool    `json:"unstable,omitempty"`
	// Iteration scenarios: Unit is "iteration" (qps is iterations/s,
	// requests, failed and the percentiles are per iteration) and ByName
	// holds each named request of the steady step.
	Unit   string             `json:"unit,omitempty"`
	ByName map[string]NameRow `json:"by_name,omitempty"`
	// Server is the server side of the steady step (serverside.go);
	// absent for an N/A cell.
	Server *ServerRow `json:"server,omitempty"`
	// Capacity is the cell's capacity (Capacity): raw and at one host
	// speed, each a median with its 95% interval; absent for an N/A cell.
	Capacity *CapacityRow `json:"capacity,omitempty"`
	// Shares is the cell's latency at shares of its capacity (ShareLatency),
	// by share; absent without windows at shares.
	Shares []ShareRow `json:"shares,omitempty"`
}

// ShareRow is a cell's latency at one share of its capacity as data.
type ShareRow struct {
	Share   int         `json:"share"` // percent of the capacity
	RateRPS float64     `json:"rate_rps"`
	QPS     float64     `json:"qps"` // achieved
	Windows int         `json:"windows"`
	Seconds int         `json:"seconds"`
	Late    int64       `json:"late"`
	P50     IntervalRow `json:"p50_ms"`
	P95     IntervalRow `json:"p95_ms"`
	P99     IntervalRow `json:"p99_ms"`
	// CompletedRPS is what the product completed a second in the windows;
	// absent for records without it.
	CompletedRPS float64 `json:"completed_rps,omitempty"`
	Sustained    bool    `json:"sustained"`        // every window kept up with its schedule
	Verdict      string  `json:"verdict"`          // the sustain rule's figures, in words
	Search       bool    `json:"search,omitempty"` // measured by the run's search below a share not sustained
	NA           string  `json:"na,omitempty"`
}

// CapacityRow is a cell's capacity as data.
type CapacityRow struct {
	Levels   []int       `json:"levels"` // the plateau's connection counts
	Windows  int         `json:"windows"`
	Raw      IntervalRow `json:"raw"`
	Adjusted IntervalRow `json:"adjusted"`
	Headline string      `json:"headline"` // "adjusted" or "raw": the figure the main table leads with
}

// IntervalRow is an Interval as data: lo and hi absent (and na set)
// without an interval.
type IntervalRow struct {
	N      int     `json:"n"`
	Median float64 `json:"median,omitempty"`
	Lo     float64 `json:"lo,omitempty"`
	Hi     float64 `json:"hi,omitempty"`
	NA     string  `json:"na,omitempty"`
}

func intervalRow(iv Interval) IntervalRow {
	return IntervalRow{N: iv.N, Median: iv.Center, Lo: iv.Lo, Hi: iv.Hi, NA: iv.NA}
}

func capacityRow(c Cell) *CapacityRow {
	row := &CapacityRow{Windows: c.Capacity.Windows(), Raw: intervalRow(c.Capacity.Raw),
		Adjusted: intervalRow(c.Capacity.Adjusted), Headline: "raw"}
	for _, i := range c.Capacity.Levels {
		row.Levels = append(row.Levels, c.Levels[i].Connections)
	}
	if c.Capacity.HeadlineIsAdjusted() {
		row.Headline = "adjusted"
	}
	return row
}

// NameRow is one named request of an iteration's steady step.
type NameRow struct {
	Requests int64   `json:"requests"`
	Failed   int64   `json:"failed"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
}

// CellRows returns the main table's cells in report order.
func CellRows(r *Report) []CellRow {
	rows := make([]CellRow, 0, len(r.Cells))
	for _, c := range r.Cells {
		row := CellRow{Product: c.Product, ID: c.Scenario.ID, Scenario: c.Scenario.Name, Reason: c.NAReason}
		if st := c.SteadyStep(); st != nil {
			s, l := st.Step, c.SteadyWindows()
			row.Steady, row.Connections, row.QPS = true, s.Connections, l.QPS.Median
			row.P50MS, row.P95MS, row.P99MS = l.P50MS.Median, l.P95MS.Median, l.P99MS.Median
			row.Requests, row.Failed, row.ErrorRate = s.Requests, s.Errors.Total(), l.ErrorRate.Median
			if l.Windows() > 1 {
				row.Windows, row.QPSSpreadPct, row.Unstable = l.Windows(), l.QPS.Pct(), l.Unstable()
			}
			row.File, row.Check = st.Path, s.Check
			row.Unit = s.CountUnit
			row.Server = r.serverRow(c)
			row.Capacity = capacityRow(c)
			for _, sl := range c.Shares {
				row.Shares = append(row.Shares, ShareRow{Share: sl.Share, RateRPS: sl.RateRPS, QPS: sl.QPS, Windows: len(sl.Windows),
					Seconds: sl.Seconds, Late: sl.Late, P50: intervalRow(sl.P50), P95: intervalRow(sl.P95), P99: intervalRow(sl.P99), NA: sl.NA,
					CompletedRPS: sl.CompletedRPS, Sustained: sl.Sustained, Verdict: sl.Verdict, Search: sl.Search})
			}
			for name, nr := range s.RequestsByName {
				if row.ByName == nil {
					row.ByName = map[string]NameRow{}
				}
				row.ByName[name] = NameRow{nr.Requests, nr.Errors.Total(), nr.LatencyMS.P50, nr.LatencyMS.P99}
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteCellRows writes rows as JSON lines.
func WriteCellRows(w io.Writer, rows []CellRow) error {
	enc := json.NewEncoder(w)
	for _, row := range rows {
		if err := enc.Encode(row); err != nil {
			return fmt.Errorf("writing cells: %w", err)
		}
	}
	return nil
}
