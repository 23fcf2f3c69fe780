package k8sstep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// root is the repository, which holds the base.
const root = "../.."

// runArgs runs the command in process with args against kubectl (a
// program path) and returns its exit code, stdout and stderr.
func runArgs(t *testing.T, kubectl string, now func() time.Time, args ...string) (int, string, string) {
	t.Helper()
	if now == nil {
		now = time.Now
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr, options{kubectl: kubectl, now: now, root: root, tmp: t.TempDir()})
	return code, stdout.String(), stderr.String()
}

// Every usage error exits 2 naming the flag (or the loadstep argument),
// before anything is written or kubectl is called.
func TestUsage(t *testing.T) {
	ok := []string{"--agents", "2", "--url", "http://idp/", "--scenario", "discovery", "-c", "4", "--image", "r/t:1"}
	with := func(extra ...string) []string { return append(append([]string{}, ok...), extra...) }
	tests := []struct {
		name string
		args []string
		say  string
	}{
		{"no agents", []string{"--url", "http://idp/", "--scenario", "discovery", "-c", "4"}, "--agents N is required"},
		{"no agents given", []string{"--url", "http://idp/", "--agents"}, "--agents"},
		{"zero agents", []string{"--agents", "0", "--url", "http://idp/", "--scenario", "discovery", "-c", "4"}, "--agents 0: want a whole number above 0"},
		{"fewer connections than agents", []string{"--agents", "5", "--url", "http://idp/", "--scenario", "discovery", "-c", "4"}, "fewer connections than --agents"},
		{"no url", []string{"--agents", "2", "--scenario", "discovery", "-c", "4"}, "--url URL is required"},
		{"not a URL", []string{"--agents", "2", "--url", "idp:8080", "--scenario", "discovery", "-c", "4"}, "--url idp:8080"},
		{"control character", []string{"--agents", "2", "--url", "http://idp/\x01", "--scenario", "discovery", "-c", "4"}, "--url"},
		{"no scenario", []string{"--agents", "2", "--url", "http://idp/", "-c", "4"}, "--scenario is required"},
		{"not a scenario name", []string{"--agents", "2", "--url", "http://idp/", "--scenario", "Disco", "-c", "4"}, "--scenario Disco: not a scenario name"},
		{"unknown scenario", []string{"--agents", "2", "--url", "http://idp/", "--scenario", "login", "-c", "4"}, "--scenario login"},
		{"no connections", []string{"--agents", "2", "--url", "http://idp/", "--scenario", "discovery"}, "-c C (connections over all agents) is required"},
		{"fractional connections", []string{"--agents", "2", "--url", "http://idp/", "--scenario", "discovery", "-c", "4.5"}, "-c 4.5"},
		{"zero rate", with("--rate", "0.0"), "--rate 0.0"},
		{"not a rate", with("--rate", "fast"), "--rate fast"},
		{"no window", with("--duration", "0"), "--duration 0: want a window above 0"},
		{"hours", with("--duration", "1h"), "--duration 1h: want seconds or minutes"},
		{"bad warmup", with("--warmup", "-5"), "--warmup -5"},
		{"an adaptive warmup", with("--warmup-max", "60"), "one common window"},
		{"half a CPU", with("--cpus", "0.5"), "--cpus 0.5"},
		{"bad memory", with("--memory", "1.5Gi"), "--memory 1.5Gi"},
		{"bad namespace", with("--namespace", "Bench"), "--namespace Bench"},
		{"bad secret", with("--secret", "kc_agents"), "--secret kc_agents"},
		{"untagged image", with("--image", "registry.example:5000/idpbench-tools"), "--image registry.example:5000/idpbench-tools: pin it"},
		{"unpinned image", with("--image", "r/t:latest"), ":latest is no pin"},
		{"not an image", with("--image", "R/t:1"), "--image R/t:1: not an image reference"},
		{"bad IdP label", with("--idp-label", "no label"), "--idp-label"},
		{"two modes", with("--render-only"), "--render-only and --write-overlay: give one"},
		{"pool outside the Secret", with("--", "--pool", "/tmp/pool"), "only from the Secret"},
		{"the Secret's directory", with("--", "--pool=/secrets/"), "only from the Secret"},
		{"escape from the Secret", with("--", "--client-secret-file=/secrets/../etc/shadow"), "only from the Secret"},
		{"a file flag without its file", with("--", "--password-file"), "loadstep argument --password-file needs a value"},
		{"output set", with("--", "-o", "x.json"), "is set by deploy/kubernetes"},
		{"segment set", with("--", "--segment=0/1"), "is set by deploy/kubernetes"},
		{"metrics address set", with("--", "--metrics-addr", ":9"), "the agents' --metrics-addr is set by deploy/kubernetes"},
		{"connections after --", with("--", "--connections=8"), "give --connections to k8sstep itself"},
		{"-c after --", with("--", "-c8"), "give -c8 to k8sstep itself"},
		{"control character after --", with("--", "--label", "a\x01"), `loadstep argument "a\x01" holds a control character`},
		{"bad start", with("--start-at", "tomorrow"), "--start-at tomorrow"},
		{"no such day", with("--start-at", "2031-02-30T00:00:00Z"), "--start-at 2031-02-30T00:00:00Z: not a time"},
		{"bad lead", with("--start-in", "soon"), "--start-in soon"},
		{"two starts", with("--start-at", "1950000000", "--start-in", "30"), "--start-in and --start-at: give one"},
		{"unknown flag", with("--bogus"), "unknown flag: --bogus"},
		{"a positional argument", with("bogus"), "unknown argument: bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "overlay")
			args := append([]string{"--write-overlay", dir}, tt.args...)
			code, stdout, stderr := runArgs(t, "/nonexistent/kubectl", nil, args...)
			if code != 2 || !strings.Contains(stderr, tt.say) || !strings.HasPrefix(stderr, "k8sstep: ") || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tt.say)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Error("a usage error wrote the overlay")
			}
		})
	}
}

