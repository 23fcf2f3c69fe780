package ladder

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/placement"
	"github.com/idpbench/idpbench/internal/product"
)

// Options are a ladder's command line as given (cmd/ladder); "" or 0 where
// a flag was not given.
type Options struct {
	Product, Scenario string
	Quick             bool   // the smoke profile
	Repeats, Round    string // --repeats, --round; "": IDPBENCH_REPEATS, IDPBENCH_ROUND
	FullLadder        bool   // --full-ladder; false: IDPBENCH_FULL_LADDER
	Where                    // StepTotal 0: the ladder's bound
}

// Config is one ladder to run, validated.
type Config struct {
	Product, Scenario string
	Profile           string // quick or full (the label profile=)
	Ladder            []int  // the connection counts, in order
	WarmupS           int    // the warmup's floor, seconds
	WarmupMaxS        int    // its cap, seconds; <= WarmupS: a fixed warmup
	WarmupStable      int    // loadstep --warmup-stable: the intervals that must be stable
	TolerancePct      string // loadstep --warmup-tolerance, as given
	JITMaxPct         int    // loadstep --warmup-jit-max, percent of one core
	DurationS         int    // the measured window of a round after the first, seconds
	// SearchDurationS is round 1's window (the level search), seconds.
	SearchDurationS int
	// KneeFlat is how many last levels of round 1 must add less than the
	// noise for its knee rule to stop it (KneeConfig.Flat): full 1, quick 2.
	KneeFlat int
	// BestOnly: a round after the first measures round 1's best level
	// only (the interleaved rounds of cmd/run), not every candidate.
	BestOnly bool
	// Twin: the window is the A/A twin of the cell's in the same round
	// (the product measured again as if it were another; label
	// phase=twin, file SCENARIO-c<N>-r<K>-twin.json).
	Twin bool
	// Answers, when not nil, keeps what the adapter answers for the
	// scenario (endpoint, loadstep and metrics arguments, version) from
	// one ladder to the next: filled by the first, read by the others.
	Answers          *Answers
	Repeats          int  // windows of each candidate level
	Round            int  // the one round to measure; 0: round 1, then the repeats
	FullLadder       bool // measure every level of round 1
	RunDir, StateDir string
	StepOffset       int
	StepTotal        int     // 0: the ladder's bound
	ReusePool        int     // a reuse pool's size
	ReuseMaxAgeS     int     // a reuse pool at least this old is minted again; -1: not set
	PerConnQPS       float64 // a consumed pool's first step: the rate assumed per connection
	PoolCap          int     // a consumed pool's most credentials
	Adapter          string  // the product's adapter executable
	Loadstep         string  // the loadstep executable
	DriverCPUs       string  // loadstep and the pools run on these CPUs; "": not pinned
	ShareSettings
}

// The profiles' ladders and windows. The full profile starts at 4
// connections (at c=2 no product of the 2026-12-05 full run had its best
// level); its level search (round 1) measures 2 s windows and stops one
// flat level after the knee, and its interleaved rounds 3 s windows
// (docs/design-methodology.md, "The schedule").
const (
	FullLadder          = "4 8 16 32 64 128"
	QuickLadder         = "2 8 32"
	FullDurationS       = "3"
	FullSearchDurationS = "2"
)

// Answers is what a ladder was answered for one scenario of one product
// (Config.Answers): the entry's answer (Env.Ask) and the product's version.
type Answers struct {
	product.Answer
	Version      string
	Health       string // the discovery endpoint, which the health check asks
	filled, isNA bool
}

// WarmMostS is the longest a window's warmup may be.
func (c Config) WarmMostS() int { return max(c.WarmupS, c.WarmupMaxS) }

