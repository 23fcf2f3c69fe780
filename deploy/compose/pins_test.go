package compose

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/products/keycloak"
)

// The native adapters and products are the source of truth for
// versions and settings: these tests read them, so a bump in one place
// without the other fails.
const (
	repoRoot = "../.."
	// postgresMajor is the PostgreSQL major of native mode (the OS package
	// scripts/lib/postgres.sh finds; docs/products/*.md, docs/design-reference.md).
	postgresMajor = "15"
	// keycloakMemory is Keycloak's official limit for a small production
	// instance (https://www.keycloak.org/high-availability/concepts-memory-and-cpu-sizing).
	keycloakMemory = "2G"
)

var (
	shellAssign = `(?m)^%s=(.*)$`
	// ${NAME:-default} -> default
	shellDefault = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}$`)
)

// shellValue returns the value the script assigns to name at the start of a
// line, unquoted, with a ${VAR:-default} reduced to its default.
func shellValue(script, name string) (string, error) {
	m := regexp.MustCompile(fmt.Sprintf(shellAssign, regexp.QuoteMeta(name))).FindStringSubmatch(script)
	if m == nil {
		return "", fmt.Errorf("no %s= line", name)
	}
	v := strings.TrimSpace(m[1])
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	if d := shellDefault.FindStringSubmatch(v); d != nil {
		v = d[1]
	}
	if v == "" || strings.ContainsAny(v, "$ ") {
		return "", fmt.Errorf("%s=%s: not a literal value", name, m[1])
	}
	return v, nil
}

func TestShellValue(t *testing.T) {
	cases := []struct {
		script, want string
		wantErr      bool
	}{
		{"PRODUCT=hydra\nPRODUCT_VERSION=v2.3.0\n", "v2.3.0", false},
		{`PRODUCT_VERSION="${IDPBENCH_KEYCLOAK_VERSION:-26.7.3}"`, "26.7.3", false},
		{`PRODUCT_VERSION='1.2.3'`, "1.2.3", false},
		{"  PRODUCT_VERSION=v9 # indented: not an assignment at line start\n", "", true},
		{`PRODUCT_VERSION="$OTHER"`, "", true},
		{"OTHER_PRODUCT_VERSION=v1.0.0\n", "", true},
	}
	for _, tc := range cases {
		got, err := shellValue(tc.script, "PRODUCT_VERSION")
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("shellValue(%q) = %q, %v; want %q, error %v", tc.script, got, err, tc.want, tc.wantErr)
		}
	}
}

// adapterValue reads name from a native adapter or library script (its
// path from the repository root).
func adapterValue(t *testing.T, script, name string) string {
	t.Helper()
	path := filepath.Join(repoRoot, script)
	v, err := shellValue(readText(t, path), name)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// shellArray returns the words of a NAME=( ... ) array, quotes removed.
func shellArray(t *testing.T, script, name string) []string {
	t.Helper()
	path := filepath.Join(repoRoot, script)
	re := regexp.MustCompile(`(?ms)^` + regexp.QuoteMeta(name) + `=\((.*?)\)\s*$`)
	m := re.FindStringSubmatch(readText(t, path))
	if m == nil {
		t.Fatalf("%s: no %s=( ... ) array", path, name)
	}
	var words []string
	for _, line := range strings.Split(m[1], "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, `"`) {
			words = append(words, strings.Trim(line, `"`))
			continue
		}
		words = append(words, strings.Fields(line)...)
	}
	return words
}

