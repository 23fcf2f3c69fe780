// Package ladder decides how much of a connection ladder to measure: where
// round 1 stops (its knee, Knee) and which levels later rounds repeat
// (Candidates), from the step records measured so far. The decisions are
// arithmetic on step records, so they live here and not in the scripts:
// scripts/ladder.sh asks `aggregate ladder knee` after every step of round 1
// and `aggregate ladder candidates` before a later round.
package ladder