// NewConfig resolves o and the environment (getenv: os.Getenv or a stand-in)
// into a Config, or a usage error naming the flag or variable.
func NewConfig(o Options, getenv func(string) string) (Config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	where, err := o.Where.Resolve(getenv)
	c := Config{Product: o.Product, Scenario: o.Scenario, RunDir: where.RunDir, StateDir: where.StateDir,
		StepOffset: where.StepOffset, StepTotal: where.StepTotal, Loadstep: where.Loadstep(),
		DriverCPUs: getenv(placement.EnvDriver), TolerancePct: env("IDPBENCH_WARMUP_TOLERANCE_PCT", "10"), ReuseMaxAgeS: -1}
	if err != nil {
		return c, err
	}
	ladder, warmup, warmupMax := FullLadder, "1", "8"
	c.Profile, c.KneeFlat, c.WarmupStable = "full", 1, 2
	if o.Quick {
		ladder, warmup, warmupMax, c.Profile, c.KneeFlat = QuickLadder, "1", "5", "quick", 2
	}
	if c.Ladder, err = parseLadder(env("IDPBENCH_LADDER", ladder)); err != nil {
		return c, err
	}
	sd, d := windows(o.Quick, env)
	w, wm := env("IDPBENCH_WARMUP_S", warmup), env("IDPBENCH_WARMUP_MAX_S", warmupMax)
	var okW, okWM, okD, okSD bool
	c.WarmupS, okW = Whole(w)
	c.WarmupMaxS, okWM = Whole(wm)
	c.DurationS, okD = Whole(d)
	c.SearchDurationS, okSD = Whole(sd)
	if !okW || !okWM || !okD || !okSD || c.DurationS < 1 || c.SearchDurationS < 1 {
		return c, cli.Usagef("IDPBENCH_WARMUP_S %s, IDPBENCH_WARMUP_MAX_S %s, IDPBENCH_DURATION_S %s, IDPBENCH_SEARCH_DURATION_S %s: want whole seconds", w, wm, d, sd)
	}
	// The JIT is recorded, not waited for: the rounds measure each cell
	// again and again over the run, and what a JVM still compiles shows as
	// its own drift across them (docs/design-methodology.md, "The schedule").
	jit := env("IDPBENCH_WARMUP_JIT_MAX_PCT", "0")
	var ok bool
	if c.JITMaxPct, ok = Whole(jit); !ok {
		return c, cli.Usagef("IDPBENCH_WARMUP_JIT_MAX_PCT %s: want a whole percent (0: record the JIT, do not wait for it)", jit)
	}
	if err := c.rounds(o, env); err != nil {
		return c, err
	}
	if err := c.pools(env); err != nil {
		return c, err
	}
	if c.ShareSettings, err = ParseShares(o.Quick, getenv); err != nil {
		return c, err
	}
	c.Adapter, err = where.AdapterOf(o.Product, "scripts/ladder.sh", getenv)
	return c, err
}

// windows are the search's and the rounds' windows as given, seconds
// (IDPBENCH_SEARCH_DURATION_S, else IDPBENCH_DURATION_S, else the
// profile's; IDPBENCH_DURATION_S, else the profile's).
func windows(quick bool, env func(name, def string) string) (search, round string) {
	search, round = FullSearchDurationS, FullDurationS
	if quick {
		search, round = "3", "2"
	}
	return env("IDPBENCH_SEARCH_DURATION_S", env("IDPBENCH_DURATION_S", search)), env("IDPBENCH_DURATION_S", round)
}

// WindowsS are the search's and the rounds' windows of a profile, seconds,
// as NewConfig resolves them (getenv: os.Getenv or a stand-in); 0 for a
// value NewConfig refuses.
func WindowsS(quick bool, getenv func(string) string) (search, round int) {
	s, r := windows(quick, func(name, def string) string { return cmp.Or(getenv(name), def) })
	search, _ = Whole(s)
	round, _ = Whole(r)
	return search, round
}

// rounds resolves the repeats, the round and the full ladder.
func (c *Config) rounds(o Options, env func(name, def string) string) error {
	repeats, round := o.Repeats, o.Round
	if repeats == "" {
		repeats = env("IDPBENCH_REPEATS", "1")
	}
	if round == "" {
		round = env("IDPBENCH_ROUND", "")
	}
	var ok bool
	if c.Repeats, ok = Whole(repeats); !ok || c.Repeats < 1 {
		return cli.Usagef("IDPBENCH_REPEATS (--repeats) %s: want a whole number >= 1", repeats)
	}
	if round != "" {
		if c.Round, ok = Whole(round); !ok || c.Round < 1 || c.Round > c.Repeats {
			return cli.Usagef("IDPBENCH_ROUND (--round) %s: want a whole number from 1 to the repeats (%d)", round, c.Repeats)
		}
	}
	full := env("IDPBENCH_FULL_LADDER", "0")
	if o.FullLadder {
		full = "1"
	}
	if full != "0" && full != "1" {
		return cli.Usagef("IDPBENCH_FULL_LADDER %s: want 0 or 1", full)
	}
	c.FullLadder = full == "1"
	return nil
}