// Only a run needs --image: --render-only and --write-overlay default to a
// local one.
func TestImageRequired(t *testing.T) {
	code, _, stderr := runArgs(t, "/nonexistent/kubectl", nil, "--agents", "2", "--url", "http://idp/", "--scenario", "discovery", "-c", "4")
	if code != 2 || !strings.Contains(stderr, "--image REF is required") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := runArgs(t, "/nonexistent/kubectl", nil, "--help")
	if code != 0 || stderr != "" {
		t.Errorf("--help: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Usage: k8sstep", "--write-overlay DIR", "--idp-label KEY=VALUE", "-c, --connections C", "Examples:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help does not say %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "--warmup-max") {
		t.Error("--help lists --warmup-max, which is refused")
	}
}

// The step's values: the start, the deadline, the name.
func TestValidate(t *testing.T) {
	now := time.Unix(1_900_000_000, 300_000_000)
	args := []string{"--agents", "3", "--url", "http://idp/", "--scenario", "userinfo", "-c", "30", "--rate", "1500.5",
		"--warmup", "1m", "--duration", "90", "--render-only"}
	tests := []struct {
		extra            []string
		startAt          string
		epoch, lead, ddl int64
	}{
		{nil, "2030-03-17T17:47:40Z", 1_900_000_060, 60, 60 + 60 + 90 + 120},
		{[]string{"--start-in", "2m"}, "2030-03-17T17:48:40Z", 1_900_000_120, 120, 120 + 60 + 90 + 120},
		{[]string{"--start-at", "1900000030"}, "1900000030", 1_900_000_030, 30, 30 + 60 + 90 + 120},
		{[]string{"--start-at", "2030-03-17T19:46:50.9+02:00"}, "2030-03-17T19:46:50.9+02:00", 1_900_000_010, 10, 10 + 60 + 90 + 120},
		{[]string{"--start-at", "1800000000"}, "1800000000", 1_800_000_000, 0, 60 + 90 + 120},
	}
	for _, tt := range tests {
		var c config
		fs := newFlagSet(&c)
		if err := fs.Parse(append(append([]string{}, args...), tt.extra...)); err != nil {
			t.Fatal(err)
		}
		c.startInSet = fs.Changed("start-in")
		s, err := c.validate(now, func(string) {})
		if err != nil {
			t.Fatalf("%v: %v", tt.extra, err)
		}
		if s.startAt != tt.startAt || s.startEpoch != tt.epoch || s.leadS != tt.lead || s.deadlineS != tt.ddl {
			t.Errorf("%v: start %s (%d), lead %d, deadline %d; want %s (%d), %d, %d", tt.extra, s.startAt, s.startEpoch, s.leadS, s.deadlineS,
				tt.startAt, tt.epoch, tt.lead, tt.ddl)
		}
		if s.name != "userinfo-c30-r1500.5-n3" || s.image != defaultImage || len(s.idp) != 1 || s.idp[0] != (label{"app.kubernetes.io/part-of", "idp-under-test"}) {
			t.Errorf("name %s, image %s, IdP labels %v", s.name, s.image, s.idp)
		}
	}
}

// Files of LOADSTEP-ARGS that stay in the pod are named in a warning.
func TestExtraWarnings(t *testing.T) {
	s := &step{config: config{secret: "idpbench-agent", extra: []string{"--hlog=/work/h", "--pool", "/secrets/pool", "--server-metrics", "x"}}}
	var warned []string
	if err := s.checkExtra(func(m string) { warned = append(warned, m) }); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 2 || !strings.Contains(warned[0], "--hlog=/work/h: its files stay in the pod") || !strings.Contains(warned[1], "--server-metrics") {
		t.Errorf("warnings %q", warned)
	}
}

func TestLastLines(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 1, "c\n"},
		{"a\nb\nc", 1, "c"},
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\n", 5, "a\nb\n"},
		{"\nb\n", 2, "\nb\n"},
		{"a\n\n", 1, "\n"},
		{"", 1, ""},
	} {
		if got := string(lastLines([]byte(tt.in), tt.n)); got != tt.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestStepRecord(t *testing.T) {
	for line, want := range map[string]bool{
		`{"schema": "idpbench.step/v1", "status": "complete"}`: true,
		`{"schema": "idpbench.meta/v1"}`:                       false,
		`{"schema": 1}`:                                        false,
		`["idpbench.step/v1"]`:                                 false,
		`null`:                                                 false,
		`loadstep: --start-at: the start passed 3.2 s ago`:     false,
	} {
		if got := stepRecord([]byte(line)); got != want {
			t.Errorf("stepRecord(%s) = %v, want %v", line, got, want)
		}
	}
}
