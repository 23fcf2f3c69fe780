package readback

// The reference OP's module and its storage, the document of what no
// endpoint tells.
const (
	refopModule     = "github.com/zitadel/oidc/v3"
	refopStorageDoc = "https://github.com/zitadel/oidc/blob/v3.52.0/example/server/storage/storage.go"
)

// refop reads the version of zitadel/oidc the example server was built
// from (its binary's build info); its storage is in memory and compares
// client secrets as stored, which only its source says.
func (r *reader) refop() error {
	if err := need("binary", r.cfg.Product, r.cfg.Binary == ""); err != nil {
		return err
	}
	v, err := goModuleVersion(r.cfg.Binary, refopModule)
	if err != nil {
		return err
	}
	r.version = v
	r.read("version", refopModule+" "+v, "the binary's Go build info")
	r.documented("client secret check", "plain comparison with the secret held in memory (no hashing)", refopStorageDoc)
	r.documented("storage", "in memory: clients, users, tokens; nothing durable", refopStorageDoc)
	return nil
}