// pools resolves the pools' sizes and the reuse pool's age.
func (c *Config) pools(env func(name, def string) string) error {
	reuse, capN, qps := env("IDPBENCH_REUSE_POOL", "256"), env("IDPBENCH_POOL_CAP", "100000"), env("IDPBENCH_CONSUME_PER_CONN_QPS", "50")
	var ok bool
	if c.ReusePool, ok = Whole(reuse); !ok || c.ReusePool < 1 {
		return cli.Usagef("IDPBENCH_REUSE_POOL %s: want a whole number >= 1", reuse)
	}
	if c.PoolCap, ok = Whole(capN); !ok || c.PoolCap < 1 {
		return cli.Usagef("IDPBENCH_POOL_CAP %s: want a whole number >= 1", capN)
	}
	var err error
	if c.PerConnQPS, err = strconv.ParseFloat(qps, 64); err != nil || !(c.PerConnQPS > 0) {
		return cli.Usagef("IDPBENCH_CONSUME_PER_CONN_QPS %s: want a rate above 0", qps)
	}
	if age := env("IDPBENCH_REUSE_MAX_AGE_S", ""); age != "" {
		if c.ReuseMaxAgeS, ok = Whole(age); !ok {
			return cli.Usagef("IDPBENCH_REUSE_MAX_AGE_S %s: want whole seconds", age)
		}
	}
	return nil
}

// ShareSettings are a cell's rate-mode windows at fixed shares of its
// capacity (RunShares; docs/design-methodology.md, "Latency at shares of capacity").
type ShareSettings struct {
	// Shares are the percentages of the capacity (IDPBENCH_SHARES, "50 80";
	// "none": no windows at shares).
	Shares []int
	// ShareWindows windows of ShareDurationS seconds at each share
	// (IDPBENCH_SHARE_WINDOWS, IDPBENCH_SHARE_DURATION_S; full 1 x 5 s,
	// quick 1 x 3 s), each after a warmup that ramps the rate up over
	// ShareRampS, lasts at least ShareWarmupS and then until the corrected
	// latency has been back at its calmest for ShareStable intervals, at
	// most ShareWarmupMaxS (IDPBENCH_SHARE_WARMUP_S,
	// IDPBENCH_SHARE_WARMUP_MAX_S; full 2 and 15, quick 1 and 4; the ramp
	// 1 s, at most the floor).
	ShareWindows, ShareDurationS, ShareWarmupS, ShareWarmupMaxS, ShareRampS int
	// ShareStable is how many intervals the shares' warmup rule wants at
	// the calm (loadstep --warmup-stable in rate mode): full 4 (2 s), quick
	// 2 (its windows are short and its check cannot judge flat openings).
	ShareStable int
	// ShareIntervalMS is the windows' interval, milliseconds (500: a 5 s
	// window has 10 intervals, a quick 3 s one the 6 the sustain rule
	// judges from 5).
	ShareIntervalMS int
	// ShareSearch is how many windows a cell may spend, after its shares,
	// finding the highest sustained share below the lowest one it did not
	// sustain (IDPBENCH_SHARE_SEARCH, default 2; 0: no search).
	ShareSearch int
}

// ShareTolerancePct is the shares' warmup rule's band (loadstep
// --warmup-tolerance in rate mode): the last ShareStable intervals after
// the ramp each within 50% (or 0.2 ms) above the calmest of them all.
const ShareTolerancePct = 50

// ParseShares reads the shares' variables (getenv: os.Getenv or a
// stand-in); a bad value is a usage error naming the variable.
func ParseShares(quick bool, getenv func(string) string) (ShareSettings, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var c ShareSettings
	shares := env("IDPBENCH_SHARES", "50 80")
	if shares != "none" {
		for _, f := range strings.Fields(shares) {
			n, ok := Whole(f)
			if !ok || n < 1 || n > 100 {
				return c, cli.Usagef("IDPBENCH_SHARES %q: %q is not a percentage of the capacity (want whole numbers from 1 to 100, space-separated; none: no windows at shares)", shares, f)
			}
			c.Shares = append(c.Shares, n)
		}
		if len(c.Shares) == 0 {
			return c, cli.Usagef("IDPBENCH_SHARES %q: no share (none: no windows at shares)", shares)
		}
	}
	// 5 s of half-second intervals: the ten intervals the sustain rule and
	// the latency's interval read, at half the time of the 10 s windows of
	// before the interleaved schedule, whose rounds needed it.
	windows, duration, warmup, warmupMax := "1", "5", "2", "15"
	c.ShareIntervalMS, c.ShareStable = 500, 4
	if quick {
		duration, warmup, warmupMax, c.ShareIntervalMS, c.ShareStable = "3", "1", "4", 500, 2
	}
	w, d, wu, wm := env("IDPBENCH_SHARE_WINDOWS", windows), env("IDPBENCH_SHARE_DURATION_S", duration), env("IDPBENCH_SHARE_WARMUP_S", warmup), env("IDPBENCH_SHARE_WARMUP_MAX_S", warmupMax)
	var okW, okD, okWU, okWM bool
	c.ShareWindows, okW = Whole(w)
	c.ShareDurationS, okD = Whole(d)
	c.ShareWarmupS, okWU = Whole(wu)
	c.ShareWarmupMaxS, okWM = Whole(wm)
	if !okW || !okD || !okWU || !okWM || c.ShareWindows < 1 || c.ShareDurationS < 1 {
		return c, cli.Usagef("IDPBENCH_SHARE_WINDOWS %s, IDPBENCH_SHARE_DURATION_S %s, IDPBENCH_SHARE_WARMUP_S %s, IDPBENCH_SHARE_WARMUP_MAX_S %s: want whole numbers (windows and seconds >= 1)", w, d, wu, wm)
	}
	c.ShareRampS = min(1, c.ShareWarmupS)
	search := env("IDPBENCH_SHARE_SEARCH", "2")
	var ok bool
	if c.ShareSearch, ok = Whole(search); !ok {
		return c, cli.Usagef("IDPBENCH_SHARE_SEARCH %s: want a whole number of windows (0: no search)", search)
	}
	return c, nil
}

