// Package cli is fundsvc's command line, shared by its two binaries:
// cmd/fundsvc, and cmd/fundsvc-iceberg, which is the same command line with
// the Iceberg publisher (export/iceberg: iceberg-go, Arrow, SQLite, Glue)
// linked in. fundsvc leaves the publisher out, so that serve and a
// Hive-style export neither compile nor initialise it. For --format iceberg
// it runs fundsvc-iceberg.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/fundsvc/fundsvc/config"
)

// Program is the command line of one binary.
type Program struct {
	// Iceberg publishes --format iceberg. fundsvc leaves it nil and runs
	// fundsvc-iceberg instead.
	Iceberg Iceberg
	// Stderr receives notices, such as which settings came from the stack
	// file; os.Stderr when nil.
	Stderr io.Writer
	// Environ is the environment fundsvc-iceberg runs with; os.Environ
	// when nil.
	Environ func() []string
}

// Main runs the command os.Args names and exits with its status: 0 when it
// succeeded, 1 with its error on standard error when not, or the status of
// fundsvc-iceberg when it ran that.
func (p Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := p.Run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	var code exitCode
	switch {
	case errors.As(err, &code):
		os.Exit(int(code))
	case err != nil:
		fmt.Fprintln(os.Stderr, "fundsvc:", err)
		os.Exit(1)
	}
}

// exitCode is the status of a program fundsvc ran, which fundsvc exits with
// (it has written its own errors).
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

func (p Program) stderr() io.Writer {
	if p.Stderr == nil {
		return os.Stderr
	}
	return p.Stderr
}

// flags are the values of every command's own flags (those that are no
// setting of config).
type flags struct {
	export  exportFlags
	token   tokenFlags
	seed    seedFlags
	imports importFlags
}

// command is one subcommand: its name ("serve", "table create"), what it
// does, its own flags, and what runs it.
type command struct {
	name    string
	summary string // one line, for fundsvc help
	doc     string // more, for fundsvc help COMMAND
	args    string // its arguments after the flags, for help ("FILE"); none when empty
	// own registers the command's own flags; the settings' flags come
	// from config (config.RegisterFlags).
	own func(fs *flag.FlagSet, f *flags)
	run func(ctx context.Context, e invocation) error
	// noSettings says the command reads no settings (environment, stack
	// file or their flags): its own flags only.
	noSettings bool
}

// settings is the name config's settings table knows the command by: its
// first word; "" for a command of noSettings, which config knows none of.
func (c command) settings() string {
	if c.noSettings {
		return ""
	}
	return strings.Fields(c.name)[0]
}

// register is what config.Load adds to the settings' flags.
func (c command) register(f *flags) func(*flag.FlagSet, *config.Config) {
	return func(fs *flag.FlagSet, _ *config.Config) {
		if c.own != nil {
			c.own(fs, f)
		}
	}
}

// invocation is what a command runs with.
type invocation struct {
	p      Program
	cfg    config.Config
	f      *flags
	getenv func(string) string
	stdout io.Writer
	log    *slog.Logger
	args   []string // the arguments after the flags, for a command that takes some
}

// commands is every subcommand, in the order help lists them.
func commands() []command {
	return []command{
		{name: "serve", summary: "serve the REST API until SIGTERM or Ctrl-C",
			doc: "Checks that DynamoDB answers and the table exists (--wait-for-table to wait for them), then serves /v1, /livez, /readyz, /metrics, " +
				"/openapi.json and /docs on --listen, and /metrics alone, without a token, on --metrics-listen when set. Needs a token key (FUNDSVC_JWT_HS256_SECRET or FUNDSVC_JWT_JWKS_FILE). " +
				"GOGC is 400 while serving unless set; GOMEMLIMIT (Go's own) bounds memory.",
			run: runServe},
		{name: "table create", summary: "create the table and its indexes (idempotent)", run: createTable},
		{name: "table describe", summary: "print the table's key schema and indexes", run: describeTable},
		{name: "seed", summary: "load the demo dataset (idempotent); --reset deletes and recreates the table first (DynamoDB Local only)",
			own: registerSeed, run: seed},
		{name: "export", summary: "write a Parquet snapshot of the table for Athena (Hive-style, or Apache Iceberg tables)",
			doc: "Writes every dataset of one snapshot date to --dest, whole or not at all (docs/export.md). --since-last builds on the latest " +
				"snapshot and reads only what changed since. --format iceberg runs fundsvc-iceberg, the build with the Iceberg publisher, " +
				"found beside fundsvc or on PATH (make build builds both).",
			own: registerExport, run: runExport},
		{name: "ddl", summary: "print Athena's DDL of the snapshots, a table and a view per dataset (--format iceberg: the Glue registration of the Iceberg tables)",
			own: registerDDL, run: printDDL},
		{name: "import", summary: "check a CSV or XLSX file of documents and commit each (docs/imports.md); --dry-run writes nothing",
			doc: importDoc, args: "FILE", own: registerImport, run: runImport},
		{name: "import template", summary: "write a document kind's import template (capital_call_notice, distribution_notice, capital_account_statement) to standard output",
			args: "KIND", own: registerImportTemplate, run: writeImportTemplate, noSettings: true},
		{name: "token", summary: "mint a development token with the configured HS256 secret",
			doc: "fundsvc token --role admin --funds FUND_A,FUND_B (or --funds '*'); fundsvc token --role investor --investor INVESTOR_1.",
			own: registerToken, run: mintToken},
	}
}

