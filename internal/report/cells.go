package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// CellRow is one scenario x product cell of the main table as data: the
// steady-state step's figures, or the N/A reason. `aggregate steady` writes
// these as JSON lines so scripts can assert on the table without parsing
// Markdown.
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
	// Iteration scenarios: Unit is "iteration" (qps is iterations/s,
	// requests, failed and the percentiles are per iteration) and ByName
	// holds each named request of the steady step.
	Unit   string             `json:"unit,omitempty"`
	ByName map[string]NameRow `json:"by_name,omitempty"`
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
			s := st.Step
			row.Steady, row.Connections, row.QPS = true, s.Connections, s.QPS
			row.P50MS, row.P95MS, row.P99MS = s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99
			row.Requests, row.Failed, row.ErrorRate = s.Requests, s.Errors.Total(), s.ErrorRate
			row.File, row.Check = st.Path, s.Check
			row.Unit = s.CountUnit
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
