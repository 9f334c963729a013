package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/webhooks"
	"github.com/prometheus/client_golang/prometheus"
)

// open connects to DynamoDB with the store's client (store.NewDB: bounded
// connection attempts, throttling retried with backoff).
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
	store.FeedSettle = cfg.FeedSettle
	store.MaxWaitingWriters = cfg.WaitingWriters
	store.MaxWebhookEndpoints = cfg.WebhookMaxEndpoints
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

// withStore opens the store and runs do with it.
func withStore(do func(ctx context.Context, e invocation, s *store.Store) error) func(context.Context, invocation) error {
	return func(ctx context.Context, e invocation) error {
		s, err := open(ctx, e.cfg, e.getenv)
		if err != nil {
			return err
		}
		return do(ctx, e, s)
	}
}

var createTable = withStore(func(ctx context.Context, e invocation, s *store.Store) error {
	if err := s.CreateTable(ctx); err != nil {
		return tableError(e.cfg, err)
	}
	fmt.Fprintf(e.stdout, "table %s is ready\n", e.cfg.Table)
	return nil
})

var describeTable = withStore(func(ctx context.Context, e invocation, s *store.Store) error {
	d, err := s.Describe(ctx)
	if err != nil {
		if store.TableMissing(err) || errors.Is(err, store.ErrUnreachable) {
			return tableError(e.cfg, err)
		}
		return fmt.Errorf("describe table %s: %w", e.cfg.Table, err)
	}
	fmt.Fprintf(e.stdout, "table %s: status %s, key %s/%s, %d items\n", d.Name, d.Status, d.HashKey, d.RangeKey, d.Items)
	for _, g := range d.GSI {
		fmt.Fprintf(e.stdout, "  index %s: key %s/%s, projection %s, status %s\n", g.Name, g.HashKey, g.RangeKey, g.ProjectionType, g.Status)
	}
	return nil
})

// tableError says what to do when err is DynamoDB being unreachable or the
// table missing; other errors it returns as they are.
func tableError(cfg config.Config, err error) error {
	switch {
	case errors.Is(err, store.ErrUnreachable):
		where := cmp.Or(cfg.Endpoint, "AWS (region "+cfg.Region+")")
		cause := err
		var op *net.OpError
		if errors.As(err, &op) {
			cause = op // "dial tcp 127.0.0.1:8000: connect: connection refused", without the SDK's wrapping
		}
		return fmt.Errorf("DynamoDB at %s is not reachable: %w; is DynamoDB Local running? (make run starts one; --endpoint or FUNDSVC_DYNAMODB_ENDPOINT names another)", where, cause)
	case store.TableMissing(err):
		return fmt.Errorf("table %s does not exist: run fundsvc table create", cfg.Table)
	}
	return err
}

// seedFlags are the flags of fundsvc seed.
type seedFlags struct{ reset bool }

func registerSeed(fs *flag.FlagSet, f *flags) {
	fs.BoolVar(&f.seed.reset, "reset", false, "delete the table, create it again and seed the demo: everything else it held is lost "+
		"(refused unless the endpoint is a loopback address, DynamoDB Local; make reset-demo runs it on make run's stack)")
}

var seed = withStore(func(ctx context.Context, e invocation, s *store.Store) error {
	seed, what := s.SeedDemo, "seeded the demo dataset"
	if e.f.seed.reset {
		seed, what = s.ResetDemo, "reset table "+e.cfg.Table+" to the demo dataset"
	}
	n, err := seed(ctx)
	if err != nil {
		return tableError(e.cfg, err)
	}
	fmt.Fprintf(e.stdout, "%s: %d versions written\n", what, n)
	return nil
})

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

// cursorKey is the key that seals pagination cursors: FUNDSVC_CURSOR_KEY
// when set, else the key kept in the table, made by the first instance that
// asks, so that every instance on the table shares it without a setting.
func cursorKey(ctx context.Context, cfg config.Config, s *store.Store) ([]byte, error) {
	if cfg.CursorKey != "" {
		return []byte(cfg.CursorKey), nil
	}
	key, err := s.CursorKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("the cursor key kept in table %s: %w (FUNDSVC_CURSOR_KEY sets one instead)", cfg.Table, err)
	}
	return key, nil
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