func mustLoad(t *testing.T, file string) project {
	t.Helper()
	p, err := loadProject(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustService(t *testing.T, p project, name string) service {
	t.Helper()
	s, ok := p.Services[name]
	if !ok {
		t.Fatalf("%s: no service %q", p.File, name)
	}
	return s
}

func withoutDigest(image string) string {
	ref, _, _ := strings.Cut(image, "@")
	return ref
}

func TestImagesMatchNativeVersions(t *testing.T) {
	hydra := adapterValue(t, "products/hydra/adapter", "PRODUCT_VERSION")
	keycloak := adapterValue(t, "products/keycloak/adapter", "PRODUCT_VERSION")
	cases := []struct{ file, service, want string }{
		{composeFile(t, "hydra"), "hydra", "oryd/hydra:" + hydra},
		{composeFile(t, "hydra"), "hydra-migrate", "oryd/hydra:" + hydra},
		{composeFile(t, "keycloak"), "keycloak", "idpbench/keycloak:" + keycloak + "-optimized"},
	}
	for _, tc := range cases {
		t.Run(fromRoot(t, tc.file)+"/"+tc.service, func(t *testing.T) {
			s := mustService(t, mustLoad(t, tc.file), tc.service)
			if got := withoutDigest(s.DefaultImage()); got != tc.want {
				t.Errorf("%s: service %q: image: %q, want %q (the native adapter's version)", tc.file, tc.service, got, tc.want)
			}
		})
	}
}

var (
	fromLine = regexp.MustCompile(`(?m)^FROM\s+(\S+)`)
	envDecl  = regexp.MustCompile(`(?m)^ENV\s+(\S+)$`)
	argDecl  = regexp.MustCompile(`(?m)^ARG\s+([A-Z_]+)=(\S+)$`)
)

// TestKeycloakDockerfile: the optimized image, built from the recipe the
// keycloak service of Keycloak's compose file names, starts from the
// native version and is built with the native adapter's build options.
func TestKeycloakDockerfile(t *testing.T) {
	version := adapterValue(t, "products/keycloak/adapter", "PRODUCT_VERSION")
	file := composeFile(t, "keycloak")
	context, recipe := mustService(t, mustLoad(t, file), "keycloak").Recipe()
	if context == "" {
		t.Fatalf("%s: service \"keycloak\": no build (the optimized image is built from a Dockerfile)", file)
	}
	path := filepath.Join(filepath.Dir(file), context, recipe)
	dockerfile := readText(t, path)
	froms := fromLine.FindAllStringSubmatch(dockerfile, -1)
	if len(froms) != 2 {
		t.Errorf("%s: %d FROM lines, want 2 (builder and runtime)", path, len(froms))
	}
	args := map[string]string{}
	for _, m := range argDecl.FindAllStringSubmatch(dockerfile, -1) {
		args[m[1]] = m[2]
	}
	for _, m := range froms {
		from := m[1]
		if name, ok := strings.CutPrefix(from, "${"); ok {
			from = args[strings.TrimSuffix(name, "}")]
		}
		if want := "quay.io/keycloak/keycloak:" + version; withoutDigest(from) != want {
			t.Errorf("%s: FROM %s (%s), want %s (the native adapter's version)", path, m[1], from, want)
		}
	}
	var env []string
	for _, m := range envDecl.FindAllStringSubmatch(dockerfile, -1) {
		env = append(env, m[1])
	}
	for _, opt := range shellArray(t, "products/keycloak/adapter", "KC_BUILD_OPTS") {
		name, val, _ := strings.Cut(strings.TrimPrefix(opt, "--"), "=")
		want := "KC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "=" + val
		if !slices.Contains(env, want) {
			t.Errorf("%s: no ENV %s (native build option %s)", path, want, opt)
		}
	}
}

func TestZitadelPinnedV4(t *testing.T) {
	file := composeFile(t, "zitadel")
	s := mustService(t, mustLoad(t, file), "zitadel")
	repo, tag, _ := splitImage(s.DefaultImage())
	if repo != "ghcr.io/zitadel/zitadel" || !regexp.MustCompile(`^v4\.\d+\.\d+$`).MatchString(tag) {
		t.Errorf("%s: service \"zitadel\": image: %q, want ghcr.io/zitadel/zitadel:v4.x.y", file, s.Image)
	}
	args := strings.Join(s.Args(), " ")
	if !strings.HasPrefix(args, "start-from-init") || !strings.Contains(args, "--masterkeyFromEnv") ||
		!strings.Contains(args, "--tlsMode disabled") {
		t.Errorf("%s: service \"zitadel\": command: %q, want start-from-init --masterkeyFromEnv --tlsMode disabled", file, args)
	}
	env := s.Env()
	for k, want := range map[string]string{
		"ZITADEL_EXTERNALDOMAIN": "localhost",
		"ZITADEL_EXTERNALSECURE": "false",
		"ZITADEL_TLS_ENABLED":    "false",
	} {
		if env[k] != want {
			t.Errorf("%s: service \"zitadel\": environment.%s: %q, want %q", file, k, env[k], want)
		}
	}
	if env["ZITADEL_FIRSTINSTANCE_MACHINEKEYPATH"] == "" {
		t.Errorf("%s: service \"zitadel\": environment.ZITADEL_FIRSTINSTANCE_MACHINEKEYPATH: missing", file)
	}
}

// TestPostgresMatchesNative: every file's postgres service (resolved
// through extends) runs the same image, PostgreSQL's native major, with the
// native PG_SETTINGS of scripts/lib/postgres.sh.
func TestPostgresMatchesNative(t *testing.T) {
	var settings []string
	for _, s := range shellArray(t, "scripts/lib/postgres.sh", "PG_SETTINGS") {
		name, val, _ := strings.Cut(s, "=")
		settings = append(settings, strings.TrimSpace(name)+"="+strings.Trim(strings.TrimSpace(val), "'"))
	}
	if len(settings) == 0 {
		t.Fatal("scripts/lib/postgres.sh: PG_SETTINGS is empty")
	}
	images := map[string]string{}
	for _, file := range composeFiles() {
		t.Run(fromRoot(t, file), func(t *testing.T) {
			s := mustService(t, mustLoad(t, file), "postgres")
			images[file] = s.Image
			repo, tag, _ := splitImage(s.DefaultImage())
			if repo != "postgres" || !strings.HasPrefix(tag, postgresMajor+".") {
				t.Errorf("%s: service \"postgres\": image: %q, want postgres:%s.x", file, s.Image, postgresMajor)
			}
			args := s.Args()
			for _, want := range settings {
				i := slices.Index(args, want)
				if i < 1 || args[i-1] != "-c" {
					t.Errorf("%s: service \"postgres\": command: no -c %s (native PG_SETTINGS)", file, want)
				}
			}
		})
	}
	for file, image := range images {
		if image != images["compose.postgres.yml"] {
			t.Errorf("%s: service \"postgres\": image %q differs from compose.postgres.yml's %q", file, image, images["compose.postgres.yml"])
		}
	}
}

// TestProductSettingsMatchNative holds the product settings to the native
// adapters' values, each row one file, service and key.
func TestProductSettingsMatchNative(t *testing.T) {
	dsnOpts := adapterValue(t, "products/hydra/adapter", "HYDRA_DSN_OPTS")
	pool := strconv.Itoa(keycloak.DBPool) // kc.sh start's pool in native mode
	hydra := mustLoad(t, composeFile(t, "hydra"))
	keycloak := mustLoad(t, composeFile(t, "keycloak"))
	type check func(s service) (got string, ok bool)
	envIs := func(k, want string) check {
		return func(s service) (string, bool) { return s.Env()[k], s.Env()[k] == want }
	}
	cases := []struct {
		p            project
		service, key string
		want         string
		check        check
	}{
		{hydra, "hydra", "environment.DSN", "contains " + dsnOpts, func(s service) (string, bool) {
			return s.Env()["DSN"], strings.Contains(s.Env()["DSN"], dsnOpts)
		}},
		{hydra, "hydra-migrate", "environment.DSN", "contains " + dsnOpts, func(s service) (string, bool) {
			return s.Env()["DSN"], strings.Contains(s.Env()["DSN"], dsnOpts)
		}},
		{hydra, "hydra", "environment.STRATEGIES_ACCESS_TOKEN", "opaque", envIs("STRATEGIES_ACCESS_TOKEN", "opaque")},
		{hydra, "hydra", "environment.LOG_LEVEL", "warn", envIs("LOG_LEVEL", "warn")},
		{hydra, "hydra", "command", "serve all --dev", func(s service) (string, bool) {
			got := strings.Join(s.Args(), " ")
			return got, got == "serve all --dev"
		}},
		{keycloak, "keycloak", "environment.KC_DB_POOL_INITIAL_SIZE", pool, envIs("KC_DB_POOL_INITIAL_SIZE", pool)},
		{keycloak, "keycloak", "environment.KC_DB_POOL_MIN_SIZE", pool, envIs("KC_DB_POOL_MIN_SIZE", pool)},
		{keycloak, "keycloak", "environment.KC_DB_POOL_MAX_SIZE", pool, envIs("KC_DB_POOL_MAX_SIZE", pool)},
		{keycloak, "keycloak", "command", "start --optimized", func(s service) (string, bool) {
			got := strings.Join(s.Args(), " ")
			return got, got == "start --optimized"
		}},
		{keycloak, "keycloak", "deploy.resources.limits.memory", keycloakMemory, func(s service) (string, bool) {
			return s.Memory(), s.Memory() == keycloakMemory
		}},
		{keycloak, "keycloak", "environment.JAVA_OPTS_KC_HEAP", "unset (the container default: heap 70% of the limit)", func(s service) (string, bool) {
			v, set := s.Env()["JAVA_OPTS_KC_HEAP"]
			return v, !set
		}},
	}
	for _, tc := range cases {
		t.Run(fromRoot(t, tc.p.File)+"/"+tc.service+"/"+tc.key, func(t *testing.T) {
			if got, ok := tc.check(mustService(t, tc.p, tc.service)); !ok {
				t.Errorf("%s: service %q: %s: %q, want %s", tc.p.File, tc.service, tc.key, got, tc.want)
			}
		})
	}
}

// TestImageVariables: the images compose mode replaces with local
// equivalents when the official ones cannot be pulled (scripts/lib/images.sh)
// are variables with the official image as the default, and the names are
// the ones the recipes export: PostgreSQL's in scripts/lib/images.sh, a
// product's in its products/NAME/local/image.sh.
func TestImageVariables(t *testing.T) {
	shared := filepath.Join("scripts", "lib", "images.sh")
	recipe := func(product string) string { return filepath.Join("products", product, "local", "image.sh") }
	cases := []struct{ file, service, variable, exporter string }{
		{filepath.Join(repoRoot, "deploy", "compose", "compose.postgres.yml"), "postgres", "IDPBENCH_IMAGE_POSTGRES", shared},
		{composeFile(t, "hydra"), "postgres", "IDPBENCH_IMAGE_POSTGRES", shared},
		{composeFile(t, "hydra"), "hydra", "IDPBENCH_IMAGE_HYDRA", recipe("hydra")},
		{composeFile(t, "hydra"), "hydra-migrate", "IDPBENCH_IMAGE_HYDRA", recipe("hydra")},
		{composeFile(t, "keycloak"), "postgres", "IDPBENCH_IMAGE_POSTGRES", shared},
		{composeFile(t, "keycloak"), "keycloak", "IDPBENCH_IMAGE_KEYCLOAK", recipe("keycloak")},
	}
	for _, tc := range cases {
		s := mustService(t, mustLoad(t, tc.file), tc.service)
		if name, _, ok := s.ImageVar(); !ok || name != tc.variable {
			t.Errorf("%s: service %q: image %q, want ${%s:-OFFICIAL}", tc.file, tc.service, s.Image, tc.variable)
		}
		if !strings.Contains(readText(t, filepath.Join(repoRoot, tc.exporter)), "export "+tc.variable+"=") {
			t.Errorf("%s exports no %s", tc.exporter, tc.variable)
		}
	}
	if !strings.Contains(readText(t, filepath.Join(repoRoot, recipe("keycloak"))), "export IDPBENCH_IMAGE_KEYCLOAK_BASE=") {
		t.Errorf("%s exports no IDPBENCH_IMAGE_KEYCLOAK_BASE", recipe("keycloak"))
	}
	// The optimized Keycloak image is built from the variable base.
	build, _ := mustService(t, mustLoad(t, composeFile(t, "keycloak")), "keycloak").Build.(map[string]any)
	args, _ := build["args"].(map[string]any)
	if got := fmt.Sprint(args["KEYCLOAK_IMAGE"]); got != "${IDPBENCH_IMAGE_KEYCLOAK_BASE:-quay.io/keycloak/keycloak:"+adapterValue(t, "products/keycloak/adapter", "PRODUCT_VERSION")+"}" {
		t.Errorf("keycloak build.args.KEYCLOAK_IMAGE = %q, want ${IDPBENCH_IMAGE_KEYCLOAK_BASE:-quay.io/keycloak/keycloak:VERSION}", got)
	}
}
