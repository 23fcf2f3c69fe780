package main

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/load"
	"github.com/idpbench/idpbench/internal/login"
	"github.com/idpbench/idpbench/internal/pool"
	"github.com/idpbench/idpbench/internal/schema"
)

// config is loadstep's command line.
type config struct {
	url, scenario             string
	connections               int
	warmup, duration          time.Duration
	warmupMax                 time.Duration
	ramp                      time.Duration
	warmupStable              int
	warmupTolerance           float64
	jitPidfile                string
	warmupJITMax              float64
	interval, timeout         time.Duration
	rate                      float64
	poolFile, poolMode        string
	clientID, secretFile      string
	clientAuth, assertionPool string
	scope                     string
	login, tokenURL, adminURL string
	redirectURI, username     string
	users                     int
	passwordFile              string
	loginClient, loginToken   string
	loginUserField, loginPwd  string
	loginFields               []string
	loginConsent              bool
	userinfoURL               string
	introspectChk             string
	method, body, expect      string
	headers, labels           []string
	product, productVersion   string
	engine                    string
	insecure                  bool
	output, hlog              string
	serverMetrics             serverMetricsFlags
	startAt, segment          string
	live                      liveFlags
	version                   bool
}

// secretEnv holds the client secret when no --client-secret-file is given.
const secretEnv = "IDPBENCH_CLIENT_SECRET"

// passwordEnv holds the users' password when no --password-file is given.
const passwordEnv = "IDPBENCH_PASSWORD"

// loginTokenEnv holds Zitadel's login client token when no
// --login-client-pat-file is given.
const loginTokenEnv = "IDPBENCH_LOGIN_CLIENT_PAT"

