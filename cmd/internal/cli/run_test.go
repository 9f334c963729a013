package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/fundsvc/fundsvc/cmd/internal/icebergcli"
)

// run runs the command line as fundsvc-iceberg does (the Iceberg publisher
// linked), its notices discarded.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	return Program{Iceberg: icebergcli.Publisher{}, Stderr: io.Discard}.Run(ctx, args, getenv, stdout)
}

// childArgs names the variable holding, as JSON, the command line of a
// fundsvc process run by TestFundsvcProcessChild.
const childArgs = "FUNDSVC_TEST_CHILD_ARGS"

// TestFundsvcProcessChild is fundsvc in a process of its own, for the tests
// that run several or kill one (childProcess): it runs the command line it
// is given, its notices on standard error, and exits as main would.
func TestFundsvcProcessChild(t *testing.T) {
	raw := os.Getenv(childArgs)
	if raw == "" {
		t.Skip("a child process of the tests that start fundsvc processes (childProcess)")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	if err := (Program{Iceberg: icebergcli.Publisher{}}).Run(context.Background(), args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fundsvc:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// childProcess is a fundsvc process, not yet started, running args on
// table: this test binary running TestFundsvcProcessChild, with the
// settings named (FUNDSVC_TABLE, …) as env(t, table) has them.
func childProcess(t *testing.T, table string, settings []string, args ...string) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFundsvcProcessChild$", "-test.count=1")
	get := env(t, table)
	cmd.Env = append(os.Environ(), childArgs+"="+string(raw))
	for _, k := range settings {
		cmd.Env = append(cmd.Env, k+"="+get(k))
	}
	return cmd
}
