// Command fundsvc serves investment fund documents and positions from one
// DynamoDB table. Subcommands: serve, export, ddl, table create|describe,
// changes backfill, seed, token.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
)

const usage = `usage: fundsvc <command> [flags]

commands:
  serve              serve the REST API
  table create       create the table and its indexes (idempotent)
  table describe     print the table's key schema and indexes
  seed               load the demo dataset (idempotent)
  export             write a Parquet snapshot of the table for Athena:
                       fundsvc export [--dest s3://bucket/prefix | DIR] [--date YYYY-MM-DD]
                       [--segments N] [--file-bytes N] [--compression zstd|snappy] [--progress auto|bar|log]
                       [--wait-lease DURATION: wait for another export of the same date instead of refusing]
                       [--format hive|iceberg: hive (default) publishes symlink tables; iceberg commits
                        Apache Iceberg tables to --iceberg-catalog sql|glue|rest, docs/export.md]
                       [--iceberg-commit atomic|per-table: atomic (default) commits every table at once;
                        per-table, which glue needs, leaves tables on different runs if a run fails between them]
  changes backfill   give the change index's keys to documents committed before it existed
                     (idempotent; prints a resume point after every page):
                       fundsvc changes backfill [--resume POINT] [--page-items N]
  ddl                print Athena CREATE EXTERNAL TABLE statements: fundsvc ddl [--location s3://bucket/prefix | DIR]
                       fundsvc ddl --format iceberg: what Athena needs for the Iceberg tables (Glue registration)
  token              mint a development token with the configured HS256 secret:
                       fundsvc token --role admin --funds FUND_A,FUND_B   (or --funds '*')
                       fundsvc token --role investor --investor INVESTOR_1
                     [--subject NAME] [--ttl 12h, at most FUNDSVC_JWT_MAX_LIFETIME]

flags (each also an environment variable):
  --table      FUNDSVC_TABLE              table name (default fundsvc)
  --endpoint   FUNDSVC_DYNAMODB_ENDPOINT  DynamoDB endpoint; empty for AWS (default http://127.0.0.1:8000)
  --region     FUNDSVC_REGION             AWS region (default us-east-1)
  --listen     FUNDSVC_LISTEN             listen address (default :8080)
  --log-level  FUNDSVC_LOG_LEVEL          debug, info, warn, error (default info)

export (each also a flag of export, except the S3 settings):
  FUNDSVC_EXPORT_DEST          s3://bucket/prefix or a directory (default fundsvc-export)
  FUNDSVC_EXPORT_SEGMENTS      parallel Scan segments (default 4)
  FUNDSVC_EXPORT_FILE_BYTES    roll Parquet files near this size (default 134217728)
  FUNDSVC_EXPORT_COMPRESSION   zstd or snappy (default zstd)
  FUNDSVC_S3_ENDPOINT          S3-compatible endpoint such as http://127.0.0.1:9000; empty for AWS
  FUNDSVC_S3_REGION            S3 region (default the DynamoDB region)
  FUNDSVC_S3_PATH_STYLE        true for path-style URLs (MinIO)
  S3 credentials come from the standard AWS chain (AWS_ACCESS_KEY_ID, profiles, roles).
  FUNDSVC_EXPORT_FORMAT        hive (default) or iceberg
  FUNDSVC_ICEBERG_CATALOG      sql (default: SQLite file), glue or rest
  FUNDSVC_ICEBERG_URI          the SQLite file (default fundsvc-iceberg.db) or the REST catalog URL
  FUNDSVC_ICEBERG_WAREHOUSE    the REST catalog's warehouse (S3 Tables: the table bucket ARN)
  FUNDSVC_ICEBERG_NAMESPACE    namespace / Glue database of the tables (default fundsvc)
  FUNDSVC_ICEBERG_COMMIT       atomic (default) or per-table

tokens (serve needs one of the first two):
  FUNDSVC_JWT_HS256_SECRET   shared secret, at least 32 bytes
  FUNDSVC_JWT_JWKS_FILE      JWKS file of RS256/ES256 public keys
  FUNDSVC_JWT_JWKS_REFRESH   how often the JWKS file is re-read (5m; also on an unknown kid, at most every 10s)
  FUNDSVC_JWT_MAX_LIFETIME   longest token lifetime, exp - iat (24h; tokens need exp and iat)
  FUNDSVC_JWT_ISSUER, FUNDSVC_JWT_AUDIENCE, FUNDSVC_JWT_LEEWAY (30s)
  FUNDSVC_PUBLIC_METRICS, FUNDSVC_PUBLIC_OPENAPI (true: no token needed)

serve limits and shutdown (see the README for the rest):
  FUNDSVC_RATE_LIMIT         /v1 requests a second per principal and process (default 100; 0: no limit)
  FUNDSVC_RATE_BURST         /v1 requests at once per principal (default 200)
  FUNDSVC_WRITE_TIMEOUT      deadline of a write (default 5m); FUNDSVC_REQUEST_TIMEOUT of a read (60s)
  FUNDSVC_SHUTDOWN_TIMEOUT   how long shutdown waits for requests in flight (default the longer timeout + 10s)
  FUNDSVC_DRAIN_DELAY        how long /readyz fails before new connections are refused (default 0)
  FUNDSVC_CHANGE_SHARDS      shards of each day of the change index (default 8, 1 to 256; see docs/access-patterns.md)
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
	if cmd == "token" {
		return mintToken(rest, getenv, stdout)
	}
	sub := ""
	if cmd == "table" || cmd == "changes" {
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			return fmt.Errorf("%s: want %s; run fundsvc help", cmd, map[string]string{"table": "create or describe", "changes": "backfill"}[cmd])
		}
		sub, rest = rest[0], rest[1:]
	}
	var ex exportFlags
	var ch changesFlags
	cfg, extra, err := config.Load(getenv, rest, "fundsvc "+cmd, ex.register(cmd), ch.register(cmd, sub))
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		return fmt.Errorf("%s: unexpected arguments %q", cmd, extra)
	}
	if cmd == "ddl" {
		return printDDL(cfg, ex, getenv, stdout)
	}
	log := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.LogLevel}))
	store, err := open(ctx, cfg, getenv)
	if err != nil {
		return err
	}
	switch cmd + " " + sub {
	case "serve ":
		return serve(ctx, cfg, store, log, stdout)
	case "export ":
		return runExport(ctx, cfg, ex, store, log, getenv, stdout)
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
	case "changes backfill":
		return backfillChanges(ctx, store, ch, stdout)
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
func open(ctx context.Context, cfg config.Config, getenv func(string) string) (*store.Store, error) {
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(cfg.Region),
	}
	if cfg.Endpoint != "" {
		opts = append(opts, awsconfig.WithBaseEndpoint(cfg.Endpoint))
	}
	if p := envCredentials(getenv); p != nil {
		opts = append(opts, awsconfig.WithCredentialsProvider(p))
	} else if cfg.Endpoint != "" {
		// DynamoDB Local accepts any credentials; don't make newcomers invent some.
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	store := store.NewStore(store.NewDB(awsCfg), cfg.Table)
	store.MaxPositions = cfg.MaxPositions
	store.ChangeShards = cfg.ChangeShards
	// A live writer must never lose its pending claims: the lease outlasts
	// the longest a write may run.
	store.ClaimLease = cfg.ClaimLease
	if store.ClaimLease <= 0 {
		store.ClaimLease = cfg.WriteTimeout + 10*time.Second
	}
	return store, nil
}

// envCredentials are the AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN that getenv gives, or nil, leaving the rest of the
// standard chain (profiles, roles) to the SDK.
func envCredentials(getenv func(string) string) aws.CredentialsProvider {
	id := getenv("AWS_ACCESS_KEY_ID")
	if id == "" {
		return nil
	}
	return credentials.NewStaticCredentialsProvider(id, getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN"))
}

// verifier builds the token verifier from the configured keys. The JWKS
// file is read now and re-read while serving; its re-reads are logged as
// JSON to standard error.
func verifier(cfg config.Config, log *slog.Logger) (*api.Verifier, error) {
	v, err := api.NewVerifier(api.AuthConfig{
		HS256Secret: []byte(cfg.JWTSecret), JWKSFile: cfg.JWKSFile, JWKSRefresh: cfg.JWKSRefresh,
		Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience, Leeway: cfg.JWTLeeway, MaxLifetime: cfg.JWTMaxLifetime,
		Logger: log,
	})
	switch {
	case err != nil && cfg.JWKSFile != "":
		return nil, fmt.Errorf("FUNDSVC_JWT_JWKS_FILE %s: %w", cfg.JWKSFile, err)
	case err != nil:
		return nil, fmt.Errorf("%w (FUNDSVC_JWT_HS256_SECRET or FUNDSVC_JWT_JWKS_FILE; make run generates a local secret)", err)
	}
	return v, nil
}

// mintToken prints a development token signed with the configured secret.
func mintToken(args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fundsvc token", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	role := fs.String("role", "", "admin or investor")
	funds := fs.String("funds", "", "admin: comma-separated fund IDs, or *")
	investor := fs.String("investor", "", "investor: the investor ID")
	subject := fs.String("subject", "", "token subject (default dev-<role>)")
	ttl := fs.Duration("ttl", 12*time.Hour, "validity")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("token: %w", err)
	}
	cfg, _, err := config.Load(getenv, nil, "fundsvc token")
	if err != nil {
		return err
	}
	if cfg.JWTSecret == "" {
		return errors.New("token: set FUNDSVC_JWT_HS256_SECRET to the secret the service verifies with")
	}
	ttlSet := false
	fs.Visit(func(f *flag.Flag) { ttlSet = ttlSet || f.Name == "ttl" })
	if !ttlSet {
		*ttl = min(*ttl, cfg.JWTMaxLifetime)
	}
	if *ttl <= 0 || *ttl > cfg.JWTMaxLifetime {
		return fmt.Errorf("token: --ttl %s: want more than 0 and at most %s, the longest lifetime the service accepts (FUNDSVC_JWT_MAX_LIFETIME)", *ttl, cfg.JWTMaxLifetime)
	}
	p := api.Principal{Subject: *subject, Role: *role, Investor: *investor}
	if *funds != "" {
		p.Funds = strings.Split(*funds, ",")
	}
	if p.Subject == "" {
		p.Subject = "dev-" + *role
	}
	tok, err := api.MintToken([]byte(cfg.JWTSecret), p, cfg.JWTIssuer, cfg.JWTAudience, *ttl, time.Now())
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

// serveGCPercent is the garbage collector's target while serving, unless
// GOGC says otherwise. The service's live heap is a few megabytes, so at Go's
// default of 100 it collected every few requests: a fifth of its CPU on
// reads. At 400 it collects a quarter as often, and the heap may grow to five
// times what is live rather than twice; where memory is capped, GOMEMLIMIT
// (Go's own) makes it collect sooner near the cap.
const serveGCPercent = 400

// tuneGC sets serveGCPercent unless the GOGC environment variable is set.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
}

func serve(ctx context.Context, cfg config.Config, store *store.Store, log *slog.Logger, stdout io.Writer) error {
	tuneGC(os.Getenv)
	v, err := verifier(cfg, log)
	if err != nil {
		return err
	}
	var draining atomic.Bool // /readyz answers 503 once set
	handler := api.NewServer(api.Options{
		Verifier: v, PublicMetrics: cfg.PublicMetrics, PublicOpenAPI: cfg.PublicOpenAPI, TrustedProxies: cfg.TrustedProxies,
		IdempotencyLease: cfg.IdempotencyLease, IdempotencyTTL: cfg.IdempotencyTTL,
		Documents: store, Positions: positions.NewStore(store), Logger: log,
		CursorKey: []byte(cfg.CursorKey), MaxBodyBytes: cfg.MaxBodyBytes,
		DefaultLimit: cfg.DefaultPageLimit, MaxLimit: cfg.MaxPageLimit, RequestTimeout: cfg.RequestTimeout,
		WriteTimeout: cfg.WriteTimeout, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst,
		Draining: draining.Load,
	})
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      max(cfg.RequestTimeout, cfg.WriteTimeout) + 10*time.Second,
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
	// From here /readyz fails, so a load balancer stops sending requests;
	// for the drain delay new ones are still served (the balancer may not
	// have noticed yet), each on a connection that then closes. Shutdown
	// then refuses new connections and waits for the requests in flight,
	// for as long as the longest of them may run (config.Validate holds
	// the shutdown timeout to at least the write timeout).
	draining.Store(true)
	srv.SetKeepAlivesEnabled(false)
	log.Info("shutting down: /readyz fails from now", slog.Duration("drain_delay", cfg.DrainDelay), slog.Duration("timeout", cfg.ShutdownTimeout))
	if cfg.DrainDelay > 0 {
		select {
		case <-time.After(cfg.DrainDelay):
		case err := <-errc:
			return err
		}
	}
	log.Info("finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: requests still running after %s: %w", cfg.ShutdownTimeout, err)
	}
	log.Info("stopped")
	return nil
}