// Windows is how many windows RunShares measures for one cell at most:
// its shares' and its search's.
func (c ShareSettings) Windows() int { return len(c.Shares)*c.ShareWindows + c.searchWindows() }

// searchWindows is how many windows a cell's search may measure.
func (c ShareSettings) searchWindows() int {
	if len(c.Shares) == 0 {
		return 0
	}
	return c.ShareSearch
}

// WindowCostS is what one window at a share costs, about, seconds: the
// ramp and the settled intervals after it, the window, and 2 s for
// its pool, fresh and health.
func (c ShareSettings) WindowCostS() int {
	return max(c.ShareWarmupS, c.ShareRampS+(c.ShareStable*c.ShareIntervalMS+999)/1000) + c.ShareDurationS + 2
}

// CostS is what RunShares is expected to cost for one cell, seconds: its
// shares' windows and one search window (about half the cells of the
// full runs of 2026-12-06 did not sustain 80%).
func (c ShareSettings) CostS() int {
	n := len(c.Shares) * c.ShareWindows
	if n > 0 && c.ShareSearch > 0 {
		n++
	}
	return n * c.WindowCostS()
}

// parseLadder reads IDPBENCH_LADDER: connection counts, space-separated.
func parseLadder(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Fields(s) {
		n, ok := Whole(f)
		if !ok || n < 1 {
			return nil, cli.Usagef("IDPBENCH_LADDER %q: %q is not a connection count (want whole numbers >= 1, space-separated)", s, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, cli.Usagef("IDPBENCH_LADDER %q: no connection count", s)
	}
	return out, nil
}

// Whole reads a whole number written as digits only (no sign, no space).
func Whole(s string) (int, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Bound is the most windows a ladder of n levels goes through: round 1
// may stop at its knee, and later rounds repeat at most 3 candidates.
// round 0 is round 1 then the repeats; cands is how many levels a round
// >= 2 repeats.
func Bound(n, repeats, round, cands int) int {
	switch {
	case round == 0:
		return n + (repeats-1)*min(n, 3)
	case round == 1:
		return n
	}
	return cands
}

// ReuseFresh reports whether a reuse pool ageS seconds old still serves a
// step of at most stepS seconds: its tokens (ttlS seconds; 0: unknown)
// outlive the step by 30 s, and it is younger than maxAgeS (-1: not set;
// 120 when the ttl is unknown too).
func ReuseFresh(ageS, stepS, ttlS, maxAgeS int) bool {
	if ttlS == 0 && maxAgeS < 0 {
		maxAgeS = 120
	}
	if maxAgeS >= 0 && ageS >= maxAgeS {
		return false
	}
	return ttlS == 0 || ageS+stepS+TTLMarginS < ttlS
}

// TTLMarginS is how long a pool's tokens must outlive the step that uses
// them (minting and startup slack), seconds.
const TTLMarginS = 30

// SizingStep is the step a consumed pool of window round at c connections
// is sized from: the previous window of the ladder (prev), or in a later
// round without one the same level's window of the round before when its
// file is there (exists); "" for none.
func SizingStep(prev, dir, scenario string, c, round int, exists func(string) bool) string {
	if prev != "" || round <= 1 {
		return prev
	}
	if before := StepPath(dir, scenario, c, round-1); exists(before) {
		return before
	}
	return ""
}
