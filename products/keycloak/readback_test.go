package keycloak

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/readback"
	"github.com/idpbench/idpbench/internal/readback/readbacktest"
)

func TestDescribeKeycloakHash(t *testing.T) {
	tests := []struct{ data, want, wantErr string }{
		{`{"hashIterations":5,"algorithm":"argon2","additionalParameters":{"hashLength":["32"],"memory":["7168"],"type":["id"],"version":["1.3"],"parallelism":["1"]}}`,
			"argon2, 5 iterations, hashLength 32, memory 7168 KiB, parallelism 1, type id, version 1.3", ""},
		{`{"hashIterations":210000,"algorithm":"pbkdf2-sha512","additionalParameters":{}}`, "pbkdf2-sha512, 210000 iterations", ""},
		{`{"algorithm":""}`, "", "not a password credential"},
		{`not json`, "", "not a password credential"},
	}
	for _, tt := range tests {
		got, err := describeKeycloakHash(tt.data)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.data, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.data, got, err, tt.want)
		}
	}
}

// TestKeycloakJVM reads the heap, the JVM and the pool from a trimmed copy
// of a running Keycloak 26.7.3's management /metrics.
func TestKeycloakJVM(t *testing.T) {
	body, err := os.ReadFile("testdata/keycloak-26.7.3.metrics")
	if err != nil {
		t.Fatal(err)
	}
	srv := readbacktest.Serve(t, "/metrics", string(body))
	r := readback.NewReader(readback.Config{Product: "keycloak", Metrics: readbacktest.URL(t, srv.URL+"/metrics"), Timeout: 5 * time.Second})
	if err := readJVM(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"JVM heap maximum":       "1400 MiB (1468006400 bytes)",
		"JVM":                    "Eclipse Adoptium OpenJDK Runtime Environment 25.0.3+9-LTS",
		"database pool (Agroal)": "25 connections open (25 idle, 0 in use)",
	}
	readbacktest.CheckFacts(t, r.Record().Facts, want)
}

func TestKeycloakJVMMissingMetric(t *testing.T) {
	srv := readbacktest.Serve(t, "/metrics", "# TYPE up gauge\nup 1\n")
	r := readback.NewReader(readback.Config{Product: "keycloak", Metrics: readbacktest.URL(t, srv.URL+"/metrics"), Timeout: 5 * time.Second})
	err := readJVM(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "jvm_memory_max_bytes") {
		t.Fatalf("error %v, want one naming jvm_memory_max_bytes", err)
	}
}
