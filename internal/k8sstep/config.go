package k8sstep

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/idpbench/idpbench/internal/cli"
	"github.com/idpbench/idpbench/internal/schema"
)

// The base's names (deploy/kubernetes/base) the command relies on.
const (
	jobName       = "idpbench-agents"                       // metadata.name
	agentSelector = "app.kubernetes.io/name=idpbench-agent" // the agents' label
	secretDir     = "/secrets"                              // the Secret's mountPath
	defaultImage  = "localhost/idpbench-tools:devel"        // for --render-only and --write-overlay without --image
	defaultIdP    = "app.kubernetes.io/part-of=idp-under-test"
)

// config is the command line, as given.
type config struct {
	agents, url, scenario, conns, rate string
	duration, warmup, warmupMax        string
	image, namespace, secret           string
	cpus, memory                       string
	startIn, startAt                   string // startAt: once validated, as loadstep --start-at takes it
	idpLabels                          []string
	context, out                       string
	keep, renderOnly                   bool
	overlayDir                         string
	extra                              []string // LOADSTEP-ARGS, after --
	startInSet, version                bool
}

func newFlagSet(c *config) *pflag.FlagSet {
	fs := cli.NewFlagSet("k8sstep")
	fs.StringVar(&c.agents, "agents", "", "`N` agents, one pod each, each on a node of its own (parallelism = completions = N); agent I runs loadstep --segment I/N (required)")
	fs.StringVar(&c.url, "url", "", "the endpoint, loadstep --url (required)")
	fs.StringVar(&c.scenario, "scenario", "", "loadstep --scenario (required)")
	fs.StringVarP(&c.conns, "connections", "c", "", "`C` connections in total over the N agents, at least N; each agent opens its share (required)")
	fs.StringVar(&c.rate, "rate", "", "open loop: `R` requests/s in total, each agent its share (default closed loop)")
	fs.StringVar(&c.duration, "duration", "60s", "the measured window, in seconds or minutes (60, 60s, 2m)")
	fs.StringVar(&c.warmup, "warmup", "10s", "the warmup, fixed: the agents measure one common window (60, 60s, 2m)")
	fs.StringVar(&c.warmupMax, "warmup-max", "", "refused: loadstep refuses --start-at with an adaptive warmup")
	_ = fs.MarkHidden("warmup-max")
	fs.StringVar(&c.image, "image", "", "the tools image (deploy/kubernetes/Dockerfile), pinned by tag or digest, not :latest (required unless --render-only or --write-overlay)")
	fs.StringVar(&c.namespace, "namespace", "idpbench", "the `NS` to run in; one run per namespace at a time")
	fs.StringVar(&c.secret, "secret", "idpbench-agent", "the Secret mounted read-only at /secrets in every agent: pools and client secrets, named in LOADSTEP-ARGS by path (--pool /secrets/pool); it must exist")
	fs.StringVar(&c.cpus, "cpus", "2", "whole CPUs per agent, requests = limits (Guaranteed QoS)")
	fs.StringVar(&c.memory, "memory", "1Gi", "memory per agent, requests = limits, a Kubernetes quantity")
	fs.StringVar(&c.startIn, "start-in", "60s", "the agents' common start (loadstep --start-at) this long after submission, for scheduling and image pulls (60, 60s, 2m)")
	fs.StringVar(&c.startAt, "start-at", "", "or an absolute start, RFC 3339 or Unix seconds")
	fs.StringArrayVar(&c.idpLabels, "idp-label", nil, "`KEY=VALUE`, a label of the pods the agents keep off the nodes of: the IdP's and its database's; repeat it for pods labelled apart (default "+defaultIdP+")")
	fs.StringVar(&c.context, "context", "", "kubectl's context (default: the current one)")
	fs.StringVar(&c.out, "out", "", "results `DIR` (default results/k8s in the repository)")
	fs.BoolVar(&c.keep, "keep", false, "leave the Job and its pods (the next run refuses until they are deleted; the command is printed)")
	fs.BoolVar(&c.renderOnly, "render-only", false, "print the manifest (kubectl kustomize; no cluster needed)")
	fs.StringVar(&c.overlayDir, "write-overlay", "", "write the kustomize overlay into `DIR` and stop (no kubectl)")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
	return fs
}

