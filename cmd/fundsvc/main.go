// Command fundsvc serves investment fund documents and positions from one
// DynamoDB table. Subcommands: serve, export, ddl, table create|describe,
// seed, import (and import template), token, version, help;
// fundsvc help lists them with their flags.
//
// It leaves out the Iceberg publisher (iceberg-go, Arrow, SQLite, Glue),
// which would cost every process, serve included, its size and start-up:
// `fundsvc export --format iceberg` and `fundsvc ddl --format iceberg` run
// fundsvc-iceberg (cmd/fundsvc-iceberg), found beside this binary or on
// PATH, with the same arguments, environment and standard streams.
package main

import "github.com/fundsvc/fundsvc/cmd/internal/cli"

func main() { cli.Program{}.Main() }
