// Package kubernetes holds the Kubernetes mode of idpbench's load agents:
// base/, a kustomize base with the agents of one load step as an Indexed
// Job, which the k8sstep command (cmd/k8sstep, run by scripts/k8s-step.sh)
// renders through an overlay of its own, and the Dockerfile of the tools
// image they run. See README.md.
//
// The package has no code of its own: its tests render the base, and the
// overlays k8sstep writes (built from the repository's main module by the
// tests), in process with kustomize's own library
// (sigs.k8s.io/kustomize/api/krusty, what `kubectl kustomize` is built on),
// decode every object strictly into the upstream Kubernetes types (an
// unknown or misspelled field is an error) and check what the agents rely
// on: Indexed completions, one agent per index and node, away from the IdP,
// Guaranteed QoS with whole CPUs, the segment and the start of each agent,
// the scrape annotations, the Secret mounted read-only and no secret in
// the arguments or the environment. No cluster is needed. k8sstep's
// argument checks and its run path against a stand-in kubectl are
// internal/k8sstep's tests.
//
// It is a module of its own, like products/refop/server, so that the tools' module
// does not carry kustomize's and the Kubernetes API's dependencies.
package kubernetes
