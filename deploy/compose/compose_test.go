package compose

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/product"
	"github.com/idpbench/idpbench/products"
)

// sharedFiles are the compose files of this folder that are no product's:
// the PostgreSQL every product's file extends.
var sharedFiles = []string{"compose.postgres.yml"}

// composeFiles are the compose files the tests check, as paths from this
// folder: the shared ones, then every product's the registry declares
// (product.Product.ComposeFile). TestComposeFilesPresent keeps them equal
// to what is on disk.
func composeFiles() []string {
	files := slices.Clone(sharedFiles)
	for _, p := range products.All() {
		if p.ComposeFile != "" {
			files = append(files, productFile(p))
		}
	}
	return files
}

// productFile is p's compose file as a path from this folder.
func productFile(p product.Product) string {
	return filepath.Join(repoRoot, filepath.FromSlash(p.ComposeFile))
}

// composeFile is the compose file of the product called name.
func composeFile(t *testing.T, name string) string {
	t.Helper()
	p, ok := products.Lookup(name)
	if !ok || p.ComposeFile == "" {
		t.Fatalf("the registry has no compose file for %s (products/%s: ComposeFile)", name, name)
	}
	return productFile(p)
}

// fromRoot is file, a path from this folder, as a path from the
// repository root: the name of a test of it.
func fromRoot(t *testing.T, file string) string {
	t.Helper()
	rel, err := filepath.Rel(mustAbs(t, repoRoot), mustAbs(t, file))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// TestComposeFilesPresent: every compose file on disk, here or in a
// product's folder, is one the tests check, and every one they check is
// there.
func TestComposeFilesPresent(t *testing.T) {
	var got, want []string
	for _, pattern := range []string{"compose.*.yml", filepath.Join(repoRoot, "products", "*", "compose.yml")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			got = append(got, mustAbs(t, f))
		}
	}
	for _, f := range composeFiles() {
		want = append(want, mustAbs(t, f))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("compose files on disk %v, the tests check %v: declare a product's in its entry (ComposeFile), a shared one in sharedFiles", got, want)
	}
}

func TestComposeFilesPassChecks(t *testing.T) {
	for _, file := range composeFiles() {
		p, err := loadProject(file)
		if err != nil {
			t.Errorf("loading: %v", err)
			continue
		}
		for _, r := range rules {
			t.Run(fromRoot(t, file)+"/"+r.name, func(t *testing.T) {
				for _, name := range p.Names() {
					for _, pr := range r.check(p, name, p.Services[name]) {
						pr.rule, pr.file, pr.service = r.name, p.File, name
						t.Error(pr)
					}
				}
			})
		}
	}
}

// TestChecksRejectBadDocument proves each rule can fail: every service of
// testdata/bad.compose.yml but "good" breaks one rule and must be reported
// for that rule only, at the given key.
func TestChecksRejectBadDocument(t *testing.T) {
	p, err := loadProject(filepath.Join("testdata", "bad.compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		service, rule, key string
	}{
		{"good", "", ""},
		{"image-latest", "image", "image"},
		{"image-untagged", "image", "image"},
		{"image-major-only", "image", "image"},
		{"image-interpolated", "image", "image"},
		{"image-bad-digest", "image", "image"},
		{"healthcheck-missing", "healthcheck", "healthcheck"},
		{"healthcheck-no-interval", "healthcheck", "healthcheck.interval"},
		{"healthcheck-no-retries", "healthcheck", "healthcheck.retries"},
		{"healthcheck-none", "healthcheck", "healthcheck.test"},
		{"port-all-interfaces", "ports", "ports[0]"},
		{"port-long-form", "ports", "ports[0].host_ip"},
		{"host-network", "ports", "network_mode"},
		{"name-unprefixed", "container_name", "container_name"},
		{"memory-missing", "memory", "deploy.resources.limits.memory"},
		{"password-literal", "secrets", "environment.POSTGRES_PASSWORD"},
		{"secret-default", "secrets", "environment.SECRETS_SYSTEM"},
		{"token-literal", "secrets", "environment.ZITADEL_SERVICE_USER_TOKEN"},
		{"token-setting-abused", "secrets", "environment.STRATEGIES_ACCESS_TOKEN"},
		{"dsn-password", "secrets", "environment.DSN"},
		{"masterkey-argv", "secrets", "command"},
		{"depends-list", "depends_on", "depends_on"},
		{"depends-started", "depends_on", "depends_on.good.condition"},
		{"depends-missing", "depends_on", "depends_on.nowhere"},
		{"depends-unhealthy", "depends_on", "depends_on.healthcheck-missing"},
	}
	if len(cases) != len(p.Services) {
		t.Errorf("%d cases for %d services in the bad document", len(cases), len(p.Services))
	}
	for _, tc := range cases {
		t.Run(tc.service, func(t *testing.T) {
			if _, ok := p.Services[tc.service]; !ok {
				t.Fatalf("no service %q in the bad document", tc.service)
			}
			got := checkService(p, tc.service)
			if tc.rule == "" {
				for _, pr := range got {
					t.Errorf("unexpected: %s", pr)
				}
				return
			}
			keyFound := false
			for _, pr := range got {
				if pr.rule != tc.rule {
					t.Errorf("rule %q also failed: %s", pr.rule, pr)
				}
				keyFound = keyFound || pr.key == tc.key
			}
			if !keyFound {
				t.Errorf("want a %q problem at key %q, got %v", tc.rule, tc.key, got)
			}
		})
	}
}

func TestSplitImage(t *testing.T) {
	cases := []struct{ ref, repo, tag, digest string }{
		{"postgres:15.18-bookworm", "postgres", "15.18-bookworm", ""},
		{"ghcr.io/zitadel/zitadel:v4.19.4", "ghcr.io/zitadel/zitadel", "v4.19.4", ""},
		{"localhost:5000/hydra", "localhost:5000/hydra", "", ""},
		{"localhost:5000/hydra:v2.3.0@sha256:ab", "localhost:5000/hydra", "v2.3.0", "sha256:ab"},
	}
	for _, tc := range cases {
		repo, tag, digest := splitImage(tc.ref)
		if repo != tc.repo || tag != tc.tag || digest != tc.digest {
			t.Errorf("splitImage(%q) = %q, %q, %q; want %q, %q, %q", tc.ref, repo, tag, digest, tc.repo, tc.tag, tc.digest)
		}
	}
}

var (
	// ${VAR} and ${VAR:?msg} must be set; ${VAR:-default} need not be.
	requiredVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?\?[^}]*)?\}`)
	envLine     = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
)

// TestEnvExample: every variable the compose files require is in
// .env.example, and .env.example carries no values (no sample secrets).
func TestEnvExample(t *testing.T) {
	example := readText(t, ".env.example")
	listed := map[string]bool{}
	for i, line := range strings.Split(example, "\n") {
		m := envLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		listed[m[1]] = true
		if m[2] != "" {
			t.Errorf(".env.example:%d: %s has a value; leave it empty for the user to fill in", i+1, m[1])
		}
	}
	for _, file := range composeFiles() {
		for i, line := range strings.Split(readText(t, file), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, m := range requiredVar.FindAllStringSubmatch(line, -1) {
				if !listed[m[1]] {
					t.Errorf("%s:%d: requires ${%s}, which .env.example does not list", file, i+1, m[1])
				}
			}
		}
	}
	if len(listed) == 0 {
		t.Error(".env.example lists no variables")
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
