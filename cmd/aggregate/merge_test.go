package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/schema"
)

// segmentFiles writes n agents' copies of one fixture step as segments
// 0..n-1 of n, c=8 each, and returns their paths and the copy's requests.
func segmentFiles(t *testing.T, n int) ([]string, int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(run1, "hydra", "discovery-c2.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	var s schema.Step
	for i := range n {
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s.Connections, s.Segment = 8, &schema.Segment{Index: i, Of: n, TotalConnections: 8 * n}
		out, _ := json.Marshal(s)
		p := filepath.Join(dir, fmt.Sprintf("agent-%d.json", i))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths, s.Requests
}

// TestMergeSegmentFiles: three c=8 segments merge to c=24, three agents,
// three times the requests; a gap or an overlap exits 1 naming the files.
func TestMergeSegmentFiles(t *testing.T) {
	paths, requests := segmentFiles(t, 3)
	r := runAgg(context.Background(), "", append([]string{"merge"}, paths...)...)
	if r.code != 0 {
		t.Fatalf("merge exit %d: %s", r.code, r.stderr)
	}
	var s schema.Step
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	h, err := schema.DecodeHistogram(s.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if s.Connections != 24 || s.Agents != 3 || s.Requests != 3*requests || h.TotalCount() != 3*requests || s.Segment != nil || s.StartSkewMS == nil {
		t.Errorf("merged c=%d agents %d requests %d histogram %d segment %+v skew %v: want c=24, 3, %d, %d, none, recorded",
			s.Connections, s.Agents, s.Requests, h.TotalCount(), s.Segment, s.StartSkewMS, 3*requests, 3*requests)
	}
	gap := runAgg(context.Background(), "", "merge", paths[0], paths[2])
	if gap.code != 1 || !strings.Contains(gap.stderr, "segment 1 of 3 missing") || !strings.Contains(gap.stderr, paths[2]) || gap.stdout != "" {
		t.Errorf("gap: exit %d stderr %q stdout %d bytes; want 1 naming index 1 and the files, nothing written", gap.code, gap.stderr, len(gap.stdout))
	}
	overlap := runAgg(context.Background(), "", "merge", paths[0], paths[1], paths[1], paths[2])
	if overlap.code != 1 || !strings.Contains(overlap.stderr, "segment 1/3 twice, in "+paths[1]+" and "+paths[1]) {
		t.Errorf("overlap: exit %d stderr %q; want 1 naming index 1 and both files", overlap.code, overlap.stderr)
	}
}