// step is a validated command line and what follows from it.
type step struct {
	config
	nAgents, nConns    int
	warmupS, durationS int64
	idp                []label
	startEpoch         int64 // the start, Unix seconds
	leadS, deadlineS   int64
	name               string // SCENARIO-cC[-rR]-nN
}

// label is one --idp-label.
type label struct{ key, value string }

var (
	posInt      = regexp.MustCompile(`^[1-9][0-9]{0,5}$`)
	httpURL     = regexp.MustCompile(`^https?://[^\p{Cc}\p{Z}\s]+$`)
	scenarioRe  = regexp.MustCompile(`^[a-z_]+$`)
	rateRe      = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	zeroRate    = regexp.MustCompile(`^0+(\.0+)?$`)
	secondsRe   = regexp.MustCompile(`^([0-9]+)(s|m)?$`)
	memoryRe    = regexp.MustCompile(`^[1-9][0-9]*(Ki|Mi|Gi|Ti|k|M|G|T)?$`)
	dnsLabel    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	secretName  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	imageRe     = regexp.MustCompile(`^[a-z0-9][a-zA-Z0-9._/:@-]*$`)
	labelRe     = regexp.MustCompile(`^(([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)=(([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?)$`)
	unixSeconds = regexp.MustCompile(`^[0-9]{9,11}$`)
	rfc3339Re   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`)
)

// validate checks the command line in the script's order (the first
// problem is the one reported) and derives the step; every problem is a
// usage error naming the flag. warn receives the warnings about
// LOADSTEP-ARGS, now is the submission time.
func (c config) validate(now time.Time, warn func(string)) (*step, error) {
	s := &step{config: c}
	for _, check := range []func() error{
		s.checkLoad, s.checkWindow, s.checkPod, s.checkImage, s.checkLabels, s.checkModes,
		func() error { return s.checkExtra(warn) },
		func() error { return s.checkStart(now) },
	} {
		if err := check(); err != nil {
			return nil, err
		}
	}
	s.deadlineS = s.leadS + s.warmupS + s.durationS + 120 // the drain (loadstep --timeout, 10 s) and the pods' start
	s.name = s.scenario + "-c" + s.conns
	if s.rate != "" {
		s.name += "-r" + s.rate
	}
	s.name += "-n" + s.agents
	return s, nil
}

// wholeNumber parses v, a whole number above 0 (at most 6 digits).
func wholeNumber(flag, v string) (int, error) {
	if !posInt.MatchString(v) {
		return 0, cli.Usagef("%s %s: want a whole number above 0", flag, v)
	}
	return strconv.Atoi(v)
}

// seconds parses v ("90", "90s", "2m") into seconds.
func seconds(flag, v string) (int64, error) {
	m := secondsRe.FindStringSubmatch(v)
	var n int64
	var err error
	if m != nil {
		n, err = strconv.ParseInt(m[1], 10, 32)
	}
	if m == nil || err != nil {
		return 0, cli.Usagef("%s %s: want seconds or minutes (60, 60s, 2m)", flag, v)
	}
	if m[2] == "m" {
		n *= 60
	}
	return n, nil
}

// checkLoad: --warmup-max, --agents, --url, --scenario, -c, --rate.
func (s *step) checkLoad() error {
	var err error
	switch {
	case s.warmupMax != "":
		return cli.Usagef("--warmup-max: the agents measure one common window, so their warmup is fixed (loadstep refuses --start-at with an adaptive warmup); give a --warmup long enough")
	case s.agents == "":
		return cli.Usagef("--agents N is required")
	}
	if s.nAgents, err = wholeNumber("--agents", s.agents); err != nil {
		return err
	}
	switch {
	case s.url == "":
		return cli.Usagef("--url URL is required")
	case !httpURL.MatchString(s.url):
		return cli.Usagef("--url %s: want an http:// or https:// URL", s.url)
	case s.scenario == "":
		return cli.Usagef("--scenario is required")
	case !scenarioRe.MatchString(s.scenario):
		return cli.Usagef("--scenario %s: not a scenario name", s.scenario)
	}
	if _, ok := schema.LookupScenario(s.scenario); !ok {
		return cli.Usagef("--scenario %s: want one of %s", s.scenario, scenarioNames())
	}
	if s.conns == "" {
		return cli.Usagef("-c C (connections over all agents) is required")
	}
	if s.nConns, err = wholeNumber("-c", s.conns); err != nil {
		return err
	}
	if s.nConns < s.nAgents {
		return cli.Usagef("-c %d: fewer connections than --agents %d (each agent needs at least one)", s.nConns, s.nAgents)
	}
	if s.rate != "" && (!rateRe.MatchString(s.rate) || zeroRate.MatchString(s.rate)) {
		return cli.Usagef("--rate %s: want requests/s above 0", s.rate)
	}
	return nil
}

func scenarioNames() string {
	names := make([]string, len(schema.Scenarios))
	for i, sc := range schema.Scenarios {
		names[i] = sc.Name
	}
	return strings.Join(names, " ")
}

// checkWindow: --duration, --warmup.
func (s *step) checkWindow() error {
	var err error
	if s.durationS, err = seconds("--duration", s.duration); err != nil {
		return err
	}
	if s.durationS == 0 {
		return cli.Usagef("--duration %s: want a window above 0", s.duration)
	}
	s.warmupS, err = seconds("--warmup", s.warmup)
	return err
}

// checkPod: --cpus, --memory, --namespace, --secret.
func (s *step) checkPod() error {
	if _, err := wholeNumber("--cpus", s.cpus); err != nil {
		return err
	}
	switch {
	case !memoryRe.MatchString(s.memory):
		return cli.Usagef("--memory %s: want a Kubernetes quantity such as 1Gi or 512Mi", s.memory)
	case !dnsLabel.MatchString(s.namespace):
		return cli.Usagef("--namespace %s: not a Kubernetes namespace name", s.namespace)
	case !secretName.MatchString(s.secret):
		return cli.Usagef("--secret %s: not a Kubernetes Secret name", s.secret)
	}
	return nil
}

// checkImage: --image, pinned by a tag other than latest or by a digest.
func (s *step) checkImage() error {
	if s.image == "" && s.overlayDir == "" && !s.renderOnly {
		return cli.Usagef("--image REF is required: docker build -f deploy/kubernetes/Dockerfile -t REGISTRY/idpbench-tools:TAG . and push it")
	}
	if s.image == "" {
		s.image = defaultImage
	}
	if !strings.Contains(s.image, "@sha256:") {
		ref, _, _ := strings.Cut(s.image, "@")
		name := ref[strings.LastIndex(ref, "/")+1:]
		if !strings.Contains(name, ":") {
			return cli.Usagef("--image %s: pin it by tag or digest (REPO:TAG or REPO@sha256:...)", s.image)
		}
		if ref[strings.LastIndex(ref, ":")+1:] == "latest" {
			return cli.Usagef("--image %s: :latest is no pin; name a version tag or a digest", s.image)
		}
	}
	if !imageRe.MatchString(s.image) {
		return cli.Usagef("--image %s: not an image reference", s.image)
	}
	return nil
}

// checkLabels: every --idp-label is KEY=VALUE, a Kubernetes label.
func (s *step) checkLabels() error {
	given := s.idpLabels
	if len(given) == 0 {
		given = []string{defaultIdP}
	}
	for _, l := range given {
		if !labelRe.MatchString(l) {
			return cli.Usagef("--idp-label %s: want KEY=VALUE, a Kubernetes label", l)
		}
		k, v, _ := strings.Cut(l, "=")
		s.idp = append(s.idp, label{k, v})
	}
	return nil
}

// checkModes: at most one of --render-only and --write-overlay.
func (s *step) checkModes() error {
	if s.renderOnly && s.overlayDir != "" {
		return cli.Usagef("--render-only and --write-overlay: give one")
	}
	return nil
}

// The loadstep flags that the command or the base set, and those that
// name a file (which must come from the Secret).
var (
	baseFlags  = []string{"--output", "--segment", "--start-at", "--metrics-addr"}
	ownFlags   = []string{"--url", "--scenario", "--connections", "--rate", "--duration", "--warmup", "--warmup-max"}
	fileFlags  = []string{"--pool", "--client-secret-file", "--client-assertion-pool", "--password-file", "--login-client-pat-file"}
	localFiles = []string{"--hlog", "--server-metrics", "--server-metrics-out"}
)

// checkExtra: LOADSTEP-ARGS set nothing the command or the base sets, and
// every file they name comes from the Secret's mount.
func (s *step) checkExtra(warn func(string)) error {
	for i := 0; i < len(s.extra); i++ {
		arg := s.extra[i]
		flag, value, inline := strings.Cut(arg, "=")
		switch {
		case strings.ContainsFunc(arg, unicode.IsControl):
			return cli.Usagef("loadstep argument %q holds a control character", arg)
		case strings.HasPrefix(flag, "-o") || slices.Contains(baseFlags, flag):
			return cli.Usagef("loadstep argument %s: the agents' %s is set by deploy/kubernetes", arg, flag)
		case strings.HasPrefix(flag, "-c") || slices.Contains(ownFlags, flag):
			return cli.Usagef("loadstep argument %s: give %s to k8sstep itself, before --", arg, flag)
		case slices.Contains(fileFlags, flag):
			if !inline {
				if i+1 == len(s.extra) {
					return cli.Usagef("loadstep argument %s needs a value", arg)
				}
				i++
				value = s.extra[i]
			}
			if !strings.HasPrefix(value, secretDir+"/") || value == secretDir+"/" || strings.Contains(value, "..") {
				return cli.Usagef("loadstep argument %s %s: the agents read secrets and pools only from the Secret %s, mounted at %s (e.g. %s %s/pool)",
					flag, value, s.secret, secretDir, flag, secretDir)
			}
		case slices.Contains(localFiles, flag):
			warn(fmt.Sprintf("loadstep argument %s: its files stay in the pod and are not collected", arg))
		}
	}
	return nil
}

// checkStart: the start, from --start-at or --start-in after now; the
// warmup of every agent begins there (loadstep --start-at).
func (s *step) checkStart(now time.Time) error {
	if s.startAt != "" && s.startInSet {
		return cli.Usagef("--start-in and --start-at: give one")
	}
	switch {
	case s.startAt == "":
		in, err := seconds("--start-in", s.startIn)
		if err != nil {
			return err
		}
		s.startEpoch = now.Unix() + in
		s.startAt = time.Unix(s.startEpoch, 0).UTC().Format("2006-01-02T15:04:05Z")
	case unixSeconds.MatchString(s.startAt):
		s.startEpoch, _ = strconv.ParseInt(s.startAt, 10, 64)
	case rfc3339Re.MatchString(s.startAt):
		t, err := time.Parse(time.RFC3339Nano, s.startAt)
		if err != nil {
			return cli.Usagef("--start-at %s: not a time", s.startAt)
		}
		s.startEpoch = t.Unix()
	default:
		return cli.Usagef("--start-at %s: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds", s.startAt)
	}
	s.leadS = max(s.startEpoch-now.Unix(), 0)
	return nil
}