// tableCheckTimeout bounds one check of the table at start.
const tableCheckTimeout = 10 * time.Second

// tableCheckInterval is how often serve checks again while it waits for
// the table (--wait-for-table).
const tableCheckInterval = 500 * time.Millisecond

// awaitTable checks that DynamoDB answers and the table exists, each check
// bounded by tableCheckTimeout; while cfg.WaitForTable has not passed it
// checks again, logging why it waits, and then it gives up with what is
// wrong and what to do.
func awaitTable(ctx context.Context, cfg config.Config, s *store.Store, log *slog.Logger) error {
	deadline := time.Now().Add(cfg.WaitForTable)
	logged := ""
	for {
		cctx, cancel := context.WithTimeout(ctx, tableCheckTimeout)
		err := s.CheckTable(cctx)
		cancel()
		if err == nil {
			return nil
		}
		err = tableError(cfg, err)
		if ctx.Err() != nil || !time.Now().Add(tableCheckInterval).Before(deadline) {
			if cfg.WaitForTable > 0 {
				return fmt.Errorf("waited %s (--wait-for-table): %w", cfg.WaitForTable, err)
			}
			return err
		}
		if msg := err.Error(); msg != logged {
			log.Warn("waiting for the table", slog.String("error", msg), slog.Duration("wait_for_table", cfg.WaitForTable))
			logged = msg
		}
		select {
		case <-ctx.Done():
		case <-time.After(tableCheckInterval):
		}
	}
}

func runServe(ctx context.Context, e invocation) error {
	s, err := open(ctx, e.cfg, e.getenv)
	if err != nil {
		return err
	}
	return serve(ctx, e.cfg, s, e.log, e.stdout)
}

func serve(ctx context.Context, cfg config.Config, store *store.Store, log *slog.Logger, stdout io.Writer) error {
	tuneGC(os.Getenv)
	v, err := verifier(cfg, log)
	if err != nil {
		return err
	}
	if err := awaitTable(ctx, cfg, store, log); err != nil {
		return err
	}
	cursorKey, err := cursorKey(ctx, cfg, store)
	if err != nil {
		return err
	}
	var draining atomic.Bool // /readyz answers 503 once set
	deliverer, sealer, err := webhookDelivery(cfg, store, log)
	if err != nil {
		return err
	}
	var collectors []prometheus.Collector
	if deliverer != nil {
		collectors = deliverer.Metrics().Collectors()
		store.OnCommit = deliverer.Wake // this instance's commits are delivered without waiting for the poll
	}
	analytics := positions.NewAnalytics(store)
	analytics.Freshness = positions.Freshness{Months: cfg.NAVStaleMonths, Days: cfg.NAVStaleDays}
	metrics := api.NewMetrics()
	handler := api.NewServer(api.Options{
		Metrics:       metrics,
		WebhookSealer: sealer, WebhookPolicy: webhooks.Policy{AllowLoopback: cfg.WebhookAllowLoopback}, Collectors: collectors,
		Verifier: v, PublicMetrics: cfg.PublicMetrics, PublicOpenAPI: cfg.PublicOpenAPI, TrustedProxies: cfg.TrustedProxies,
		IdempotencyLease: cfg.IdempotencyLease, IdempotencyTTL: cfg.IdempotencyTTL,
		Documents: store, Positions: analytics, Logger: log,
		CursorKey: cursorKey, MaxBodyBytes: cfg.MaxBodyBytes, MaxBodyBytesInFlight: cfg.BodiesInFlight,
		DefaultLimit: cfg.DefaultPageLimit, MaxLimit: cfg.MaxPageLimit, RequestTimeout: cfg.RequestTimeout,
		WriteTimeout: cfg.WriteTimeout, RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst, FanoutConcurrency: cfg.FanoutConcurrency,
		ItemMemoBytes: cmp.Or(cfg.ItemMemoBytes, -1), // the setting's 0 is no memo
		Draining:      draining.Load,
	})
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (--listen or FUNDSVC_LISTEN names another address)", cfg.Listen, err)
	}
	errc := make(chan error, 2)
	metricsSrv, err := serveMetrics(cfg, metrics, log, errc)
	if err != nil {
		ln.Close()
		return err
	}
	if metricsSrv != nil {
		defer metricsSrv.Close()
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      max(cfg.RequestTimeout, cfg.WriteTimeout) + 10*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	defer srv.Close() // when serve returns early (a listener failed); a no-op after Shutdown
	b := api.ReadBuild()
	log.Info("listening", slog.String("addr", "http://"+ln.Addr().String()), slog.String("table", cfg.Table),
		slog.String("version", b.Version), slog.String("revision", b.Revision))
	go func() { errc <- srv.Serve(ln) }()
	dctx, stopDelivery := context.WithCancel(context.WithoutCancel(ctx))
	delivered := make(chan struct{})
	if deliverer != nil {
		go func() { defer close(delivered); deliverer.Run(dctx, cfg.WebhookPoll) }()
		purged := make(chan struct{}) // deleted endpoints' partitions emptied (docs/webhooks.md)
		go func() {
			defer close(purged)
			(&webhooks.Purger{Purges: store, Log: log}).Run(dctx, webhookPurgeInterval)
		}()
		defer func() { <-purged }() // after stopDelivery below
	} else {
		close(delivered)
	}
	defer func() { stopDelivery(); <-delivered }()
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
	if metricsSrv != nil {
		// Scraped until the last request is answered, so the final counts
		// can be read.
		_ = metricsSrv.Shutdown(sctx)
	}
	log.Info("stopped")
	return nil
}

