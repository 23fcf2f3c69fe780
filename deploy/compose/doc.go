// Package compose holds the Docker compose mode of idpbench: one compose file
// per product (compose.hydra.yml, compose.keycloak.yml, compose.zitadel.yml)
// on one shared PostgreSQL definition (compose.postgres.yml). See README.md.
//
// The package has no code of its own: its tests check the compose files
// statically (pinned images equal to the native adapters' versions, health
// checks, loopback-only ports, memory limits, no literal secrets), because a
// Docker engine is not available everywhere the tests run.
package compose
