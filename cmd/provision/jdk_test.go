package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJDK: the home and description of the JDK found, one a line (a
// JDK 25 is no risk: no third line); none is an error naming the need; a
// product without one a usage error.
func TestJDK(t *testing.T) {
	jvm := t.TempDir()
	home := filepath.Join(jvm, "temurin-25-jdk-amd64")
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "bin", "java"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	release := "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"25.0.3\"\nJAVA_RUNTIME_VERSION=\"25.0.3+9-LTS\"\n"
	if err := os.WriteFile(filepath.Join(home, "release"), []byte(release), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"--product", "keycloak", "--java-home", "", "--jvm-dir", jvm}, 0, home + "\nEclipse Adoptium 25.0.3+9-LTS (" + home + ")\n", ""},
		{[]string{"--product", "keycloak", "--java-home", filepath.Join(jvm, "nosuch"), "--jvm-dir", t.TempDir()}, 1, "",
			"keycloak needs a JDK 21 or newer (25 recommended: JDK 21 has virtual-thread deadlocks on hosts with <= 2 cores): none found"},
		{[]string{"--product", "hydra"}, 2, "", `--product "hydra": want one of keycloak`},
		{[]string{"--product", "keycloak", "extra"}, 2, "", `unexpected argument "extra"`},
	} {
		code, stdout, stderr := runArgs(t, context.Background(), append([]string{"jdk"}, tt.args...)...)
		if code != tt.code || stdout != tt.stdout || !strings.Contains(stderr, tt.errs) || (tt.errs == "") != (stderr == "") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.errs)
		}
	}
}