// serveMetrics serves GET /metrics alone, without a token, on
// cfg.MetricsListen when it is set (nil otherwise), until the returned
// server is shut down; an error of its Serve goes to errc. It is for
// Prometheus on a private network: a scraper holds no fundsvc token, whose
// lifetime FUNDSVC_JWT_MAX_LIFETIME caps, and the API's own /metrics needs
// an admin token of every fund.
func serveMetrics(cfg config.Config, m *api.Metrics, log *slog.Logger, errc chan<- error) (*http.Server, error) {
	if cfg.MetricsListen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.MetricsListen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s for metrics: %w (--metrics-listen or FUNDSVC_METRICS_LISTEN names another address)", cfg.MetricsListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{
		Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: 16 << 10,
	}
	log.Info("serving metrics", slog.String("addr", "http://"+ln.Addr().String()+"/metrics"))
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics listener: %w", err)
		}
	}()
	return srv, nil
}

// webhookPurgeInterval is how often an instance that delivers webhooks
// empties the partitions of deleted endpoints.
const webhookPurgeInterval = time.Minute

// webhookDelivery is the instance's webhook deliverer and the sealer of
// signing secrets, both nil without FUNDSVC_WEBHOOK_SECRET_KEY (the webhook
// routes then answer 503).
func webhookDelivery(cfg config.Config, s *store.Store, log *slog.Logger) (*webhooks.Deliverer, *webhooks.Sealer, error) {
	if cfg.WebhookSecretKey == "" {
		return nil, nil, nil
	}
	key, err := webhooks.ParseSealerKey(cfg.WebhookSecretKey)
	if err != nil {
		return nil, nil, fmt.Errorf("FUNDSVC_WEBHOOK_SECRET_KEY %w", err)
	}
	sealer, err := webhooks.NewSealer(key)
	if err != nil {
		return nil, nil, err
	}
	host, _ := os.Hostname()
	return &webhooks.Deliverer{
		Queue: s, Feed: s, Sealer: sealer, Policy: webhooks.Policy{AllowLoopback: cfg.WebhookAllowLoopback}, Log: log,
		Instance: fmt.Sprintf("%s/%d", host, os.Getpid()), Schedule: cfg.WebhookSchedule, Timeout: cfg.WebhookTimeout,
		Lease: cfg.WebhookLease, DisableAfter: cfg.WebhookDisableAfter,
	}, sealer, nil
}
