// Command fundsvc serves investment fund documents and positions from one
// DynamoDB table. Subcommands: serve, table create|describe, seed.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
)

const usage = `usage: fundsvc <command> [flags]

commands:
  serve              serve the REST API
  table create       create the table and its indexes (idempotent)
  table describe     print the table's key schema and indexes
  seed               load the demo dataset (idempotent)

flags (each also an environment variable):
  --table      FUNDSVC_TABLE              table name (default fundsvc)
  --endpoint   FUNDSVC_DYNAMODB_ENDPOINT  DynamoDB endpoint; empty for AWS (default http://127.0.0.1:8000)
  --region     FUNDSVC_REGION             AWS region (default us-east-1)
  --listen     FUNDSVC_LISTEN             listen address (default :8080)
  --log-level  FUNDSVC_LOG_LEVEL          debug, info, warn, error (default info)
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fundsvc:", err)
		os.Exit(1)
	}
}

// run executes one subcommand; it returns when the command is done or, for
// serve, when ctx is cancelled and in-flight requests have finished.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cmd, rest := args[0], args[1:]
	sub := ""
	if cmd == "table" {
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			return errors.New("table: want create or describe; run fundsvc help")
		}
		sub, rest = rest[0], rest[1:]
	}
	cfg, extra, err := config.Load(getenv, rest, "fundsvc "+cmd)
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		return fmt.Errorf("%s: unexpected arguments %q", cmd, extra)
	}
	log := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	store, err := open(ctx, cfg, getenv)
	if err != nil {
		return err
	}
	switch cmd + " " + sub {
	case "serve ":
		return serve(ctx, cfg, store, log, stdout)
	case "table create":
		if err := store.CreateTable(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "table %s is ready\n", cfg.Table)
		return nil
	case "table describe":
		d, err := store.Describe(ctx)
		if err != nil {
			return fmt.Errorf("describe table %s: %w", cfg.Table, err)
		}
		fmt.Fprintf(stdout, "table %s: status %s, key %s/%s, %d items\n", d.Name, d.Status, d.HashKey, d.RangeKey, d.Items)
		for _, g := range d.GSI {
			fmt.Fprintf(stdout, "  index %s: key %s/%s, projection %s, status %s\n", g.Name, g.HashKey, g.RangeKey, g.ProjectionType, g.Status)
		}
		return nil
	case "seed ":
		n, err := store.SeedDemo(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "seeded the demo dataset: %d versions written\n", n)
		return nil
	}
	return fmt.Errorf("unknown command %q; run fundsvc help", strings.TrimSpace(cmd+" "+sub))
}

// open connects to DynamoDB: throttling and transaction conflicts are
// retried with backoff, condition failures are not.
func open(ctx context.Context, cfg config.Config, getenv func(string) string) (*fund.Store, error) {
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(cfg.Region),
	}
	if cfg.Endpoint != "" {
		opts = append(opts, awsconfig.WithBaseEndpoint(cfg.Endpoint))
		if getenv("AWS_ACCESS_KEY_ID") == "" {
			// DynamoDB Local accepts any credentials; don't make newcomers invent some.
			opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
		}
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	store := fund.NewStore(fund.NewDB(awsCfg), cfg.Table)
	store.MaxPositions = cfg.MaxPositions
	return store, nil
}

func serve(ctx context.Context, cfg config.Config, store *fund.Store, log *slog.Logger, stdout io.Writer) error {
	handler := api.NewServer(api.Options{
		Documents: store, Positions: positions.NewStore(store), Logger: log,
		CursorKey: []byte(cfg.CursorKey), MaxBodyBytes: cfg.MaxBodyBytes,
		DefaultLimit: cfg.DefaultPageLimit, MaxLimit: cfg.MaxPageLimit, RequestTimeout: cfg.RequestTimeout,
	})
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	log.Info("listening", slog.String("addr", "http://"+ln.Addr().String()), slog.String("table", cfg.Table))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", slog.Duration("timeout", cfg.ShutdownTimeout))
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
