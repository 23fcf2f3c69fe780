// Package load is loadstep's engine: a load step against one endpoint,
// closed loop or open loop at a fixed rate, recorded as a schema.Step.
//
// Each of the N connections is a worker with its own Sender (one keep-alive
// connection) running request after request: in closed loop each as soon
// as the previous one completed, in rate mode each at its intended send
// time (see paced). The run is a warmup, then the measured window, then a
// drain:
//
//   - A request belongs to the window, and to the interval, in which it was
//     sent — in rate mode, in which it was due to be sent. Requests sent
//     (due) during the warmup are never counted, even when they complete
//     inside the window.
//   - From the end of the window no request starts (in rate mode: none due
//     after it; those due before it are sent, late if need be); requests
//     in flight are awaited (bounded by the timeout) and counted. None is
//     dropped, none is counted twice.
//   - The warmup is fixed (Config.Warmup), or adaptive (Config.WarmupMax,
//     closed loop): at least Warmup, then until the completions of the
//     last WarmupStable intervals lie within WarmupTolerance percent of
//     their mean, at most WarmupMax. The window's start is decided while
//     the workers run, once, a lead ahead (see settle and stableAt).
//   - Cancelling the context ends the window early: no new request starts,
//     in-flight requests drain, and the step says status "interrupted".
//   - In consume mode a connection that finds the pool empty records one
//     pool_exhausted and stops; when every connection has stopped the window
//     ends there (end says when, qps is over that shorter window).
//
// Closed-loop latency is service time under N outstanding requests: a slow
// response delays the next request on its connection, so it understates
// what an open stream of users would see (coordinated omission). Rate mode
// (the wrk2 model) measures latency from each request's intended send time
// as well, which the schedule fixes in advance: time a request spent
// waiting for its connection, because the server was slow, counts — the
// honest answer to coordinated omission. The histograms hold the latency of
// every request that got a complete HTTP response; socket errors, timeouts
// and pool exhaustion are only counted.
//
// Workers record into their own per-interval tally without locks and hand
// it over once per interval; the engine merges tallies at the end.
//
// The driver must cost the machine as little per request as wrk does, since
// it shares the cores with the target. EngineRaw (raw.go) is a minimal
// HTTP/1.1 client: the scenario's request is a template built once
// (request.go, scenario.go) into which each iteration splices its
// credential; the response is parsed in place from reused buffers; the
// JSON check stops at the member it needs (jsonscan.go); a request is one
// write and one read syscall (wire_unix.go); nothing is allocated per
// request. The default, EngineEpoll (epoll_linux.go), runs the same
// requests and parsing (respscan.go) on a few event loops instead of a
// goroutine per connection, which saves the goroutine park and wake per
// request; it serves the closed loop over http on Linux, and raw the rest.
// https targets, and --engine nethttp, use Go's net/http instead.
//
// Iteration scenarios (auth_code, client_credentials_login; flow.go,
// flow_login.go) are the exception: an iteration is several named requests
// in order — a headless login, a token then userinfo — on a per-worker
// net/http client with a fresh cookie jar per iteration and no redirect
// followed. The engine schedules, attributes and counts iterations exactly
// as it does single requests (the step counts iterations); each request
// name keeps its own counts and histogram for the window.
package load