func newFlagSet(c *config) *pflag.FlagSet {
	fs := pflag.NewFlagSet("loadstep", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringVar(&c.url, "url", "", "full endpoint URL, http or https (required)")
	fs.StringVar(&c.scenario, "scenario", "", "discovery | client_credentials | introspect | refresh | userinfo | jwt_bearer | request, or an iteration scenario: client_credentials_login | auth_code (required)")
	fs.IntVarP(&c.connections, "connections", "c", 1, "concurrent keep-alive connections, each its own request loop (needs -c plus 64 open files, see RLIMIT_NOFILE below)")
	fs.DurationVar(&c.warmup, "warmup", 5*time.Second, "warmup before the measured window, not recorded (duration, e.g. 5s; 0 = none); with --warmup-max, its floor")
	fs.DurationVar(&c.warmupMax, "warmup-max", 0, "adaptive warmup: at least --warmup, then until the throughput is stable (rate mode: until the corrected latency is back at its calmest; see --warmup-stable), at most this long (duration, e.g. 60s); default 0 = a fixed --warmup")
	fs.IntVar(&c.warmupStable, "warmup-stable", 3, "with --warmup-max: consecutive --interval intervals whose completed requests (rate mode: mean corrected latency) must be stable, 2 to 60")
	fs.Float64Var(&c.warmupTolerance, "warmup-tolerance", 5, "with --warmup-max: each of those intervals' completed requests within +/- this percent of their mean; rate mode: each of their corrected latencies within this percent (or 0.2 ms) above the calmest interval after the ramp (percent, above 0 and below 100)")
	fs.DurationVar(&c.ramp, "ramp", 0, "rate mode: raise the schedule linearly from 0 to --rate over this first part of the warmup, then hold it (duration, at most --warmup; default 0 = the whole rate from the start)")
	fs.StringVar(&c.jitPidfile, "jit-pidfile", "", "follow the JIT compilers of the JVM in the process group whose leader this file's first line names (the product's coldstart pidfile): the step records how busy they were (jit); no JVM there: jit.na says so")
	fs.Float64Var(&c.warmupJITMax, "warmup-jit-max", 0, "with --warmup-max and --jit-pidfile: the stable intervals must also have had the JIT compiling at most this percent of one core (0 = record only)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measured window (duration, e.g. 10s, 5m)")
	fs.DurationVar(&c.interval, "interval", time.Second, "length of one per-interval histogram (duration)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "per-request timeout, connect to last body byte; also bounds the drain (duration)")
	fs.Float64Var(&c.rate, "rate", 0, "open-loop rate in requests/s over all connections, each sending rate/c on its own schedule (wrk2 model); with --segment, of all agents together; default 0 = closed loop")
	fs.StringVar(&c.poolFile, "pool", "", "credential pool file, one per line ('-' = stdin); default none")
	fs.StringVar(&c.poolMode, "pool-mode", load.PoolReuse, "reuse (round-robin, a slice per connection) | consume (each line once) | chain (refresh rotation)")
	fs.StringVar(&c.clientID, "client-id", "", "OAuth client id for client authentication; default none")
	fs.StringVar(&c.secretFile, "client-secret-file", "", "file holding the client secret; default: env "+secretEnv)
	fs.StringVar(&c.clientAuth, "client-auth", "", "basic | post | none | assertion; default basic for client_credentials, introspect, refresh; none for jwt_bearer")
	fs.StringVar(&c.assertionPool, "client-assertion-pool", "", "pool of signed client assertions for --client-auth assertion ('-' = stdin)")
	fs.StringVar(&c.scope, "scope", "", "scope sent with token requests; default none (auth_code: openid)")
	fs.StringVar(&c.login, "login", "", "auth_code: the login protocol, admin-accept | form | form-page | session-api (required for auth_code; a product's entry names its own)")
	fs.StringVar(&c.tokenURL, "token-url", "", "auth_code: token endpoint URL for the code exchange (--url is the authorization endpoint)")
	fs.StringVar(&c.adminURL, "admin-url", "", "auth_code --login admin-accept: Hydra's admin API base URL, for the login and consent accepts; --login session-api: Zitadel's base URL, for the Session API")
	fs.StringVar(&c.redirectURI, "redirect-uri", "", "auth_code: the client's registered redirect URI (the callback is checked against it, never fetched)")
	fs.StringVar(&c.username, "username", "", "auth_code: user name to log in (hydra: the subject); %d = user index 0..--users-1, round robin over iterations")
	fs.IntVar(&c.users, "users", 1, "auth_code: number of users the %d in --username ranges over")
	fs.StringVar(&c.passwordFile, "password-file", "", "auth_code --login form|form-page|session-api: file holding the users' password; default: env "+passwordEnv)
	fs.StringVar(&c.loginClient, "login-client", "", "auth_code --login session-api: the user id of the login client (a machine user with the IAM_LOGIN_CLIENT role), sent as x-zitadel-login-client")
	fs.StringVar(&c.loginToken, "login-client-pat-file", "", "auth_code --login session-api: file holding the login client's token (a PAT) for the Session API; default: env "+loginTokenEnv)
	fs.StringVar(&c.loginUserField, "login-user-field", "", "auth_code --login form|form-page: the login form's user name field; default: the page's own (the text or email input before its password input)")
	fs.StringVar(&c.loginPwd, "login-password-field", "", "auth_code --login form|form-page: the login form's password field; default: the page's own (its password input)")
	fs.StringArrayVar(&c.loginFields, "login-field", nil, "auth_code --login form|form-page: NAME=VALUE sent with the user's name and password (a field the page's script would add), repeatable")
	fs.BoolVar(&c.loginConsent, "login-consent", false, "auth_code --login form|form-page: answer a consent form where the login wants the redirect to the client (request login_consent, sent when the server shows one); default: such a page fails the hop")
	fs.StringVar(&c.userinfoURL, "userinfo-url", "", "client_credentials_login: userinfo endpoint URL (--url is the token endpoint)")
	fs.StringVar(&c.introspectChk, "introspect-check", load.CheckActive, "introspect: what a 2xx answer must say: active (\"active\": true, the scenario's rule) | answered (an \"active\" boolean, true or false: for tests of client authentication; recorded as check \""+schema.CheckAnswered+"\", never compared with S3)")
	fs.StringVar(&c.method, "method", "GET", "request scenario: HTTP method")
	fs.StringArrayVar(&c.headers, "header", nil, "'Key: Value' header sent with every request, repeatable; may hold {{pool}} (request scenario)")
	fs.StringVar(&c.body, "body", "", "request scenario: body; {{pool}} is replaced per request; default empty")
	fs.StringVar(&c.expect, "expect", "", "request scenario: a 2xx body must contain this; default any 2xx passes")
	fs.StringVar(&c.product, "product", "", "product under test, recorded in the result")
	fs.StringVar(&c.productVersion, "product-version", "", "product version, recorded in the result")
	fs.StringArrayVar(&c.labels, "label", nil, "k=v label recorded in the result, repeatable")
	fs.StringVar(&c.engine, "engine", "", "epoll (default where it applies: closed loop over http on Linux; event loops, nothing allocated per request) | raw (the same client, a goroutine per connection; the default in rate mode and off Linux) | nethttp (Go's net/http client); https URLs use nethttp")
	fs.BoolVar(&c.insecure, "insecure", false, "skip TLS certificate verification (https; default verify)")
	fs.StringVarP(&c.output, "output", "o", "-", "result file, written atomically ('-' = stdout)")
	fs.StringVar(&c.hlog, "hlog", "", "also write the per-interval histograms as an HdrHistogram interval log (v1.3) to this file, atomically ('-' = stdout when -o is a file); default none")
	c.serverMetrics.bind(fs)
	fs.StringVar(&c.startAt, "start-at", "", "begin the warmup at `TIME`, after setup (RFC 3339, e.g. 2026-12-02T03:00:00.250Z, or Unix seconds, e.g. 1796180400.25); more than one --interval late is an error; not with an adaptive --warmup-max; default at once")
	fs.StringVar(&c.segment, "segment", "", "run agent I's share (`I/N`, I 0-based) of a step N agents run together: -c C/N (remainder to the lowest I), --rate's schedule slots I, I+N, ..., pool lines I, I+N, ...; merge with aggregate merge; default the whole step")
	c.live.bind(fs)
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	return fs
}

// usage prints --help.
func usage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, `Usage: loadstep --url URL --scenario NAME [flags]

Runs one load step against one endpoint -- closed loop, or open loop at a
fixed rate with --rate -- a warmup, then a measured window, and writes an
idpbench.step/v1 JSON record.

Flags:
`)
	fmt.Fprint(w, fs.FlagUsages())
	fmt.Fprint(w, `
Success rules: each scenario has one, the same for every product, and the
step records it as "check": discovery "2xx json issuer"; client_credentials,
jwt_bearer and refresh "2xx json access_token"; introspect "2xx json
active=true"; userinfo "2xx json sub"; client_credentials_login the token
as client_credentials, then userinfo as userinfo; auth_code every hop as
the flow expects (3xx hops included), then the code exchange; request "2xx"
(with --expect: "2xx body contains ..."). A 4xx or 5xx is never ok; a 2xx
that fails the rule counts in errors.check.

Window edges: a request belongs to the window, and to the interval, in which
it was SENT (in rate mode: in which it was due to be sent, see below).
Requests sent during the warmup are never counted, even when they complete
inside the window. At the end of the window no new request starts (in rate
mode: none due after it); requests in flight are awaited (bounded by
--timeout) and counted, so none is dropped and none is counted twice. qps = requests / window seconds. In
consume mode a connection that finds the pool empty counts one
pool_exhausted and stops; if all stop, the window ends early.

Latency, closed loop (--rate 0, the default): each connection sends its
next request only when the previous one has completed, so the figures are
service time under N outstanding requests (latency_model
closed_loop_service_time). A slow response holds back the requests behind
it, so the percentiles understate what an open stream of clients would see
(coordinated omission). Histograms hold every request that got a complete
HTTP response; socket errors, timeouts and pool exhaustion are counted only.

Rate mode (--rate R, the wrk2 model; latency_model open_loop_intended_start):
every request has an intended send time fixed in advance -- the step is one
evenly spaced schedule of R requests/s from the start of the warmup, each
connection taking every c-th slot (R/c each, offset by 1/R from its
neighbour). A connection sleeps until its next intended time; one that has
fallen behind (its previous response came late) sends back to back until it
has caught up. The intended times never move, so a server stall shows as
queueing delay instead of fewer requests: corrected_histogram and
corrected_latency_ms measure from the intended send time, histogram and
latency_ms keep the service time (from the actual send). Requests belong to
the window and its intervals by intended send time, and all of those due
before the end are sent, after the end if need be. A request whose intended
time plus --timeout passes before its connection is free is not sent and
counts as a timeout. "late" counts requests sent more than 2 ms behind
schedule (timer granularity is about 1 ms) plus those timed out unsent;
late_max_ms is the largest delay. The rate holds only while c connections
can carry it: each needs about R/c * latency < 1.

Adaptive warmup (--warmup-max D): one rule for every product instead of a
warmup per product. The warmup lasts at least --warmup (the floor), then
until the requests completed in each of the last --warmup-stable intervals
(--interval long, counted from the start of the warmup) lie within
+/- --warmup-tolerance percent of their mean, at most D (the cap). Once the
rule holds the window starts 100 ms later (its intervals count from its
start). With --jit-pidfile and --warmup-jit-max P the rule also waits for the
product's JIT: in each of those intervals its compiler threads were busy at
most P percent of one core (the CPU time of HotSpot's C1/C2 CompilerThreads,
read from /proc, which costs the JVM nothing; a product without a JVM has no
JIT to wait for). The step records warmup_s (the warmup actually
spent), warmup_rule, warmup_stable (true: the rule ended it; false: the cap
did) and warmup_qps (the completed requests per second of each warmup
interval). In rate mode the rate fixes the throughput, so the rule reads
the corrected latency instead: the warmup ends once
the geometric mean corrected latency of each of the last --warmup-stable
intervals after --ramp (below) lies within P% (P = --warmup-tolerance), or
0.2 ms, above the calmest of them all -- a queue that forms as the rate is
reached, or one left by the start, has drained back to the rate's own
latency, and a latency still falling has stopped -- and records it per
interval as
warmup_corrected_ms (settle "corrected_latency" in warmup_rule).

Ramp (--ramp T, rate mode): the schedule climbs linearly from 0 to --rate
over the first T of the warmup (slot n due sqrt(2Tn/R) after the start),
then holds it (slot n due n/R + T/2), so the connections open and the
product meets the rate gradually instead of in the first milliseconds.

Sustained or not (rate mode): the step records what the product did beside
what was offered -- completed (responses complete within the window,
whatever their intended time), completed_rps, backlog_end (requests due
before the end not complete when it ended) -- and sustain{verdict, rule,
growth_ms_per_s, end_backlog_ms, intervals, window_s, why}: "not_sustained"
when the corrected P50 of the intervals grew by more than 10 ms a second
(Theil-Sen slope) and the window ended more than 1% of its length above its
lowest interval: the product fell behind the schedule, and the corrected
latency is the length of a queue, not a latency at that rate. Fewer than 5
intervals: "not_judged". docs/design-methodology.md, "Sustained or not".

Several agents (--start-at, --segment): N loadstep processes, on one machine
or several, can run one step together and be merged exactly by aggregate
merge. --segment I/N makes this process agent I's share: -c C is the whole
step's connections, of which agent I runs C/N (the remainder to the lowest
indexes: 10 over 3 is 4, 3, 3; a share of 0 is a usage error); --rate R is
the whole step's one schedule (slot n due n/R after the start), of which
agent I sends the slots I, I+N, I+2N, ..., so the N schedules together are
exactly the single schedule of R; from every pool (--pool,
--client-assertion-pool, in every mode, reuse too) agent I takes the
credentials at positions I, I+N, I+2N, ... (0-based, in file order), so no
two agents hold the same credential. The step records connections and
rate_rps as this agent ran them, segment{index, of, total_connections,
total_rate_rps} as the whole. --start-at TIME makes every agent begin its
warmup at the same moment: loadstep sets up (reads its pools, dials the
target), waits for TIME, and reckons the warmup, the window (start = TIME +
--warmup) and the rate schedule from TIME itself, however late its timer
fired; an agent more than one --interval past TIME once set up refuses to
start (exit 1, saying how late). The step records start_at, started_at (when
its workers actually began) and start_late_ms. With a fixed --warmup every
agent's measured window is then the same; an adaptive warmup (--warmup-max
above --warmup) would end each agent's warmup when its own throughput
settles, so the windows would differ: --start-at refuses it (usage error).
Use clocks kept in sync (NTP) across machines. aggregate merge checks that
the segments are one whole (same N, each index once, same scenario, rule
and totals) and records agents and start_skew_ms.

Intervals: --interval slices the window; each slice has its own histogram
(and corrected histogram in rate mode). --hlog writes them as an HdrHistogram
interval log (version 1.3) with StartTime and BaseTime comments, each line
tagged "service" or "corrected", for HdrHistogram's log tools.

Live metrics (--metrics-addr HOST:PORT): GET /metrics while the step runs,
in the Prometheus formats. Once per --interval (half an interval after each
boundary) the interval figures the engine already aggregates are copied
out; the request path never touches a metric. requests_total{phase} and
errors_total{phase,class} (the step's error classes): phase warmup counts
completions before the window, phase measured the window's requests as the
step counts them, of the intervals that have ended; connect_errors_total
{cause}, responses_total{code} and latency_seconds (a histogram of service
time, buckets 1-2-5 from 100 us to 60 s) are the window's too;
interval_requests_per_second the completions per second since the previous
update; phase{phase} is 1 for starting, warmup, measured, drain or done.
At done, after the drain, the window's figures are the step's exactly. All
names start idpbench_loadstep_; no label holds a URL, product or --label.
The server closes when the result is written.

Engines: epoll (the default) and raw are loadstep's own HTTP/1.1 client,
one TCP connection per -c, built to cost the driver about as much CPU per
request as wrk. raw runs a goroutine per connection; epoll runs
min(GOMAXPROCS, -c) event loops, each owning its share of the connections
in one epoll instance, which saves a goroutine switch per request (bench/
measured its CPU per request at 0.88-0.96x wrk's, raw's at 1.00-1.83x:
results/bench/).
epoll serves closed-loop steps over http on Linux only: in rate mode
(--rate) the step runs on raw, even with --engine epoll, and on other OSes
the default is raw (--engine epoll is a usage error there). Both reopen a
connection the server closes for the next request, and resend a request
(once, on a new connection) only when a reused connection was closed before
any byte of its response arrived. A raw request may time out up to 1% of
--timeout early. nethttp is Go's net/http client. https URLs always use
nethttp. driver.engine in the result says which one ran.

Iteration scenarios (client_credentials_login, auth_code) model a user as a
k6 script does: one iteration sends several named requests in order on its
connection's net/http client (--engine does not apply), with a fresh cookie
jar per iteration and no redirect followed (each hop is a named request), and
stops at the first request that fails. In their result requests, ok, errors,
error_rate, qps, latency_ms, histogram and the intervals count ITERATIONS
(count_unit "iteration"; qps = iterations/s): an iteration fails, in the class
of its failing request, when any request fails, and its latency runs from its
first send to its last response. requests_by_name holds each name's requests,
errors, status codes, latency_ms and histogram (service time); http_requests
their sum. --timeout applies to each request; --rate is iterations/s.
  client_credentials_login (--url token endpoint, --userinfo-url): oidc_token
    (client_credentials) then oidc_user_info with that token, judged as the
    userinfo scenario is (2xx with a non-empty sub). A product that answers
    a client's token otherwise (the reference OP: 403; Hydra: 200 without a
    sub) cannot run it: its cell is N/A, never judged by a looser rule.
  auth_code (--url authorization endpoint, --token-url, --redirect-uri,
    --client-id and secret, --username, --login): the headless login, then
    oidc_token (authorization_code). --login admin-accept (Hydra's):
    login_authorize, login_accept and login_consent (PUTs to --admin-url),
    login_verifier, login_callback. form (Keycloak's): login_authorize (the
    login form), login_submit. form-page (the reference OP's, Spring's, node
    oidc-provider's): login_authorize, login_form, login_submit,
    login_callback. A form login fills the page's login form (its first POST
    form with a password input: hidden fields, the user name and password
    inputs the page shows, or --login-user-field and --login-password-field;
    --login-field NAME=VALUE beside them); with --login-consent a consent
    form (a 2xx page whose form has no password input) where the redirect to
    the client is wanted, in that answer or behind a redirect elsewhere
    (login_consent_page), is posted as it stands (login_consent) and must
    redirect to the client, or once through a redirect of the server's own
    that must (login_resume); these count only in the iterations that met
    them. session-api
    (Zitadel's, as a custom login UI): login_authorize (with
    x-zitadel-login-client: --login-client), login_session (POST
    /v2/sessions with the user and password checks), login_finalize (POST
    /v2/oidc/auth_requests/{id}: the callback URL with the code); both with
    the login client's token from --login-client-pat-file, at --admin-url.
    The callback must redirect to --redirect-uri with a code, the iteration's
    state and no error= (a lost cookie shows as error=request_forbidden there).
    The users' password comes from --password-file or $IDPBENCH_PASSWORD.
    A hop that expects a redirect counts a 2xx as a failed check; a status
    outside 2xx and 3xx, or a 3xx where a 2xx is expected, counts as non2xx.

Failed requests are data (errors.non2xx, socket, timeout, check,
pool_exhausted), not process errors. A connection attempt that fails
(refused, reset, DNS, TLS, no answer) sent nothing: it is no request but
a count of its own (connect_errors), and the connection waits 1 ms,
doubling up to --interval, before its next attempt. A target still refusing
connections at the end of the window lost: the step says status
"target_lost" with target_lost_at and unreachable_s, and loadstep exits 4.
The client secret comes from
--client-secret-file or $IDPBENCH_CLIENT_SECRET, never from argv.
The first SIGINT stops sending, drains, writes the result with status
"interrupted" and exits 130. Exit codes: 0 ok, 1 runtime error (including a
-c beyond the open-file limit: loadstep raises its soft RLIMIT_NOFILE to the
hard limit and, if that is still below -c plus 64, says which limit to raise),
2 usage, 4 target lost (the result is written), 130 interrupted.

Example:
  loadstep --url http://localhost:9998/.well-known/openid-configuration --scenario discovery -c 16 -o s1-c16.json && aggregate summary s1-c16.json
  loadstep --url http://localhost:9998/.well-known/openid-configuration --scenario discovery -c 16 --warmup 5s --warmup-max 60s | jq '{warmup_s, warmup_stable, warmup_qps}'
  loadstep --url http://localhost:9998/.well-known/openid-configuration --scenario discovery -c 32 --rate 2000 --hlog s1-r2000.hlog -o - | jq .corrected_latency_ms
  at=$(date -u -d '+5 sec' --iso-8601=seconds); for i in 0 1 2; do loadstep --url http://localhost:9998/.well-known/openid-configuration --scenario discovery -c 24 --rate 3000 --warmup 2s --start-at "$at" --segment $i/3 -o agent-$i.json & done; wait; aggregate merge agent-*.json | aggregate summary -
  loadstep --url http://127.0.0.1:4444/oauth2/token --scenario client_credentials --client-id svc --client-secret-file svc.secret -c 8 --server-metrics http://127.0.0.1:4445/admin/metrics/prometheus -o s2-c8.json && jq .server_metrics.scrapes s2-c8.json
  loadstep --url http://localhost:9998/auth --scenario auth_code --login form-page --token-url http://localhost:9998/oauth/token --redirect-uri http://localhost:9999/auth/callback --client-id web --client-secret-file web.secret --username test-user@localhost --password-file user.pw -c 4 | jq '.requests_by_name | map_values(.latency_ms.p50)'
  loadstep --url http://localhost:9998/.well-known/openid-configuration --scenario discovery -c 16 --duration 60s --metrics-addr 127.0.0.1:9102 -o s1.json &
    sleep 5; curl -s 127.0.0.1:9102/metrics | grep ^idpbench_loadstep_requests_total
`)
}

