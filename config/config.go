// Package config loads fundsvc's configuration: flags override environment
// variables, which override the local stack's file (.data/stack.env, written
// by make run), which overrides the defaults. Every setting is declared once,
// in Settings, from which Load, the flags, the commands' help and the
// README's table are derived.
package config

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Config is everything fundsvc can be configured with.
type Config struct {
	Table            string        // FUNDSVC_TABLE, --table
	Endpoint         string        // FUNDSVC_DYNAMODB_ENDPOINT, --endpoint: empty for AWS itself
	Region           string        // FUNDSVC_REGION (or AWS_REGION), --region
	Listen           string        // FUNDSVC_LISTEN, --listen
	LogLevel         slog.Level    // FUNDSVC_LOG_LEVEL, --log-level
	WaitForTable     time.Duration // FUNDSVC_WAIT_FOR_TABLE, --wait-for-table: how long serve waits for its table at start
	CursorKey        string        // FUNDSVC_CURSOR_KEY: seals pagination cursors; the key kept in the table if empty
	MaxBodyBytes     int64         // FUNDSVC_MAX_BODY_BYTES
	BodiesInFlight   int64         // FUNDSVC_MAX_BODY_BYTES_IN_FLIGHT: write bodies read or held at once, per process
	WaitingWriters   int           // FUNDSVC_MAX_WAITING_WRITERS: writers of one document waiting behind its writer, per process
	MaxPositions     int           // FUNDSVC_MAX_POSITIONS
	NAVStaleMonths   int           // FUNDSVC_NAV_STALE_AFTER's calendar months: how long a NAV stays fresh after its statement's period end
	NAVStaleDays     int           // FUNDSVC_NAV_STALE_AFTER's days, counted after its months
	ShutdownTimeout  time.Duration // FUNDSVC_SHUTDOWN_TIMEOUT: default the longer of the request and write timeouts plus 10s
	DrainDelay       time.Duration // FUNDSVC_DRAIN_DELAY: how long /readyz fails before the listener closes
	RequestTimeout   time.Duration // FUNDSVC_REQUEST_TIMEOUT: the deadline of a read
	WriteTimeout     time.Duration // FUNDSVC_WRITE_TIMEOUT: the deadline of a write (a large restatement takes longer)
	DefaultPageLimit int
	MaxPageLimit     int

	// How long serve's HTTP server waits for a request to arrive.
	ReadHeaderTimeout time.Duration // FUNDSVC_READ_HEADER_TIMEOUT: its line and headers
	ReadTimeout       time.Duration // FUNDSVC_READ_TIMEOUT: the whole of it, body included

	// Bearer tokens (docs/security.md).
	JWTSecret      string        // FUNDSVC_JWT_HS256_SECRET: HS256 secret, at least 32 bytes
	JWKSFile       string        // FUNDSVC_JWT_JWKS_FILE: RS256/ES256 public keys
	JWKSRefresh    time.Duration // FUNDSVC_JWT_JWKS_REFRESH: how often the JWKS file is re-read
	JWTMaxLifetime time.Duration // FUNDSVC_JWT_MAX_LIFETIME: longest exp - iat accepted
	JWTIssuer      string        // FUNDSVC_JWT_ISSUER: required iss, when set
	JWTAudience    string        // FUNDSVC_JWT_AUDIENCE: required aud, when set; required with JWKSFile
	JWTLeeway      time.Duration // FUNDSVC_JWT_LEEWAY: clock skew allowed
	PublicMetrics  bool          // FUNDSVC_PUBLIC_METRICS: /metrics without a token
	MetricsListen  string        // FUNDSVC_METRICS_LISTEN: a listener serving /metrics alone, without a token; empty: none
	PublicOpenAPI  bool          // FUNDSVC_PUBLIC_OPENAPI: /openapi.json without a token
	TrustedProxies []string      // FUNDSVC_TRUSTED_PROXIES: comma-separated CIDRs or IPs

	// Per-principal rate limit of /v1, per process (docs/operations.md), and
	// the fan-out reads a process computes at once.
	RateLimit         float64 // FUNDSVC_RATE_LIMIT: tokens a second per principal; 0 disables
	RateBurst         int     // FUNDSVC_RATE_BURST: tokens a principal's bucket holds
	FanoutConcurrency int     // FUNDSVC_FANOUT_CONCURRENCY: 0 is api's default (twice GOMAXPROCS, at least 4)
	ItemMemoBytes     int64   // FUNDSVC_ITEM_MEMO_BYTES: 0 is no memo

	IdempotencyLease time.Duration // FUNDSVC_IDEMPOTENCY_LEASE: default max(request timeout, 1m) + 10s
	ClaimLease       time.Duration // FUNDSVC_CLAIM_LEASE: how long a write's pending position claims are safe; default write timeout + 10s
	IdempotencyTTL   time.Duration // FUNDSVC_IDEMPOTENCY_TTL
	ChangeShards     int           // FUNDSVC_CHANGE_SHARDS: shards of each day of the change index (store.ChangeShards)
	FeedSettle       time.Duration // FUNDSVC_FEED_SETTLE: how far the event feed's watermark trails the present (store.Store.FeedSettle)

	// Webhook delivery (docs/webhooks.md).
	WebhookSecretKey     string          // FUNDSVC_WEBHOOK_SECRET_KEY: AES-256 key sealing signing secrets, base64
	WebhookAllowLoopback bool            // FUNDSVC_WEBHOOK_ALLOW_LOOPBACK: http:// and loopback endpoints (development, tests)
	WebhookSchedule      []time.Duration // FUNDSVC_WEBHOOK_RETRY_SCHEDULE: the wait before each retry
	WebhookTimeout       time.Duration   // FUNDSVC_WEBHOOK_TIMEOUT: one attempt's deadline
	WebhookLease         time.Duration   // FUNDSVC_WEBHOOK_LEASE: how long a claimed delivery is an instance's; default timeout + 15s
	WebhookPoll          time.Duration   // FUNDSVC_WEBHOOK_POLL: how often an instance looks for work
	WebhookDisableAfter  time.Duration   // FUNDSVC_WEBHOOK_DISABLE_AFTER: how long an endpoint may fail before it is disabled
	WebhookMaxEndpoints  int             // FUNDSVC_WEBHOOK_MAX_ENDPOINTS: the most endpoints naming one fund (and of every fund)

	// The nightly export (fundsvc export, fundsvc ddl).
	ExportDest        string // FUNDSVC_EXPORT_DEST, --dest: s3://bucket/prefix or a directory
	ExportSegments    int    // FUNDSVC_EXPORT_SEGMENTS, --segments: parallel Scan segments
	ExportFileBytes   int64  // FUNDSVC_EXPORT_FILE_BYTES, --file-bytes: roll Parquet files near this size
	ExportCompression string // FUNDSVC_EXPORT_COMPRESSION, --compression: zstd or snappy
	ExportFormat      string // FUNDSVC_EXPORT_FORMAT, --format: hive or iceberg
	S3Endpoint        string // FUNDSVC_S3_ENDPOINT: S3-compatible endpoint; empty for AWS
	S3Region          string // FUNDSVC_S3_REGION: default the DynamoDB region
	S3PathStyle       bool   // FUNDSVC_S3_PATH_STYLE: path-style URLs (MinIO and most S3-compatible stores)

	// The Iceberg catalog of --format iceberg (fundsvc-iceberg).
	IcebergCatalog   string // FUNDSVC_ICEBERG_CATALOG, --iceberg-catalog: sql, glue or rest
	IcebergURI       string // FUNDSVC_ICEBERG_URI, --iceberg-uri: the SQLite file or the REST catalog's URL
	IcebergWarehouse string // FUNDSVC_ICEBERG_WAREHOUSE, --iceberg-warehouse
	IcebergNamespace string // FUNDSVC_ICEBERG_NAMESPACE, --iceberg-namespace
	IcebergCommit    string // FUNDSVC_ICEBERG_COMMIT, --iceberg-commit: atomic or per-table

	// StackFile is the stack file Load read (FUNDSVC_STACK_FILE), empty if
	// none; FromStackFile names the settings it supplied, those that
	// neither a flag nor the environment set.
	StackFile     string
	FromStackFile []string
	stackShown    map[string]string // FromStackFile's values as the notice shows them
}

