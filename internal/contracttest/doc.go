// Package contracttest holds fundsvc's contract to what it says, from the
// request to the answer to the OpenAPI document to the export's columns:
// one vocabulary (each concept spelled one way, enums in one casing) and
// fields that no layer loses (a request with every member set, found
// unchanged in every route that shows it and in the exported Parquet).
// Its tests run on DynamoDB Local, the API over HTTP and DuckDB.
package contracttest