// version and help are not in commands: they read no settings.
const (
	versionSummary = "print the build: module version, VCS revision (modified or not) and time, Go version"
	helpSummary    = "this list; fundsvc help COMMAND (or fundsvc COMMAND -h) shows a command's flags and settings"
)

// Run executes one subcommand; it returns when the command is done or, for
// serve, when ctx is cancelled and in-flight requests have finished.
func (p Program) Run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		writeOverview(stdout)
		return nil
	}
	if args[0] == "help" {
		if len(args) == 1 {
			writeOverview(stdout)
			return nil
		}
		cmds := find(strings.Join(args[1:], " "))
		if len(cmds) == 0 {
			return fmt.Errorf("help: no command %q; run fundsvc help", strings.Join(args[1:], " "))
		}
		return writeHelp(stdout, cmds)
	}
	if args[0] == "version" {
		if len(args) > 1 && isHelp(args[1]) {
			fmt.Fprintf(stdout, "usage: fundsvc version\n\n%s\n", versionSummary)
			return nil
		}
		if len(args) > 1 {
			return fmt.Errorf("version: unexpected arguments %q", args[1:])
		}
		return p.printVersion(stdout)
	}

	name, rest := args[0], args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		// import takes a file but also names a subcommand (import template).
		if sub := find(name + " " + rest[0]); len(sub) == 1 && sub[0].name == name+" "+rest[0] {
			name, rest = sub[0].name, rest[1:]
		}
	}
	if group := find(name); len(group) > 1 || len(group) == 1 && group[0].name != name {
		// table takes a subcommand.
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			if len(rest) > 0 && isHelp(rest[0]) {
				return writeHelp(stdout, group)
			}
			var subs []string
			for _, c := range group {
				subs = append(subs, strings.TrimPrefix(c.name, name+" "))
			}
			return fmt.Errorf("%s: want %s; run fundsvc help %s", name, strings.Join(subs, " or "), name)
		}
		name, rest = name+" "+rest[0], rest[1:]
	}
	cmds := find(name)
	if len(cmds) != 1 || cmds[0].name != name {
		return fmt.Errorf("unknown command %q; run fundsvc help", name)
	}
	c := cmds[0]
	f := &flags{}
	cfg, extra, err := config.Load(getenv, rest, c.settings(), c.register(f))
	if errors.Is(err, flag.ErrHelp) {
		return writeHelp(stdout, cmds)
	}
	if err != nil {
		return err
	}
	if len(extra) > 0 && c.args == "" {
		return fmt.Errorf("%s: unexpected arguments %q", name, extra)
	}
	if (name == "export" || name == "ddl") && cfg.ExportFormat == config.FormatIceberg && p.Iceberg == nil {
		return p.runIcebergBinary(ctx, args, stdout)
	}
	if n := cfg.StackNotice(); n != "" {
		fmt.Fprintln(p.stderr(), n)
	}
	e := invocation{p: p, cfg: cfg, f: f, getenv: getenv, stdout: stdout, args: extra,
		log: slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))}
	return c.run(ctx, e)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// find returns the command called name, or every command of the group name
// names ("table").
func find(name string) []command {
	var out []command
	for _, c := range commands() {
		if c.name == name || strings.HasPrefix(c.name, name+" ") {
			out = append(out, c)
		}
	}
	if i := slices.IndexFunc(out, func(c command) bool { return c.name == name }); i >= 0 {
		return out[i : i+1]
	}
	return out
}
