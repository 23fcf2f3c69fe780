-- Makes wrk print its totals as one JSON line on stdout, so the bench command (internal/bench) reads
-- numbers instead of parsing wrk's human-readable report.
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, errors,
    latency:percentile(50), latency:percentile(99)))
end
