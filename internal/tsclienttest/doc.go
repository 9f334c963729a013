// Package tsclienttest holds the test that walks the tour (docs/tour.md)
// with a TypeScript client generated from the OpenAPI document, the way an
// investor portal's team would use the contract. openapi-typescript
// generates the types from api/openapi.json, tsc type-checks and compiles
// clients/typescript/tour.mts against them, and node runs it against the
// API on the demo dataset. All three tools (and openapi-fetch, the client)
// are pinned in tools/package.json and installed by make tools.
//
// The test fails when the contract and the code drift. A field the document
// renames or retypes fails tsc where the tour reads it, and an answer that
// differs from the document (or from the tour's figures) fails the tour.
package tsclienttest
