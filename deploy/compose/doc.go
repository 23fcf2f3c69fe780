// Package compose holds the shared parts of idpbench's Docker compose mode:
// the one PostgreSQL definition (compose.postgres.yml, postgres/) that every
// product's compose file extends, the secrets' template (.env.example) and
// the tests. Each product's compose file, and the recipe of an image it
// builds, is in the product's folder (products/NAME/compose.yml, declared
// as its entry's ComposeFile). See README.md.
//
// The package has no code of its own: its tests check every compose file,
// found through the product registry, statically (pinned images equal to
// the native adapters' versions, health checks, loopback-only ports, memory
// limits, no literal secrets), because a Docker engine is not available
// everywhere the tests run.
package compose
