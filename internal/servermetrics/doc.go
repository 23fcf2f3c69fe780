// Package servermetrics is the product's own view of a load step: it
// scrapes the product's Prometheus text exposition at the measured
// window's edges (Scraper, wired into loadstep --server-metrics), parses
// the raw scrapes with github.com/prometheus/common/expfmt (Parse), and
// turns a start and an end scrape into what the server counted for the
// scenario's endpoint in the window (Delta): requests, requests by
// status, errors, and latency percentiles from the histogram buckets.
//
// Which metric family and labels are "the scenario's endpoint" is product
// knowledge, declared once as data (Products): a table per product of
// scenario -> family + label matchers, with the metric names read from
// the running servers.
//
// The window edges: the start scrape is sent when the window begins, so
// requests sent in the warmup and still in flight then (at most one per
// connection) may complete after it and be counted by the server but not
// by loadstep; the end scrape is sent after the drain, when every request
// of the window has completed, so none is missing from it. Requests that
// completed while a scrape was being answered may fall on either side.
package servermetrics
