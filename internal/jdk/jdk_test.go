package jdk

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeJDK makes a JDK home under root: bin/java (executable when exec)
// and a release file with the lines given.
func fakeJDK(t *testing.T, root, name string, exec bool, release ...string) string {
	t.Helper()
	home := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if exec {
		mode = 0o755
	}
	if err := os.WriteFile(filepath.Join(home, "bin", "java"), nil, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "release"), []byte(strings.Join(release, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

var keycloak = Need{Min: 21, Prefer: 25, WarnCPUs: 2, Why: "JDK 21 has virtual-thread deadlocks on hosts with <= 2 cores"}

// TestFind: $JAVA_HOME first when it qualifies; else the preferred major,
// Temurin's first, then the oldest major; a JDK without an executable
// java, a release file or a whole version, or older than Min, is passed over.
func TestFind(t *testing.T) {
	root := t.TempDir()
	old := fakeJDK(t, root, "java-17-openjdk-amd64", true, `JAVA_VERSION="17.0.9"`)
	j21 := fakeJDK(t, root, "java-21-openjdk-amd64", true, `IMPLEMENTOR="Debian"`, `JAVA_VERSION="21.0.5"`, `JAVA_RUNTIME_VERSION="21.0.5+11-Debian"`)
	fakeJDK(t, root, "java-25-openjdk-amd64", false, `JAVA_VERSION="25.0.1"`) // java not executable
	fakeJDK(t, root, "temurin-25-jdk-amd64", true, `JAVA_VERSION="25-ea"`)    // no whole version
	for _, tt := range []struct {
		javaHome, want string
	}{
		{"", j21},
		{old, j21},
		{j21, j21},
		{filepath.Join(root, "nosuch"), j21},
	} {
		j, ok := keycloak.Find(tt.javaHome, root)
		if !ok || j.Home != tt.want {
			t.Errorf("JAVA_HOME=%q: %+v %v, want %s", tt.javaHome, j, ok, tt.want)
		}
	}
	j, _ := keycloak.Find("", root)
	if got := j.String(); got != "Debian 21.0.5+11-Debian ("+j21+")" {
		t.Errorf("String() = %q", got)
	}
	t25 := fakeJDK(t, root, "temurin-25-jdk-amd64", true, `IMPLEMENTOR="Eclipse Adoptium"`, `JAVA_VERSION="25.0.1"`)
	if j, ok := keycloak.Find(old, root); !ok || j.Home != t25 || j.Major != 25 {
		t.Errorf("with Temurin 25: %+v %v, want %s", j, ok, t25)
	}
	// bash's order of the same globs: *-25-* matches Temurin's again.
	want := []string{old, t25, filepath.Join(root, "java-25-openjdk-amd64"), t25, filepath.Join(root, "java-21-openjdk-amd64")}
	if got := keycloak.Candidates(old, root); !slices.Equal(got, want) {
		t.Errorf("Candidates = %q, want %q", got, want)
	}
	if j, ok := keycloak.Find("", t.TempDir()); ok {
		t.Errorf("an empty JVM directory: %+v", j)
	}
	if got := (JDK{Home: "/x"}).String(); got != "unknown vendor ? (/x)" {
		t.Errorf("String() without a release's names = %q", got)
	}
}

func TestWarning(t *testing.T) {
	j21, j25 := JDK{Home: "/j21", Major: 21}, JDK{Home: "/j25", Major: 25}
	for _, tt := range []struct {
		j    JDK
		cpus int
		want string
	}{
		{j21, 2, "JDK 21 at /j21: JDK 21 has virtual-thread deadlocks on hosts with <= 2 cores; JDK 25 is recommended"},
		{j21, 4, ""},
		{j25, 1, ""},
	} {
		if got := keycloak.Warning(tt.j, tt.cpus); got != tt.want {
			t.Errorf("Warning(%d, %d CPUs) = %q, want %q", tt.j.Major, tt.cpus, got, tt.want)
		}
	}
}
