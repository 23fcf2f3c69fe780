package zitadeldefs

import (
	"fmt"
	"os"
	"sync"
)

// loaded memoizes Load per directory: the fake loads the definitions for
// every test that starts one, and a load takes about half a second.
var loaded sync.Map // dir -> *loadResult

type loadResult struct {
	once sync.Once
	defs *Defs
	err  error
}

// FromEnv loads the definitions from $IDPBENCH_ZITADEL_PROTO: nil, nil when
// it is unset (a plain go test), an error when it is set but unusable.
// SkipMessage says how to get them.
func FromEnv() (*Defs, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return nil, nil
	}
	v, _ := loaded.LoadOrStore(dir, new(loadResult))
	r := v.(*loadResult)
	r.once.Do(func() { r.defs, r.err = Load(dir) })
	if r.err != nil {
		return nil, fmt.Errorf("%s=%s: %w", EnvDir, dir, r.err)
	}
	return r.defs, nil
}

// SkipMessage is what a test that needs the definitions says when
// $IDPBENCH_ZITADEL_PROTO is unset.
const SkipMessage = EnvDir + " is unset: run scripts/test.sh, or " +
	"IDPBENCH_ZITADEL_PROTO=\"$(scripts/fetch-zitadel-proto.sh)\" go test ./products/zitadel/..." +
	" (it fetches " + Package + "@" + Version + " with npm into the project's cache)"
