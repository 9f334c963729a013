// Package wire is the JSON contract of the REST API: one Go type per
// request and response shape, named as its OpenAPI schema, with the
// conversions from the domain (package fund). The OpenAPI document is
// generated from these types and the route table (api/spec.go). The
// benchmark and the multi-instance tests speak the API through them too,
// which is why they live outside package api: nothing imports api.
package wire