// validate checks the flags that need no parsing and no file (the rest,
// once each, is loadConfig's and load.Config.Validate's).
func (c *config) validate() error {
	switch {
	case c.url == "":
		return cli.Usagef("--url is required")
	case c.scenario == "":
		return cli.Usagef("--scenario is required")
	case c.connections < 1:
		return cli.Usagef("-c: need at least 1 connection, got %d", c.connections)
	case c.duration <= 0:
		return cli.Usagef("--duration: must be positive, got %s", c.duration)
	case c.warmup < 0:
		return cli.Usagef("--warmup: must not be negative, got %s", c.warmup)
	case c.interval <= 0:
		return cli.Usagef("--interval: must be positive, got %s", c.interval)
	case c.timeout <= 0:
		return cli.Usagef("--timeout: must be positive, got %s", c.timeout)
	case c.hlog == "-" && (c.output == "-" || c.output == ""):
		return cli.Usagef("--hlog -: stdout already carries the result; give -o a file")
	case c.hlog != "" && c.hlog == c.output:
		return cli.Usagef("--hlog: %s is also the -o file", c.hlog)
	case c.poolFile == "-" && c.assertionPool == "-":
		return cli.Usagef("--pool and --client-assertion-pool cannot both read stdin")
	}
	if err := c.serverMetrics.validate(c.output); err != nil {
		return err
	}
	if err := c.live.validate(); err != nil {
		return err
	}
	return c.validateFlowFlags()
}

