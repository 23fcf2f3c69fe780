// Package ladder decides how much of a connection ladder to measure: where
// round 1 stops (its knee, Knee) and which levels later rounds repeat
// (Candidates), from the step records measured so far. The decisions are
// arithmetic on step records, so they live here and not in the scripts. Run
// is the ladder itself (cmd/ladder, which scripts/ladder.sh execs): each
// window a loadstep, what it measures the product's entry's answer
// (Env.Ask), the adapter asked only for its lifecycle (version, fresh,
// pools without a plan), the knee decided after
// every window of round 1 and the candidates before a later round
// (`aggregate ladder knee|candidates` answer the same questions by hand).
package ladder
