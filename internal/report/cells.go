package report

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
