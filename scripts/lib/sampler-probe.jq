# scripts/sampler-probe.sh's figures. window: one loadstep record (rate
# mode, 100 ms intervals) as {c, r, p50, p99, spikes, phases}; spikes: its
# intervals whose corrected P50 is above 3x the window's median interval;
# phases: [tenth of a second after the samplers' tick, ln corrected P50 ms]
# per interval, none when t0 is "" (no sampler). A closed-loop window has
# no corrected latency: its service latency stands in, and qps says more.
def ts: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$") | (.s + "Z" | fromdateiso8601) + ((.f // "0") | "0." + . | tonumber);
def median: sort | if length == 0 then null else .[length / 2 | floor] end;
def window($c; $r; $t0):
  [.intervals[] | .corrected_p50_ms // .p50_ms] as $iv
  | ($iv | median) as $m
  | (.start | ts) as $start
  | .interval_s as $len
  | (.corrected_latency_ms // .latency_ms) as $lat
  | {c: $c, r: ($r | tonumber), qps: .qps, p50: $lat.p50, p99: $lat.p99,
     spikes: ($iv | map(select(. > 3 * $m)) | length),
     phases: (if $t0 == "" then [] else ($t0 | ts) as $t | [range(0; $iv | length) as $i
       | (($start + $i * $len - $t) | . - floor) as $f | [($f * 10 | floor), ([$iv[$i], 0.001] | max | log)]] end)};
def tsv: "condition\trep\tqps\tp50_ms\tp99_ms\tspikes",
  (.[] | "\(.c)\t\(.r)\t\(.qps)\t\(.p50)\t\(.p99)\t\(.spikes)");
def round2: . * 100 | round / 100;
def summary: group_by(.c) | sort_by({none: 0, five: 1, one: 2, quiet: 3}[.[0].c]) | .[]
  | (map(.qps) | median) as $q
  | "\(.[0].c): windows \(length), median qps \($q | round) (spread \(((map(.qps) | max) / $q - 1) as $up | (1 - (map(.qps) | min) / $q) as $down | [$up, $down] | max * 100 | round)%), median P99 \(map(.p99) | median | round2) ms (each: \(map(.p99 | round2) | join(" "))), spikes a window \(map(.spikes) | join(" "))"
    + (([.[].phases[]] | group_by(.[0])) as $g | if ($g | length) == 0 then "" else
      ", corrected P50 by tenth of a second after the tick (ms): \($g | map(map(.[1]) | add / length | exp | round2) | join(" "))" end);
