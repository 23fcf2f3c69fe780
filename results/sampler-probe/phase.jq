# A full run's sustained share windows (5 s of 0.5 s intervals) grouped by
# where the probing samplers' tick falls in each window second ($t0: the
# first host record with probe_us of the samplers up in the closing, e.g.
# the rounds' first): for each quarter of the second, the windows, the
# geometric-mean ratio of the first half-second's corrected P50 to the
# second's (seconds 2-5), and how many windows have the first half slower.
# A tick that stalls the product makes the half-second it falls in (or the
# one after, as the queue drains) the slower one.
#   jq -s -r --arg t0 2026-12-06T10:33:26.443Z -f phase.jq RUN/*/*-share*.json
def ts: capture("^(?<s>[^.Z]+)(\\.(?<f>[0-9]+))?Z$") | (.s + "Z" | fromdateiso8601) + ((.f // "0") | "0." + . | tonumber);
($t0 | ts) as $t
| [.[] | select(.labels.phase == "share" and .sustain.verdict == "sustained" and (.intervals | length) >= 10)
   | [.intervals[:10][] | ([.corrected_p50_ms, 0.001] | max | log)] as $l
   | {x: (($t - (.start | ts)) | . - floor), eo: ((([$l[2,4,6,8]] | add) - ([$l[3,5,7,9]] | add)) / 4)}]
| group_by(.x * 4 | floor) | .[]
| "tick in quarter \(.[0].x * 4 | floor) of the window second: \(length) windows, first/second half-second P50 \(map(.eo) | add / length | exp | . * 100 | round / 100)x, first half slower in \(map(select(.eo > 0)) | length)"