// validateFlowFlags rejects iteration-scenario flags given to another
// scenario.
func (c *config) validateFlowFlags() error {
	authCode := map[string]string{"login": c.login, "token-url": c.tokenURL, "admin-url": c.adminURL,
		"redirect-uri": c.redirectURI, "username": c.username, "password-file": c.passwordFile,
		"login-client": c.loginClient, "login-client-pat-file": c.loginToken,
		"login-user-field": c.loginUserField, "login-password-field": c.loginPwd, "login-field": strings.Join(c.loginFields, ""),
		"login-consent": map[bool]string{true: "true"}[c.loginConsent]}
	for _, name := range []string{"login", "token-url", "admin-url", "redirect-uri", "username", "password-file",
		"login-client", "login-client-pat-file", "login-user-field", "login-password-field", "login-field", "login-consent"} {
		if authCode[name] != "" && c.scenario != schema.ScenarioAuthCode {
			return cli.Usagef("--%s: applies to the auth_code scenario only", name)
		}
	}
	if c.userinfoURL != "" && c.scenario != schema.ScenarioClientCredentialsLogin {
		return cli.Usagef("--userinfo-url: applies to the client_credentials_login scenario only")
	}
	return nil
}

// parseOptionalURL parses an http(s) URL flag; "" is nil.
func parseOptionalURL(name, s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cli.Usagef("--%s: %q needs an http or https scheme and a host", name, s)
	}
	return u, nil
}

