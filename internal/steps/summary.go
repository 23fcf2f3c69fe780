package steps

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/idpbench/idpbench/internal/schema"
)

// Summary formats.
const (
	FormatText = "text"
	FormatCSV  = "csv"
	FormatJSON = "json"
)

// SummaryFormats lists the formats WriteSummary accepts.
func SummaryFormats() []string { return []string{FormatText, FormatCSV, FormatJSON} }

// SummaryRow is one step in a summary. JSON field names carry units like the
// step record's.
type SummaryRow struct {
	Product     string  `json:"product"`
	Scenario    string  `json:"scenario"`
	Connections int     `json:"c"`
	QPS         float64 `json:"qps"`
	P50MS       float64 `json:"p50_ms"`
	P95MS       float64 `json:"p95_ms"`
	P99MS       float64 `json:"p99_ms"`
	ErrorRate   float64 `json:"error_rate"` // a fraction, as in the step record
	Status      string  `json:"status"`
	Check       string  `json:"check"` // the success rule the step was judged by (JSON only)
	File        string  `json:"file"`  // the record's file, "-" for stdin
	// Requests and HistogramCount are JSON only: the step's requests and
	// the values in its latency histogram (every request that got a
	// complete HTTP response; -1 when the histogram does not decode), so
	// that a script can check a merge without decoding HdrHistograms.
	Requests       int64 `json:"requests"`
	HistogramCount int64 `json:"histogram_count"`
}

func summaryHeader() []string {
	return []string{"product", "scenario", "c", "qps", "p50_ms", "p95_ms", "p99_ms", "error_rate", "status", "file"}
}

// SummaryRows returns one row per step, in input order.
func SummaryRows(recs []File) []SummaryRow {
	rows := make([]SummaryRow, 0, len(recs))
	for _, sf := range recs {
		s := sf.Step
		rows = append(rows, SummaryRow{
			Product: sf.Product(), Scenario: s.Scenario, Connections: s.Connections,
			QPS: s.QPS, P50MS: s.LatencyMS.P50, P95MS: s.LatencyMS.P95, P99MS: s.LatencyMS.P99,
			ErrorRate: s.ErrorRate, Status: s.Status, Check: s.Check, File: sf.Path,
			Requests: s.Requests, HistogramCount: histogramCount(s.Histogram),
		})
	}
	return rows
}

// WriteSummary writes rows as aligned text (a header line, human numbers,
// error rate in percent), CSV (a header line, raw numbers, error rate as a
// fraction) or JSON lines (raw numbers).
func WriteSummary(w io.Writer, rows []SummaryRow, format string) error {
	switch format {
	case FormatText:
		return writeText(w, rows)
	case FormatCSV:
		return writeCSV(w, rows)
	case FormatJSON:
		return writeJSONLines(w, rows)
	}
	return fmt.Errorf("unknown summary format %q (want text, csv or json)", format)
}

func writeText(w io.Writer, rows []SummaryRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(summaryHeader(), "\t"))
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Product, r.Scenario, r.Connections,
			FormatQPS(r.QPS), FormatMS(r.P50MS), FormatMS(r.P95MS), FormatMS(r.P99MS),
			FormatPct(r.ErrorRate), r.Status, r.File)
	}
	return tw.Flush()
}

func writeCSV(w io.Writer, rows []SummaryRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(summaryHeader()); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range rows {
		rec := []string{r.Product, r.Scenario, strconv.Itoa(r.Connections), f(r.QPS), f(r.P50MS),
			f(r.P95MS), f(r.P99MS), f(r.ErrorRate), r.Status, r.File}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeJSONLines(w io.Writer, rows []SummaryRow) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// histogramCount is the number of values in an encoded histogram; 0 for
// none, -1 when it does not decode.
func histogramCount(encoded string) int64 {
	if encoded == "" {
		return 0
	}
	h, err := schema.DecodeHistogram(encoded)
	if err != nil {
		return -1
	}
	return h.TotalCount()
}
