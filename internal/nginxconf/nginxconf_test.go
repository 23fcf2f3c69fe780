package nginxconf_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idpbench/idpbench/internal/nginxconf"
	"github.com/idpbench/idpbench/internal/nginxtest"
)

// TestNginxAcceptsIt: nginx itself checks both shapes of the config
// (nginx -t: the bench tool's, with counters and a raised file limit, and
// the tests', with an access log), and the document is served from where
// the config says.
func TestNginxAcceptsIt(t *testing.T) {
	bin := nginxtest.Need(t, "nginx", "nginx-light")
	for name, c := range map[string]nginxconf.Config{
		"bench": {Port: 18080, StubStatus: true, WorkerConnections: 20000, RlimitNofile: 40000, Discovery: `{"issuer":"x"}`},
		"tests": {Port: 18081, Discovery: `{"issuer":"y"}`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if name == "tests" {
				c.AccessLog = filepath.Join(dir, "access.log")
			}
			if err := nginxconf.Write(dir, c); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log")).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "test is successful") {
				t.Fatalf("nginx -t: %v\n%s", err, out)
			}
			doc, err := os.ReadFile(filepath.Join(dir, "html", ".well-known", "openid-configuration"))
			if err != nil || string(doc) != c.Discovery {
				t.Errorf("document %q, %v", doc, err)
			}
		})
	}
}
