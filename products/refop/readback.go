package refop

import (
	"context"

	"github.com/idpbench/idpbench/internal/readback"
)

// The reference OP's module and its storage, the document of what no
// endpoint tells.
const (
	refopModule     = "github.com/zitadel/oidc/v3"
	refopStorageDoc = "https://github.com/zitadel/oidc/blob/v3.52.0/example/server/storage/storage.go"
)

// readFrom is what readFacts reads through which of readback's flags.
const readFrom = "--binary (the example server's Go build info)"

// readFacts reads the version of zitadel/oidc the example server was built
// from (its binary's build info); its storage is in memory and compares
// client secrets as stored, which only its source says.
func readFacts(_ context.Context, r *readback.Reader) error {
	if err := r.Need("binary", r.Config().Binary == ""); err != nil {
		return err
	}
	v, err := readback.GoModuleVersion(r.Config().Binary, refopModule)
	if err != nil {
		return err
	}
	r.SetVersion(v)
	r.Fact("version", refopModule+" "+v, "the binary's Go build info")
	r.Documented("client secret check", "plain comparison with the secret held in memory (no hashing)", refopStorageDoc)
	r.Documented("storage", "in memory: clients, users, tokens; nothing durable", refopStorageDoc)
	return nil
}
