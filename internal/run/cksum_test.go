package run

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestCksum: Cksum agrees with the cksum command (skipped without it) and
// with values it printed once.
func TestCksum(t *testing.T) {
	known := map[string]uint32{"": 4294967295, "a": 1220704766, "/tmp/results/quick": 3635527731}
	inputs := []string{"", "a", "abc", "/tmp/results/quick", strings.Repeat("x", 255), strings.Repeat("y", 256), strings.Repeat("z", 70000)}
	for _, in := range inputs {
		got := Cksum([]byte(in))
		if want, ok := known[in]; ok && got != want {
			t.Errorf("Cksum(%.20q) = %d, want %d", in, got, want)
		}
		if _, err := exec.LookPath("cksum"); err != nil {
			continue
		}
		cmd := exec.Command("cksum")
		cmd.Stdin = strings.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Fields(string(out))[0]; want != strconv.FormatUint(uint64(got), 10) {
			t.Errorf("Cksum(%.20q) = %d, cksum says %s", in, got, want)
		}
	}
}

func TestStateDir(t *testing.T) {
	got := StateDir("/tmp", "quick", "a")
	if want := "/tmp/idpbench-run-quick-1220704766"; got != want {
		t.Errorf("StateDir = %s, want %s", got, want)
	}
}