func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, cli.Usagef("--url: %v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cli.Usagef("--url: %q needs an http or https scheme and a host", u.Redacted())
	}
	return u, nil
}

func parseHeaders(raw []string) ([]load.Header, error) {
	var hs []load.Header
	for _, h := range raw {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, cli.Usagef("--header: %q is not 'Key: Value'", h)
		}
		hs = append(hs, load.Header{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	return hs, nil
}

func parseLabels(raw []string) (map[string]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range raw {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, cli.Usagef("--label: %q is not k=v", kv)
		}
		m[k] = v
	}
	return m, nil
}

// readPool reads an optional pool file named by flag.
func readPool(flag, path string, stdin io.Reader) (*pool.Pool, error) {
	if path == "" {
		return nil, nil
	}
	p, err := pool.ReadFile(path, stdin)
	if err != nil {
		return nil, cli.UsageError{Err: fmt.Errorf("--%s: %w", flag, err)}
	}
	return p, nil
}

// loadConfig turns the flags, files and the environment into the engine's
// Config: it validates the flags, parses each value once into the Config,
// reads the secrets and pools, and has the engine check the whole
// (load.Config.Validate).
func (c *config) loadConfig(stdin io.Reader) (*load.Config, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	lc := &load.Config{
		Scenario: c.scenario, Connections: c.connections,
		Warmup: c.warmup, Duration: c.duration, Interval: c.interval, Timeout: c.timeout, Rate: c.rate,
		WarmupMax: c.warmupMax, WarmupStable: c.warmupStable, WarmupTolerance: c.warmupTolerance, RampUp: c.ramp,
		JITPidfile: c.jitPidfile, WarmupJITMax: c.warmupJITMax,
		PoolMode: c.poolMode, ClientID: c.clientID, ClientAuth: c.clientAuth, Scope: c.scope,
		Method: c.method, Body: c.body, Expect: c.expect,
		Product: c.product, ProductVersion: c.productVersion,
		Engine: c.engine, Insecure: c.insecure,
		Login: c.login, RedirectURI: c.redirectURI, Username: c.username, Users: c.users,
		LoginClient:     c.loginClient,
		IntrospectCheck: c.introspectChk,
		LoginForm:       login.FormOptions{UserField: c.loginUserField, PasswordField: c.loginPwd, Consent: c.loginConsent},
	}
	for _, f := range c.loginFields {
		kv, err := login.ParseField(f)
		if err != nil {
			return nil, cli.Usagef("--login-field: %v", err)
		}
		lc.LoginForm.Fields = append(lc.LoginForm.Fields, kv)
	}
	var err error
	if lc.StartAt, err = parseStartAt(c.startAt); err != nil {
		return nil, err
	}
	if lc.Segment, err = parseSegment(c.segment); err != nil {
		return nil, err
	}
	if lc.URL, err = parseURL(c.url); err != nil {
		return nil, err
	}
	for _, u := range []struct {
		flag, value string
		dst         **url.URL
	}{{"token-url", c.tokenURL, &lc.TokenURL}, {"admin-url", c.adminURL, &lc.AdminURL}, {"userinfo-url", c.userinfoURL, &lc.UserinfoURL}} {
		if *u.dst, err = parseOptionalURL(u.flag, u.value); err != nil {
			return nil, err
		}
	}
	if lc.Headers, err = parseHeaders(c.headers); err != nil {
		return nil, err
	}
	if lc.Labels, err = parseLabels(c.labels); err != nil {
		return nil, err
	}
	if lc.ClientSecret, err = cli.ReadSecret("client-secret-file", c.secretFile, secretEnv); err != nil {
		return nil, cli.UsageError{Err: err}
	}
	if c.scenario == schema.ScenarioAuthCode && c.login != load.LoginAdminAccept {
		if lc.Password, err = cli.ReadSecret("password-file", c.passwordFile, passwordEnv); err != nil {
			return nil, cli.UsageError{Err: err}
		}
	}
	if c.scenario == schema.ScenarioAuthCode && c.login == load.LoginSessionAPI {
		if lc.LoginClientToken, err = cli.ReadSecret("login-client-pat-file", c.loginToken, loginTokenEnv); err != nil {
			return nil, cli.UsageError{Err: err}
		}
	}
	if lc.Pool, err = readPool("pool", c.poolFile, stdin); err != nil {
		return nil, err
	}
	if lc.AssertionPool, err = readPool("client-assertion-pool", c.assertionPool, stdin); err != nil {
		return nil, err
	}
	return lc, lc.Validate()
}

// parseStartAt parses --start-at: RFC 3339 (fractional seconds allowed)
// or Unix seconds with an optional fraction, to the nanosecond (no
// float rounding). "" is the zero time: start at once.
func parseStartAt(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, ok := parseUnix(s); ok {
		return t, nil
	}
	return time.Time{}, cli.Usagef("--start-at: %q is neither an RFC 3339 time (2026-12-02T03:00:00.250Z) nor Unix seconds (1796180400.25)", s)
}

// parseUnix parses positive decimal Unix seconds, at most 9 fraction digits.
func parseUnix(s string) (time.Time, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 9 || strings.Trim(whole+frac, "0123456789") != "" {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > 1<<40 {
		return time.Time{}, false
	}
	var ns int64
	if frac != "" {
		ns, _ = strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	}
	return time.Unix(sec, ns).UTC(), true
}

// parseSegment parses --segment I/N (0 <= I < N); "" is the whole step.
func parseSegment(s string) (load.Segment, error) {
	if s == "" {
		return load.Segment{}, nil
	}
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	of, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || of < 1 || index < 0 || index >= of {
		return load.Segment{}, cli.Usagef("--segment: %q is not I/N with 0 <= I < N (agent I of N, 0-based; e.g. 0/3)", s)
	}
	return load.Segment{Index: index, Of: of}, nil
}
