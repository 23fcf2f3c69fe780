# per sustained share window: each second's corrected P50 (geometric mean of its two
# half-second intervals); count, for seconds 1-4, the windows where it is above 2x the last
[.[] | select(.labels.phase == "share" and .sustain.verdict == "sustained" and (.intervals | length) >= 10)
 | [.intervals[:10][] | ([.corrected_p50_ms, 0.001] | max)]
 | [range(0; 5) as $s | ((.[2*$s] | log) + (.[2*$s+1] | log)) / 2 | exp]
 | . as $sec | [range(0; 4) | if $sec[.] > 2 * $sec[4] then 1 else 0 end]]
| {windows: length, above_2x_last: [range(0; 4) as $k | map(.[$k]) | add]}
