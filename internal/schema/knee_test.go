package schema

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// testdata/knee-v1.json is a committed idpbench.knee/v1 record: readers must
// keep decoding it for as long as v1 is read.
func TestDecodeCommittedKneeV1(t *testing.T) {
	f, err := os.Open("testdata/knee-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k, err := DecodeKnee(f, "knee-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if k.StoppedAfter != 32 || !slices.Equal(k.Skipped, []int{64, 128}) || !slices.Equal(k.Candidates, []int{4, 8}) || k.NoisePct != 5 {
		t.Errorf("decoded %+v", k)
	}
}

func TestDecodeKneeErrors(t *testing.T) {
	const ok = `"schema":"idpbench.knee/v1","product":"p","scenario":"s","ladder":[2,4,8],"noise_pct":5`
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "k.json: empty file"},
		{"another record", `{"schema":"idpbench.step/v1"}`, `k.json: schema "idpbench.step/v1" is not a idpbench.knee record`},
		{"a later version", `{"schema":"idpbench.knee/v2"}`, "is not supported"},
		{"bad JSON", `{"schema":`, "k.json: unexpected EOF"},
		{"nothing measured", `{` + ok + `,"measured":[]}`, "k.json: not a valid knee record: no measured level"},
		{"stop point not measured", `{` + ok + `,"measured":[2,4],"stopped_after":8,"skipped":[]}`, "stopped_after c=8 was not measured"},
		{"a level outside the ladder", `{` + ok + `,"measured":[2,4,16]}`, "measured c=16 is not a level of the ladder [2 4 8]"},
		{"skipped without a stop", `{` + ok + `,"measured":[2,4],"skipped":[8]}`, "skipped levels without a stop"},
		{"no noise", `{"schema":"idpbench.knee/v1","product":"p","scenario":"s","ladder":[2],"measured":[2]}`, "noise_pct 0 (want > 0)"},
		{"no product, no scenario", `{"schema":"idpbench.knee/v1","ladder":[2],"measured":[2],"noise_pct":5}`, "no product; no scenario"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeKnee(strings.NewReader(tc.in), "k.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}
