package compose

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// composeCommand finds a Docker Compose v2 CLI: $IDPBENCH_DOCKER_COMPOSE (a
// path), docker-compose on PATH, or the `docker compose` plugin. `config`
// needs no Docker engine.
func composeCommand(ctx context.Context) []string {
	candidates := [][]string{{"docker-compose"}, {"docker", "compose"}}
	if p := os.Getenv("IDPBENCH_DOCKER_COMPOSE"); p != "" {
		candidates = append([][]string{{p}}, candidates...)
	}
	for _, c := range candidates {
		out, err := exec.CommandContext(ctx, c[0], append(c[1:], "version", "--short")...).Output()
		if err == nil && composeV2(string(out)) {
			return c
		}
	}
	return nil
}

// composeV2 reports whether `version --short` printed a Compose of the v2
// line or later: 2.x, or 5.x (Docker Compose's major since 2026; v3 and v4
// were skipped), not the Python docker-compose 1.x.
func composeV2(version string) bool {
	major, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(version), "v"), ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 2
}

// TestComposeConfig asks the real Compose CLI, where one is installed, to
// validate every file (`config -q`): with every variable of .env.example set
// it must pass, with none set it must refuse (the secrets are required).
// Without a Compose CLI the static checks above are all there is.
func TestComposeConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dc := composeCommand(ctx)
	if dc == nil {
		t.Skip("no Docker Compose v2 CLI (docker-compose, docker compose, $IDPBENCH_DOCKER_COMPOSE): static checks only")
	}
	dir := t.TempDir()
	full := filepath.Join(dir, "full.env")
	empty := filepath.Join(dir, "empty.env")
	var vars []string
	for _, line := range strings.Split(readText(t, ".env.example"), "\n") {
		if m := envLine.FindStringSubmatch(line); m != nil {
			vars = append(vars, m[1]+"="+dummyValue(m[1]))
		}
	}
	writeFile(t, full, strings.Join(vars, "\n")+"\n")
	writeFile(t, empty, "")
	for _, file := range composeFiles() {
		t.Run(fromRoot(t, file), func(t *testing.T) {
			if out, err := runCompose(ctx, dc, full, file); err != nil {
				t.Errorf("%s: %v: %s", file, err, out)
			}
			if out, err := runCompose(ctx, dc, empty, file); err == nil || !strings.Contains(out, "required variable") {
				t.Errorf("%s: accepted without the .env secrets (err %v): %s", file, err, out)
			}
		})
	}
}

// dummyValue is a placeholder that satisfies each variable's format
// (ZITADEL_MASTERKEY must be 32 characters).
func dummyValue(name string) string {
	if name == "ZITADEL_MASTERKEY" {
		return strings.Repeat("0", 32)
	}
	return "dummy0123456789abcdef"
}

func runCompose(ctx context.Context, dc []string, envFile, file string) (string, error) {
	args := append(append([]string{}, dc[1:]...), "--env-file", envFile, "-f", file, "config", "-q")
	cmd := exec.CommandContext(ctx, dc[0], args...)
	// Only PATH and HOME: values from the test's own environment must not
	// stand in for the env file.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestComposeV2(t *testing.T) {
	for v, want := range map[string]bool{"2.40.3\n": true, "v5.6.0": true, "1.29.2": false, "": false, "dev": false} {
		if got := composeV2(v); got != want {
			t.Errorf("composeV2(%q) = %v, want %v", v, got, want)
		}
	}
}
