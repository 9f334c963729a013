package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/export"
)

// Iceberg publishes an export as Apache Iceberg tables and describes them
// for Athena. cmd/fundsvc-iceberg links one in (cmd/internal/icebergcli);
// fundsvc has none and runs fundsvc-iceberg instead.
type Iceberg interface {
	// Export runs the export ecfg describes and commits its files to the
	// catalog cfg selects; creds, when not nil, are the S3 credentials of
	// the environment.
	Export(ctx context.Context, ecfg export.Config, cfg config.Config, creds aws.CredentialsProvider, log *slog.Logger) (*export.Manifest, error)
	// DDL writes what Athena needs to query the tables of the catalog cfg
	// selects, for snapshots at location.
	DDL(ctx context.Context, cfg config.Config, location string, creds aws.CredentialsProvider, w io.Writer) error
}

// IcebergBinary is the program fundsvc runs for --format iceberg.
const IcebergBinary = "fundsvc-iceberg"

// runIcebergBinary runs fundsvc-iceberg with args, this process's
// environment and standard streams, and returns its exit status as an
// exitCode (nil for 0). A signal that stops fundsvc is passed on to it, so
// that an export finishes or cleans up as it would have here.
func (p Program) runIcebergBinary(ctx context.Context, args []string, stdout io.Writer) error {
	path, err := findIcebergBinary()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, p.stderr()
	cmd.Env = os.Environ()
	if p.Environ != nil {
		cmd.Env = p.Environ()
	}
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitCode(128 + int(ws.Signal()))
		}
		return exitCode(exit.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", path, err)
	}
	return nil
}

// findIcebergBinary returns fundsvc-iceberg beside the running executable,
// else the one on PATH, else an error saying how to build it.
func findIcebergBinary() (string, error) {
	self, err := os.Executable()
	if err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), IcebergBinary)
		if st, err := os.Stat(beside); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	path, err := exec.LookPath(IcebergBinary)
	if err == nil {
		return path, nil
	}
	if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("--format iceberg: %w", err)
	}
	where := "beside this fundsvc"
	if self != "" {
		where = "in " + filepath.Dir(self)
	}
	return "", fmt.Errorf("--format iceberg needs %s, fundsvc with the Iceberg publisher, which is neither %s nor on PATH: "+
		"build it with make build (or go build -o %s ./cmd/fundsvc-iceberg) and run this again", IcebergBinary, where, IcebergBinary)
}
