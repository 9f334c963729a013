package cli

import (
	"context"
	"io"

	"github.com/fundsvc/fundsvc/cmd/internal/icebergcli"
)

// run runs the command line as fundsvc-iceberg does (the Iceberg publisher
// linked), its notices discarded.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return Program{Iceberg: icebergcli.Publisher{}, Stderr: io.Discard}.Run(ctx, args, getenv, stdout)
}
