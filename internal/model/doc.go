// Package model turns idpbench result files into the numbers of a
// comparison: it loads step, meta, coldstart, phase and sample records from
// run directories (Load) and builds a Report from them (Build), which run,
// aggregate compare, the experiments and the renderers (internal/report)
// read; nothing here writes Markdown or SVG.
//
// Build computes every figure before any rendering: each ladder's levels
// (the windows of one connection count, with their spread) and its steady
// level (SelectSteadyLevel), capacities with their intervals and the
// paired ratios between products, the windows at shares of capacity and
// whether each was sustained, per product the memory, CPU and database
// figures inside the steady-state windows with a bottleneck verdict
// (Verdict), cold starts A and B, the GC-jitter P99 spread with its gaps
// (IntervalGaps), the charts' series (Chart, Multiples) and where the
// session's time went (TimeUse). Missing data becomes a Figure or NA
// reason, never a missing row: renderers only format. The statistics
// themselves (median, bootstrap) are internal/stats'.
package model
