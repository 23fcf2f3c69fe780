package model

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadMalformedKnee(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.knee.json")
	if err := os.WriteFile(p, []byte(`{"schema":"idpbench.knee/v1","product":"p","scenario":"s","ladder":[2],"measured":[4],"noise_pct":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(context.Background(), []string{dir}, nil, func(string) {})
	if err == nil || !strings.Contains(err.Error(), p+": not a valid knee record: measured c=4 is not a level of the ladder [2]") {
		t.Errorf("err %v", err)
	}
}
