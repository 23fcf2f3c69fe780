package refop

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idpbench/idpbench/internal/readback"
)

// TestReadFactsNamesTheMissingModule: the version is the zitadel/oidc the
// binary was built with; a binary built without it (readback itself) is
// an error naming the module.
func TestReadFactsNamesTheMissingModule(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "readback")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/idpbench/idpbench/cmd/readback").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, err = readback.Read(context.Background(), readback.Config{Product: "refop", Reads: readFacts, Binary: bin, Timeout: time.Second, WantVersion: "v9"})
	if err == nil || !strings.Contains(err.Error(), "built without module github.com/zitadel/oidc/v3") {
		t.Errorf("error %v, want the missing module named", err)
	}
}
