// Package jdk finds an installed JDK that a product needs, by the release
// file every JDK carries (JAVA_VERSION, IMPLEMENTOR, JAVA_RUNTIME_VERSION):
// $JAVA_HOME when it qualifies, else one under the system's JVM directory.
package jdk

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Need is what a product asks of a JDK.
type Need struct {
	Min    int // the oldest major version it runs on
	Prefer int // the major version recommended; >= Min
	// Why Prefer, when a JDK below it is a risk on small hosts: on hosts
	// with at most WarnCPUs CPUs, a JDK below Prefer is warned about.
	Why      string
	WarnCPUs int
}

// JDK is one installed JDK.
type JDK struct {
	Home    string
	Major   int    // from JAVA_VERSION ("21.0.5" -> 21)
	Vendor  string // IMPLEMENTOR
	Version string // JAVA_RUNTIME_VERSION
}

// String is "vendor version (home)", what the meta records.
func (j JDK) String() string {
	vendor, version := j.Vendor, j.Version
	if vendor == "" {
		vendor = "unknown vendor"
	}
	if version == "" {
		version = "?"
	}
	return fmt.Sprintf("%s %s (%s)", vendor, version, j.Home)
}

// Read reads the JDK at home: it needs an executable bin/java and a
// release file with a whole major version.
func Read(home string) (JDK, error) {
	if fi, err := os.Stat(filepath.Join(home, "bin", "java")); err != nil || fi.Mode()&0o111 == 0 {
		return JDK{}, fmt.Errorf("%s: no executable bin/java", home)
	}
	rel, err := release(filepath.Join(home, "release"))
	if err != nil {
		return JDK{}, err
	}
	major, _, _ := strings.Cut(rel["JAVA_VERSION"], ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return JDK{}, fmt.Errorf("%s/release: JAVA_VERSION %q is no version", home, rel["JAVA_VERSION"])
	}
	return JDK{Home: home, Major: n, Vendor: rel["IMPLEMENTOR"], Version: rel["JAVA_RUNTIME_VERSION"]}, nil
}

// release reads a release file's KEY="value" lines.
func release(name string) (map[string]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rel := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) {
			rel[k] = v[1 : len(v)-1]
		}
	}
	return rel, sc.Err()
}

// Candidates are where Find looks, in order: javaHome (when set), then
// under root (the system's JVM directory, /usr/lib/jvm) the JDKs of the
// preferred major, Temurin's first, then those of the oldest one.
func (n Need) Candidates(javaHome, root string) []string {
	var c []string
	if javaHome != "" {
		c = append(c, javaHome)
	}
	for _, major := range []int{n.Prefer, n.Min} {
		for _, pattern := range []string{"*temurin-%d*", "*-%d-*", "*-%d"} {
			m, _ := filepath.Glob(filepath.Join(root, fmt.Sprintf(pattern, major)))
			c = append(c, m...)
		}
	}
	return c
}

// Find returns the first candidate that is a JDK of at least n.Min.
func (n Need) Find(javaHome, root string) (JDK, bool) {
	for _, home := range n.Candidates(javaHome, root) {
		if j, err := Read(home); err == nil && j.Major >= n.Min {
			return j, true
		}
	}
	return JDK{}, false
}

// Warning says why j is a risk on a host with cpus CPUs, or is "".
func (n Need) Warning(j JDK, cpus int) string {
	if j.Major >= n.Prefer || cpus > n.WarnCPUs {
		return ""
	}
	return fmt.Sprintf("JDK %d at %s: %s; JDK %d is recommended", j.Major, j.Home, n.Why, n.Prefer)
}
