package kubernetes_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// dockerfile is the Dockerfile's instructions, continuation lines joined
// and comments dropped.
func dockerfile(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cur := ""
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		out = append(out, cur+line)
		cur = ""
	}
	return out
}

var pinnedFrom = regexp.MustCompile(`^FROM (--platform=\S+ )?(\S+):([\w][\w.-]*)(@sha256:[0-9a-f]{64})?( AS \w+)?$`)

// The image: static binaries of every cmd (the pods run podstep and
// loadstep from /usr/local/bin), pinned bases, a minimal final stage, nonroot.
func TestDockerfile(t *testing.T) {
	ins := dockerfile(t, "Dockerfile")
	var froms []string
	var build, user, copyOut string
	for _, in := range ins {
		switch {
		case strings.HasPrefix(in, "FROM "):
			froms = append(froms, in)
			if m := pinnedFrom.FindStringSubmatch(in); m == nil || m[3] == "latest" {
				t.Errorf("%q: not pinned by a version tag", in)
			}
		case strings.HasPrefix(in, "RUN ") && strings.Contains(in, "go build"):
			build = in
		case strings.HasPrefix(in, "USER "):
			user = in
		case strings.HasPrefix(in, "COPY --from=build "):
			copyOut = in
		}
	}
	if len(froms) < 2 {
		t.Fatalf("stages %q: want a build stage and a final one", froms)
	}
	final := froms[len(froms)-1]
	if !strings.HasPrefix(final, "FROM gcr.io/distroless/static") || !strings.Contains(final, ":nonroot") {
		if final != "FROM scratch" {
			t.Errorf("final stage %q: want distroless static nonroot (or scratch)", final)
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/...", "-o /out/"} {
		if !strings.Contains(build, want) {
			t.Errorf("the build %q lacks %s", build, want)
		}
	}
	if copyOut != "COPY --from=build /out/ /usr/local/bin/" {
		t.Errorf("%q: the binaries must land in /usr/local/bin, where the Job runs them", copyOut)
	}
	if user != "USER 65532:65532" {
		t.Errorf("%q: want the nonroot user the pods run as (65532)", user)
	}
	for _, cmd := range []string{"podstep", "loadstep"} {
		if _, err := os.Stat("../../cmd/" + cmd + "/main.go"); err != nil {
			t.Errorf("the pods run %s, which ./cmd/... does not build: %v", cmd, err)
		}
	}
	ignore, err := os.ReadFile("Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []string{"!go.mod", "!go.sum", "!cmd/", "!internal/"} {
		if !strings.Contains(string(ignore), "\n"+keep+"\n") {
			t.Errorf("Dockerfile.dockerignore drops %s, which the build needs", strings.TrimPrefix(keep, "!"))
		}
	}
}
