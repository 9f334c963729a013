// Command fundsvc-iceberg is fundsvc with the Iceberg publisher linked in
// (export/iceberg: iceberg-go, Arrow, SQLite, Glue): the same commands and
// flags, and `export --format iceberg` and `ddl --format iceberg` run here.
// fundsvc runs it for those; make build builds both.
package main

import (
	"github.com/fundsvc/fundsvc/cmd/internal/cli"
	"github.com/fundsvc/fundsvc/cmd/internal/icebergcli"
)

func main() { cli.Program{Iceberg: icebergcli.Publisher{}}.Main() }