// The export formats.
const (
	FormatHive    = "hive"
	FormatIceberg = "iceberg"
)

// DefaultStackFile is where make run writes the local stack's settings.
const DefaultStackFile = ".data/stack.env"

// The commands that read settings, as Setting.Commands names them.
const (
	CmdServe  = "serve"
	CmdTable  = "table"
	CmdSeed   = "seed"
	CmdExport = "export"
	CmdDDL    = "ddl"
	CmdToken  = "token"
	CmdImport = "import"
)

// Setting is one thing fundsvc can be configured with: an environment
// variable, perhaps a flag, a default, what it means and which commands
// read it.
type Setting struct {
	Env    string // the environment variable
	AltEnv string // read when Env is not set (AWS_REGION for FUNDSVC_REGION)
	Flag   string // the flag's name without dashes; empty when the setting is environment only
	// Arg names the value in help (DURATION, N, URL, a list of choices).
	Arg string
	// Default is the value when nothing sets it, written as one would set
	// it; when empty, DefaultDoc says what happens instead.
	Default    string
	DefaultDoc string
	Doc        string
	Commands   []string // the commands that read it
	Secret     bool     // never shown, not even in the stack file's notice
	set        func(c *Config, v string) error
}

// For reports whether command reads the setting.
func (s Setting) For(command string) bool { return slices.Contains(s.Commands, command) }

