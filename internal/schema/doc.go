// Package schema defines the records the idpbench tools exchange. It is the
// project's spine: loadstep writes Step, coldstart writes Coldstart, sampler
// writes Sample lines, the run scripts write Meta, and aggregate reads them all.
//
// Every field states its unit in its name (_s seconds, _ms milliseconds,
// _bytes bytes, _pct percent, _rps requests per second) and in its doc comment.
// Readers ignore unknown fields; removing or renaming a field, or changing a
// unit, bumps the major version in the schema string ("idpbench.step/v1" ->
// "idpbench.step/v2"). Decoders reject another major version with an error
// naming the file.
package schema
