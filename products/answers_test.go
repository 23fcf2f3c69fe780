package products

import (
	"bufio"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/product"
)

// golden is one section of testdata/args/PRODUCT.golden: what an adapter
// entry point printed (out) and exited with (rc) on the fabricated state
// "testdata/args/PRODUCT state", and the tools it called (recorded: the
// tool's name, then its arguments). old-adapters.sh there recorded them
// from the adapters before their answers moved here.
type golden struct {
	verb, name string
	rc         string
	out        []string
	recorded   [][]string
}

var goldenHead = regexp.MustCompile(`^=== (\S+) ?(\S*)(?: \(exit (\d+)\))?$`)

func readGolden(t *testing.T, name string) map[string]*golden {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all := map[string]*golden{}
	var g *golden
	inRec := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := goldenHead.FindStringSubmatch(line); m != nil {
			g = &golden{verb: m[1], name: m[2], rc: m[3]}
			all[strings.TrimSpace(m[1]+" "+m[2])] = g
			inRec = false
			continue
		}
		switch {
		case g == nil:
			t.Fatalf("%s: %q before a section", name, line)
		case line == "--- recorded":
			inRec = true
			g.recorded = append(g.recorded, nil)
		case inRec && line == "":
			g.recorded = append(g.recorded, nil)
		case inRec:
			g.recorded[len(g.recorded)-1] = append(g.recorded[len(g.recorded)-1], line)
		default:
			g.out = append(g.out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return all
}

// call is the recorded call of tool (with its first argument, for
// provision's subcommand), its arguments after it.
func (g *golden) call(t *testing.T, tool ...string) []string {
	t.Helper()
	for _, r := range g.recorded {
		if len(r) >= len(tool) && slices.Equal(r[:len(tool)], tool) {
			return r[len(tool):]
		}
	}
	t.Fatalf("%s %s: no recorded %v call", g.verb, g.name, tool)
	return nil
}

// without returns args without the flags named and their values.
func without(args []string, flags ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if slices.Contains(flags, args[i]) {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// flag returns the value of --name in args.
func flag(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// TestAnswersMatchTheAdapters: every product's answers for every scenario,
// on the fabricated state, are what its adapter printed before they moved
// here: the endpoints, the loadstep arguments, the lifetimes, the metrics
// arguments, the pools (mintpool's arguments but -n and -o, and the
// record's kind, mode and flow), setup's and readback's arguments, the
// configuration file and the start command. An N/A scenario (the adapter
// exited 3) has no row, and a row's scenario is not N/A.
func TestAnswersMatchTheAdapters(t *testing.T) {
	for _, name := range []string{"refop", "hydra", "keycloak", "zitadel"} {
		t.Run(name, func(t *testing.T) {
			p, _ := Lookup(name)
			gold := readGolden(t, filepath.Join("testdata", "args", name+".golden"))
			st, err := product.ReadState(filepath.Join("testdata", "args", name+" state"), name)
			if err != nil {
				t.Fatal(err)
			}
			tab := p.Answers.Table(st)
			if err := st.SetupErr(); err != nil {
				t.Fatal(err)
			}
			for _, s := range product.Scenarios() {
				row, ok := tab.Scenarios[s]
				if _, na := p.NA[s]; na == ok {
					t.Errorf("%s: N/A %v, a row %v: want exactly one", s, na, ok)
				}
				// What the ladder reads in-process: the entry's Answer on the state.
				ans, err := p.Answer(filepath.Join("testdata", "args", name+" state"), s)
				for _, verb := range inProcess {
					g := gold[verb+" "+s]
					if g == nil {
						t.Fatalf("no golden %s %s", verb, s)
					}
					if g.rc == "3" || gold["endpoint "+s].rc == "3" { // the adapter's ttl and metricsargs did not ask
						if ok || p.NA[s] == "" || !errors.Is(err, product.ErrNA) || !strings.HasSuffix(err.Error(), p.NA[s]) {
							t.Errorf("%s %s: the adapter said N/A; the table has a row %v, Answer %v", verb, s, ok, err)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s %s: %v", verb, s, err)
					}
					var got, fromTable []string
					switch verb {
					case "endpoint":
						got, fromTable = lines(ans.Endpoint), lines(row.Endpoint)
					case "loadargs":
						got, fromTable = ans.Load, row.Load
					case "ttl":
						got, fromTable = lines(product.Scenario{TTL: ans.TTL}.TTLText()), lines(row.TTLText())
					case "metricsargs":
						got, fromTable = ans.Metrics, tab.Metrics
					}
					if !slices.Equal(got, g.out) || !slices.Equal(fromTable, g.out) {
						t.Errorf("%s %s:\n got %q (the table's %q)\nwant %q", verb, s, got, fromTable, g.out)
					}
				}
				if g := gold["pools "+s]; g != nil && g.rc == "0" {
					checkPool(t, s, row.Pool, g.call(t, "mintpool"), g.call(t, "provision", "pool"))
				}
			}
			if g := gold["loadargs introspect"]; name == "zitadel" {
				// The adapter minted S3's client assertions before it answered:
				// the ladder mints Answer.Before's, with the same call.
				ans, err := p.Answer(filepath.Join("testdata", "args", name+" state"), "introspect")
				mint := g.call(t, "mintpool")
				if err != nil || len(ans.Before) != 1 || ans.Before[0].MaxAgeS != 1800 ||
					!slices.Equal(slices.Concat(ans.Before[0].Args, []string{"-o", ans.Before[0].Path}), mint) {
					t.Errorf("client-assertions pool: %+v, %v\nwant the call %q, minted again at 30 minutes", ans.Before, err, mint)
				}
			}
			checkRunArgs(t, p, st, gold)
			// The meta's endpoints: the adapter's endpoint answer of every scenario it ran.
			eps, err := p.Endpoints(st)
			want := map[string]string{}
			for _, s := range product.Scenarios() {
				if g := gold["endpoint "+s]; g.rc == "0" {
					want[s] = g.out[0]
				}
			}
			if err != nil || !maps.Equal(eps, want) {
				t.Errorf("Endpoints = %v, %v; want %v", eps, err, want)
			}
		})
	}
}

func checkPool(t *testing.T, s string, p *product.Pool, mint, record []string) {
	t.Helper()
	if p == nil {
		t.Errorf("pools %s: the adapter minted one, the table has none", s)
		return
	}
	if want := without(mint, "-n", "-o"); !slices.Equal(p.Args, want) {
		t.Errorf("pools %s: mintpool\n got %q\nwant %q", s, p.Args, want)
	}
	if got, want := []string{p.Kind, p.Mode, p.Flow}, []string{flag(record, "--kind"), flag(record, "--mode"), flag(record, "--flow")}; !slices.Equal(got, want) {
		t.Errorf("pools %s: kind, mode, flow %q, the record %q", s, got, want)
	}
}

// checkRunArgs: setup's, readback's and the start's arguments and the
// configuration file.
func checkRunArgs(t *testing.T, p product.Product, st *product.State, gold map[string]*golden) {
	t.Helper()
	a := p.Answers
	if g := gold["setup"]; g != nil {
		if got, want := a.Setup(st), g.call(t, "provision", p.Name); !slices.Equal(got, want) {
			t.Errorf("setup:\n got %q\nwant %q", got, want)
		}
		var want []string
		for _, r := range g.recorded {
			if len(r) > 0 && r[0] == "readback" {
				want = without(r[1:], "--product", "--want-version", "-o")
			}
		}
		var got []string
		if a.Readback != nil {
			got = a.Readback(st)
		}
		if !slices.Equal(got, want) {
			t.Errorf("readback:\n got %q\nwant %q", got, want)
		}
	} else if a.Setup != nil {
		t.Error("a setup without a golden")
	}
	if g := gold["config"]; (g != nil) != (a.Config != nil) {
		t.Errorf("config: a golden %v, a Config %v: want both or neither", g != nil, a.Config != nil)
	} else if g != nil {
		if got, want := a.Config(st), strings.Join(g.out, "\n")+"\n"; got != want {
			t.Errorf("config:\n got %q\nwant %q", got, want)
		}
	}
	if g := gold["start"]; (g != nil) != (a.Start != nil) {
		t.Errorf("start: a golden %v, a Start %v: want both or neither", g != nil, a.Start != nil)
	} else if g != nil {
		cs := g.call(t, "coldstart")
		want := cs[slices.Index(cs, "--")+2:] // after the program
		if got := a.Start(st); !slices.Equal(got, want) {
			t.Errorf("start:\n got %q\nwant %q", got, want)
		}
	}
	if err := st.SetupErr(); err != nil {
		t.Error(err)
	}
}
