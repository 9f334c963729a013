// Package contracttest holds fundsvc to what it says, from the request to
// the answer to the OpenAPI document to the export's columns. It checks one
// vocabulary: each concept spelled one way, enums in one casing. And it
// checks that no layer loses a field: a request with every member set is
// found unchanged in every route that shows it and in the exported Parquet.
// Its tests run on DynamoDB Local, the API over HTTP and DuckDB.
package contracttest