// DefaultText is the default as help shows it.
func (s Setting) DefaultText() string {
	if s.Default != "" {
		return s.Default
	}
	return s.DefaultDoc
}

var (
	dynamoCommands = []string{CmdServe, CmdTable, CmdSeed, CmdExport, CmdImport}
	exportCommands = []string{CmdExport, CmdDDL}
	// writers are the commands that commit documents.
	writers     = []string{CmdServe, CmdSeed, CmdImport}
	allCommands = []string{CmdServe, CmdTable, CmdSeed, CmdExport, CmdDDL, CmdToken, CmdImport}
)

// Settings is every setting, in the order help lists them.
var Settings = []Setting{
	{Env: "FUNDSVC_STACK_FILE", Arg: "FILE", Default: DefaultStackFile, Commands: allCommands,
		Doc: "the local stack's settings (KEY=VALUE lines), which make run writes; each applies when neither its flag nor its variable is set. " +
			"A missing default file is skipped; /dev/null reads none",
		set: func(*Config, string) error { return nil }}, // Load reads it first, to read the others (readStackFile)
	{Env: "FUNDSVC_TABLE", Flag: "table", Arg: "NAME", Default: "fundsvc", Commands: dynamoCommands,
		Doc: "the DynamoDB table", set: str(func(c *Config) *string { return &c.Table })},
	{Env: "FUNDSVC_DYNAMODB_ENDPOINT", Flag: "endpoint", Arg: "URL", Default: "http://127.0.0.1:8000", Commands: dynamoCommands,
		Doc: "the DynamoDB endpoint; empty (--endpoint '') for AWS itself", set: str(func(c *Config) *string { return &c.Endpoint })},
	{Env: "FUNDSVC_REGION", AltEnv: "AWS_REGION", Flag: "region", Arg: "REGION", Default: "us-east-1", Commands: append(slices.Clone(dynamoCommands), CmdDDL),
		Doc: "the AWS region (of DynamoDB, and of S3 and Glue unless FUNDSVC_S3_REGION says otherwise); AWS_REGION when unset",
		set: str(func(c *Config) *string { return &c.Region })},
	{Env: "FUNDSVC_LISTEN", Flag: "listen", Arg: "HOST:PORT", Default: ":8080", Commands: []string{CmdServe},
		Doc: "the HTTP listen address (:8080 is every interface; make run uses 127.0.0.1:8080)", set: str(func(c *Config) *string { return &c.Listen })},
	{Env: "FUNDSVC_LOG_LEVEL", Flag: "log-level", Arg: "debug|info|warn|error", Default: "info", Commands: []string{CmdServe, CmdExport},
		Doc: "the least level logged", set: func(c *Config, v string) error { return c.LogLevel.UnmarshalText([]byte(v)) }},
	{Env: "FUNDSVC_WAIT_FOR_TABLE", Flag: "wait-for-table", Arg: "DURATION", Default: "0s", Commands: []string{CmdServe},
		Doc: "how long serve waits at start for DynamoDB to answer and the table to exist, polling; 0: check once and exit if not",
		set: duration(func(c *Config) *time.Duration { return &c.WaitForTable })},
	{Env: "FUNDSVC_CURSOR_KEY", Arg: "KEY", DefaultDoc: "a random key kept in the table, made by the first instance, so every instance on the table shares it", Commands: []string{CmdServe}, Secret: true,
		Doc: "the key sealing pagination cursors, at least 16 characters", set: str(func(c *Config) *string { return &c.CursorKey })},
	{Env: "FUNDSVC_MAX_BODY_BYTES", Arg: "N", Default: "8388608", Commands: []string{CmdServe},
		Doc: "the largest request body", set: integer(func(c *Config) *int64 { return &c.MaxBodyBytes })},
	{Env: "FUNDSVC_MAX_BODY_BYTES_IN_FLIGHT", Arg: "N", Default: "134217728", Commands: []string{CmdServe},
		Doc: "the bytes of write bodies (PUT, POST, PATCH, DELETE) one process reads or holds at once, each counted at its Content-Length, or at FUNDSVC_MAX_BODY_BYTES without one; " +
			"beyond, 503 with Retry-After (at least FUNDSVC_MAX_BODY_BYTES; 128 MiB is sixteen of the largest bodies)",
		set: integer(func(c *Config) *int64 { return &c.BodiesInFlight })},
	{Env: "FUNDSVC_MAX_WAITING_WRITERS", Arg: "N", Default: "8", Commands: []string{CmdServe},
		Doc: "the writers of one document that may wait in one process behind the one writing it (0 to 10000); the next is answered 503 with Retry-After rather than queued until the write timeout",
		set: integer(func(c *Config) *int { return &c.WaitingWriters })},
	{Env: "FUNDSVC_MAX_POSITIONS", Arg: "N", Default: "5000", Commands: writers,
		Doc: "the most positions of one document (1 to 100000); a document holds at most twice as many items", set: integer(func(c *Config) *int { return &c.MaxPositions })},
	{Env: "FUNDSVC_NAV_STALE_AFTER", Arg: "PnYnMnD", Default: "P3M45D", Commands: []string{CmdServe},
		Doc: "how long a NAV stays fresh after its statement's period end, an ISO 8601 period of calendar months (a year is 12) then days: a performance answer marks its NAV stale when asOf is later " +
			"(P3M45D: one quarter plus 45 days, so a 2025-09-30 statement is fresh through 2026-02-14; docs/analytics.md)",
		set: func(c *Config, v string) error {
			m := isoPeriod.FindStringSubmatch(v)
			if m == nil || v == "P" {
				return fmt.Errorf("%q: want an ISO 8601 period of years, months and days such as P3M45D", v)
			}
			var n [3]int
			for i, part := range m[1:] {
				if part != "" {
					if _, err := fmt.Sscan(part, &n[i]); err != nil || n[i] > 100000 {
						return fmt.Errorf("%q: %s is out of range", v, part)
					}
				}
			}
			c.NAVStaleMonths, c.NAVStaleDays = 12*n[0]+n[1], n[2]
			return nil
		}},
	{Env: "FUNDSVC_REQUEST_TIMEOUT", Arg: "DURATION", Default: "60s", Commands: []string{CmdServe},
		Doc: "the deadline of a read", set: duration(func(c *Config) *time.Duration { return &c.RequestTimeout })},
	{Env: "FUNDSVC_WRITE_TIMEOUT", Arg: "DURATION", Default: "5m", Commands: writers,
		Doc: "the deadline of a write (a restatement of 5,000 positions takes long)", set: duration(func(c *Config) *time.Duration { return &c.WriteTimeout })},
	{Env: "FUNDSVC_READ_HEADER_TIMEOUT", Arg: "DURATION", Default: "10s", Commands: []string{CmdServe},
		Doc: "how long the HTTP server waits for a request's line and headers, from the connection's opening (on a kept-alive connection, from the request's first byte); a client slower is cut off, its connection closed unanswered",
		set: duration(func(c *Config) *time.Duration { return &c.ReadHeaderTimeout })},
	{Env: "FUNDSVC_READ_TIMEOUT", Arg: "DURATION", Default: "60s", Commands: []string{CmdServe},
		Doc: "how long the HTTP server waits for a whole request, headers and body (at least FUNDSVC_READ_HEADER_TIMEOUT); a body still arriving then is not read further and the request is answered 400",
		set: duration(func(c *Config) *time.Duration { return &c.ReadTimeout })},
	{Env: "FUNDSVC_SHUTDOWN_TIMEOUT", Arg: "DURATION", DefaultDoc: "the longer of the request and write timeouts + 10s (5m10s)", Commands: []string{CmdServe},
		Doc: "how long shutdown waits for requests in flight; never shorter than the write timeout",
		set: duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{Env: "FUNDSVC_DRAIN_DELAY", Arg: "DURATION", Default: "0s", Commands: []string{CmdServe},
		Doc: "how long /readyz answers 503 after SIGTERM before new connections are refused (0 to 5m)",
		set: duration(func(c *Config) *time.Duration { return &c.DrainDelay })},
	{Env: "FUNDSVC_RATE_LIMIT", Arg: "N", Default: "100", Commands: []string{CmdServe},
		Doc: "the tokens a second each principal's bucket is refilled with, per process: one a /v1 request, and one more a position or DynamoDB request a fan-out route reads (the OpenAPI description's rate limit); 0: no limit", set: float(func(c *Config) *float64 { return &c.RateLimit })},
	{Env: "FUNDSVC_RATE_BURST", Arg: "N", Default: "200", Commands: []string{CmdServe},
		Doc: "the tokens each principal's bucket holds, per process; a larger charge goes ahead on a bucket holding a token and takes it into debt", set: integer(func(c *Config) *int { return &c.RateBurst })},
	{Env: "FUNDSVC_FANOUT_CONCURRENCY", Arg: "N", Default: "0", Commands: []string{CmdServe},
		Doc: "the most fan-out reads (investor summaries and performance, fund performance, reconciliation pages) one process computes at once, whoever asks; beyond, 503 with Retry-After; 0: twice GOMAXPROCS, at least 4",
		set: integer(func(c *Config) *int { return &c.FanoutConcurrency })},
	{Env: "FUNDSVC_ITEM_MEMO_BYTES", Arg: "N", Default: "67108864", Commands: []string{CmdServe},
		Doc: "the bytes of entries and answers one process holds at most in the position read's memo of its answers to items, keyed by a hash of each item's whole stored content (docs/architecture.md); " +
			"0: no memo, every item is decoded and encoded on every read",
		set: integer(func(c *Config) *int64 { return &c.ItemMemoBytes })},
	{Env: "FUNDSVC_IDEMPOTENCY_LEASE", Arg: "DURATION", DefaultDoc: "the longer of the request and write timeouts (at least 1m) + 10s", Commands: []string{CmdServe},
		Doc: "how long a claimed Idempotency-Key stays locked if its request never finishes",
		set: duration(func(c *Config) *time.Duration { return &c.IdempotencyLease })},
	{Env: "FUNDSVC_IDEMPOTENCY_TTL", Arg: "DURATION", Default: "24h", Commands: []string{CmdServe},
		Doc: "how long a stored answer is replayed for its Idempotency-Key", set: duration(func(c *Config) *time.Duration { return &c.IdempotencyTTL })},
	{Env: "FUNDSVC_CLAIM_LEASE", Arg: "DURATION", DefaultDoc: "the write timeout + 10s", Commands: writers,
		Doc: "how long a write's pending position claims stay its own (docs/commit-protocol.md); longer than the write timeout",
		set: duration(func(c *Config) *time.Duration { return &c.ClaimLease })},
	{Env: "FUNDSVC_CHANGE_SHARDS", Arg: "N", Default: "8", Commands: []string{CmdServe, CmdSeed, CmdExport, CmdImport},
		Doc: "shards of each day of the change index, over which a day's commits spread (1 to 256); it may change at any time, the table records the largest ever used (docs/access-patterns.md)", set: integer(func(c *Config) *int { return &c.ChangeShards })},
	{Env: "FUNDSVC_FEED_SETTLE", Arg: "DURATION", Default: "5m", Commands: []string{CmdServe},
		Doc: "how far the event feed's watermark trails the present, and so webhook delivery: how long a commit may take to show in the feed (its transaction with the SDK's retries, the index's propagation, the clock skew between instances); lower it only for one instance on DynamoDB Local, as make run does (docs/events.md)", set: duration(func(c *Config) *time.Duration { return &c.FeedSettle })},
	{Env: "FUNDSVC_WEBHOOK_SECRET_KEY", Arg: "KEY", DefaultDoc: "none: the webhook routes answer 503 and nothing is delivered", Commands: []string{CmdServe}, Secret: true,
		Doc: "32 bytes in base64 (openssl rand -base64 32) encrypting webhook signing secrets at rest (AES-256-GCM); every instance needs the same", set: str(func(c *Config) *string { return &c.WebhookSecretKey })},
	{Env: "FUNDSVC_WEBHOOK_ALLOW_LOOPBACK", Arg: "BOOL", Default: "false", Commands: []string{CmdServe},
		Doc: "development only: accept http:// webhook URLs of loopback hosts and deliver to loopback addresses (private, link-local and metadata addresses stay refused)", set: boolean(func(c *Config) *bool { return &c.WebhookAllowLoopback })},
	{Env: "FUNDSVC_WEBHOOK_RETRY_SCHEDULE", Arg: "DURATIONS", Default: "0s,5s,5m,30m,2h,5h,10h,14h,20h,24h", Commands: []string{CmdServe},
		Doc: "the wait before each retry of a failed delivery, comma-separated (each with up to 10% jitter; a longer Retry-After wins); when they run out the delivery is failed", set: func(c *Config, v string) error {
			c.WebhookSchedule = nil
			for _, part := range strings.Split(v, ",") {
				d, err := time.ParseDuration(strings.TrimSpace(part))
				if err != nil || d < 0 {
					return fmt.Errorf("%q is not a duration", part)
				}
				c.WebhookSchedule = append(c.WebhookSchedule, d)
			}
			return nil
		}},
	{Env: "FUNDSVC_WEBHOOK_TIMEOUT", Arg: "DURATION", Default: "15s", Commands: []string{CmdServe},
		Doc: "the deadline of one delivery attempt", set: duration(func(c *Config) *time.Duration { return &c.WebhookTimeout })},
	{Env: "FUNDSVC_WEBHOOK_LEASE", Arg: "DURATION", DefaultDoc: "the webhook timeout + 15s", Commands: []string{CmdServe},
		Doc: "how long a claimed delivery is one instance's before another may take it over (a killed instance's work waits this long)", set: duration(func(c *Config) *time.Duration { return &c.WebhookLease })},
	{Env: "FUNDSVC_WEBHOOK_POLL", Arg: "DURATION", Default: "500ms", Commands: []string{CmdServe},
		Doc: "how often each instance looks for events to deliver", set: duration(func(c *Config) *time.Duration { return &c.WebhookPoll })},
	{Env: "FUNDSVC_WEBHOOK_DISABLE_AFTER", Arg: "DURATION", Default: "120h", Commands: []string{CmdServe},
		Doc: "how long an endpoint may fail every attempt before it is disabled (it says why; PATCH enabled re-enables it)", set: duration(func(c *Config) *time.Duration { return &c.WebhookDisableAfter })},
	{Env: "FUNDSVC_WEBHOOK_MAX_ENDPOINTS", Arg: "N", Default: "10", Commands: []string{CmdServe},
		Doc: "the most webhook endpoints naming one fund (1 to 1000): an endpoint of several funds counts once for each, and the endpoints of every fund (no funds named) have a count of their own; beyond, POST and PATCH answer 409 /problems/limit_exceeded",
		set: integer(func(c *Config) *int { return &c.WebhookMaxEndpoints })},
	{Env: "FUNDSVC_JWT_HS256_SECRET", Arg: "SECRET", DefaultDoc: "none; serve needs it or FUNDSVC_JWT_JWKS_FILE (make run makes one)", Commands: []string{CmdServe, CmdToken}, Secret: true,
		Doc: "the HS256 token secret, at least 32 bytes", set: str(func(c *Config) *string { return &c.JWTSecret })},
	{Env: "FUNDSVC_JWT_JWKS_FILE", Arg: "FILE", DefaultDoc: "none", Commands: []string{CmdServe},
		Doc: "a JWKS file of RS256/ES256 public keys (needs FUNDSVC_JWT_AUDIENCE)", set: str(func(c *Config) *string { return &c.JWKSFile })},
	{Env: "FUNDSVC_JWT_JWKS_REFRESH", Arg: "DURATION", Default: "5m", Commands: []string{CmdServe},
		Doc: "how often the JWKS file is re-read (also on an unknown kid, at most every 10s; 1s to 24h)",
		set: duration(func(c *Config) *time.Duration { return &c.JWKSRefresh })},
	{Env: "FUNDSVC_JWT_MAX_LIFETIME", Arg: "DURATION", Default: "24h", Commands: []string{CmdServe, CmdToken},
		Doc: "the longest token lifetime, exp - iat (1m to 720h)", set: duration(func(c *Config) *time.Duration { return &c.JWTMaxLifetime })},
	{Env: "FUNDSVC_JWT_ISSUER", Arg: "ISS", DefaultDoc: "unchecked", Commands: []string{CmdServe, CmdToken},
		Doc: "the iss tokens must carry", set: str(func(c *Config) *string { return &c.JWTIssuer })},
	{Env: "FUNDSVC_JWT_AUDIENCE", Arg: "AUD", DefaultDoc: "unchecked; required with FUNDSVC_JWT_JWKS_FILE", Commands: []string{CmdServe, CmdToken},
		Doc: "the aud tokens must carry", set: str(func(c *Config) *string { return &c.JWTAudience })},
	{Env: "FUNDSVC_JWT_LEEWAY", Arg: "DURATION", Default: "30s", Commands: []string{CmdServe},
		Doc: "the clock skew allowed on exp, iat and nbf (0 to 5m)", set: duration(func(c *Config) *time.Duration { return &c.JWTLeeway })},
	{Env: "FUNDSVC_PUBLIC_METRICS", Arg: "BOOL", Default: "false", Commands: []string{CmdServe},
		Doc: "/metrics on the API's listener without a token; otherwise it needs an admin token of every fund, as its series count every fund's activity",
		set: boolean(func(c *Config) *bool { return &c.PublicMetrics })},
	{Env: "FUNDSVC_METRICS_LISTEN", Flag: "metrics-listen", Arg: "HOST:PORT", DefaultDoc: "none", Commands: []string{CmdServe},
		Doc: "a second listener, for Prometheus on a private network (such as 127.0.0.1:9464), serving GET /metrics alone, without a token",
		set: str(func(c *Config) *string { return &c.MetricsListen })},
	{Env: "FUNDSVC_PUBLIC_OPENAPI", Arg: "BOOL", Default: "true", Commands: []string{CmdServe},
		Doc: "/openapi.json and /docs without a token", set: boolean(func(c *Config) *bool { return &c.PublicOpenAPI })},
	{Env: "FUNDSVC_TRUSTED_PROXIES", Arg: "CIDRS", DefaultDoc: "none", Commands: []string{CmdServe},
		Doc: "comma-separated IPs or CIDRs of the proxies whose X-Forwarded-For is believed", set: list(func(c *Config) *[]string { return &c.TrustedProxies })},
	{Env: "FUNDSVC_EXPORT_DEST", Flag: "dest", Arg: "s3://BUCKET/PREFIX|DIR", Default: "fundsvc-export", Commands: exportCommands,
		Doc: "where snapshots go: an S3 prefix or a local directory", set: str(func(c *Config) *string { return &c.ExportDest })},
	{Env: "FUNDSVC_EXPORT_SEGMENTS", Flag: "segments", Arg: "N", Default: "4", Commands: []string{CmdExport},
		Doc: "parallel Scan segments of a full export (1 to 1000)", set: integer(func(c *Config) *int { return &c.ExportSegments })},
	{Env: "FUNDSVC_EXPORT_FILE_BYTES", Flag: "file-bytes", Arg: "N", Default: "134217728", Commands: []string{CmdExport},
		Doc: "roll Parquet files near this size", set: integer(func(c *Config) *int64 { return &c.ExportFileBytes })},
	{Env: "FUNDSVC_EXPORT_COMPRESSION", Flag: "compression", Arg: "zstd|snappy", Default: "zstd", Commands: []string{CmdExport},
		Doc: "Parquet compression", set: str(func(c *Config) *string { return &c.ExportCompression })},
	{Env: "FUNDSVC_EXPORT_FORMAT", Flag: "format", Arg: "hive|iceberg", Default: FormatHive, Commands: exportCommands,
		Doc: "hive: dated snapshots with symlink tables and a manifest; iceberg: Apache Iceberg tables in the catalog below (run by fundsvc-iceberg, which make build builds)",
		set: str(func(c *Config) *string { return &c.ExportFormat })},
	{Env: "FUNDSVC_S3_ENDPOINT", Arg: "URL", DefaultDoc: "AWS", Commands: exportCommands,
		Doc: "an S3-compatible endpoint such as http://127.0.0.1:9000 (MinIO); S3 credentials come from the standard AWS chain (AWS_ACCESS_KEY_ID, profiles, roles)",
		set: str(func(c *Config) *string { return &c.S3Endpoint })},
	{Env: "FUNDSVC_S3_REGION", Arg: "REGION", DefaultDoc: "the region (--region)", Commands: exportCommands,
		Doc: "the S3 region", set: str(func(c *Config) *string { return &c.S3Region })},
	{Env: "FUNDSVC_S3_PATH_STYLE", Arg: "BOOL", Default: "false", Commands: exportCommands,
		Doc: "path-style S3 URLs (MinIO and most S3-compatible stores)", set: boolean(func(c *Config) *bool { return &c.S3PathStyle })},
	{Env: "FUNDSVC_ICEBERG_CATALOG", Flag: "iceberg-catalog", Arg: "sql|glue|rest", Default: "sql", Commands: exportCommands,
		Doc: "the Iceberg catalog: sql (a SQLite file), glue, or rest (S3 Tables and others)", set: str(func(c *Config) *string { return &c.IcebergCatalog })},
	{Env: "FUNDSVC_ICEBERG_URI", Flag: "iceberg-uri", Arg: "FILE|URL",
		DefaultDoc: "for sql, DEST/_iceberg/catalog.db beside a local export (0600); an export to S3 must name one, a file the next run finds again",
		Doc:        "the SQL catalog's SQLite file, or the REST catalog's URL", Commands: exportCommands,
		set: str(func(c *Config) *string { return &c.IcebergURI })},
	{Env: "FUNDSVC_ICEBERG_WAREHOUSE", Flag: "iceberg-warehouse", Arg: "WAREHOUSE", DefaultDoc: "none", Commands: exportCommands,
		Doc: "the REST catalog's warehouse (S3 Tables: the table bucket ARN)", set: str(func(c *Config) *string { return &c.IcebergWarehouse })},
	{Env: "FUNDSVC_ICEBERG_NAMESPACE", Flag: "iceberg-namespace", Arg: "NAME", Default: "fundsvc", Commands: exportCommands,
		Doc: "the namespace (Glue database) of the Iceberg tables", set: str(func(c *Config) *string { return &c.IcebergNamespace })},
	{Env: "FUNDSVC_ICEBERG_COMMIT", Flag: "iceberg-commit", Arg: "atomic|per-table", Default: "atomic", Commands: []string{CmdExport},
		Doc: "atomic: every table in one commit (sql, and rest with transactions/commit); per-table, which glue needs: " +
			"a run failing between tables leaves them on different runs until the date is exported again",
		set: str(func(c *Config) *string { return &c.IcebergCommit })},
}
