// Package config loads fundsvc's configuration: flags override environment
// variables, which override the local stack's file (.data/stack.env, written
// by make run), which overrides the defaults. Every setting is declared once,
// in Settings, from which Load, the flags, the commands' help and the
// README's table are derived.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
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
	{Env: "FUNDSVC_MAX_BODY_BYTES", Arg: "N", Default: "16777216", Commands: []string{CmdServe},
		Doc: "the largest request body", set: integer(func(c *Config) *int64 { return &c.MaxBodyBytes })},
	{Env: "FUNDSVC_MAX_BODY_BYTES_IN_FLIGHT", Arg: "N", Default: "134217728", Commands: []string{CmdServe},
		Doc: "the bytes of write bodies (PUT, POST, PATCH, DELETE) one process reads or holds at once, each counted at its Content-Length, or at FUNDSVC_MAX_BODY_BYTES without one; " +
			"beyond, 503 with Retry-After (at least FUNDSVC_MAX_BODY_BYTES; 128 MiB is eight of the largest bodies)",
		set: integer(func(c *Config) *int64 { return &c.BodiesInFlight })},
	{Env: "FUNDSVC_MAX_WAITING_WRITERS", Arg: "N", Default: "8", Commands: []string{CmdServe},
		Doc: "the writers of one document that may wait in one process behind the one writing it (0 to 10000); the next is answered 503 with Retry-After rather than queued until the write timeout",
		set: integer(func(c *Config) *int { return &c.WaitingWriters })},
	{Env: "FUNDSVC_MAX_POSITIONS", Arg: "N", Default: "5000", Commands: writers,
		Doc: "the most positions of one document (1 to 100000)", set: integer(func(c *Config) *int { return &c.MaxPositions })},
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

func str(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = v; return nil }
}

func duration(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) (err error) { *field(c), err = time.ParseDuration(v); return err }
}

func integer[T int | int64](field func(*Config) *T) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		*field(c) = T(n)
		return nil
	}
}

func float(field func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) (err error) { *field(c), err = strconv.ParseFloat(v, 64); return err }
}

func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) (err error) { *field(c), err = strconv.ParseBool(v); return err }
}

func list(field func(*Config) *[]string) func(*Config, string) error {
	return func(c *Config, v string) error {
		*field(c) = nil
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*field(c) = append(*field(c), p)
			}
		}
		return nil
	}
}

// Default returns the configuration used when nothing is set: DynamoDB Local
// on its usual port, so a newcomer needs no cloud account.
func Default() Config {
	c := Config{DefaultPageLimit: 100, MaxPageLimit: 1000}
	for _, s := range Settings {
		if s.Default != "" {
			if err := s.set(&c, s.Default); err != nil {
				panic(fmt.Sprintf("config: the default of %s: %v", s.Env, err)) // a wrong table, held by TestDefaultsParse
			}
		}
	}
	c.ShutdownTimeout = max(c.RequestTimeout, c.WriteTimeout) + shutdownMargin
	return c
}

// Load reads the settings command uses (Setting.Commands) from the
// environment through getenv, then from the stack file for those the
// environment leaves unset, then parses args, whose flags override both, and
// validates the result. It returns the remaining positional arguments. A
// command adds flags of its own through more; Load's error for -h or --help
// is flag.ErrHelp.
func Load(getenv func(string) string, args []string, command string, more ...func(*flag.FlagSet, *Config)) (Config, []string, error) {
	c := Default()
	var errs []error
	given := map[string]bool{} // by variable: set by the environment, the stack file or a flag
	stack, stackPath, err := readStackFile(getenv, command)
	if err != nil {
		errs = append(errs, err)
	}
	for _, s := range Settings {
		if !s.For(command) || s.Env == "FUNDSVC_STACK_FILE" {
			continue
		}
		v, from := strings.TrimSpace(getenv(s.Env)), ""
		if v == "" && s.AltEnv != "" {
			v = strings.TrimSpace(getenv(s.AltEnv))
		}
		if v == "" {
			if v = stack[s.Env]; v != "" {
				from = "stack"
			}
		}
		if v == "" {
			continue
		}
		given[s.Env] = true
		if err := s.set(&c, v); err != nil {
			if from == "stack" {
				errs = append(errs, fmt.Errorf("%s (from %s): %w", s.Env, stackPath, err))
			} else {
				errs = append(errs, fmt.Errorf("%s: %w", s.Env, err))
			}
			continue
		}
		if from == "stack" {
			c.FromStackFile = append(c.FromStackFile, s.Env)
			if c.stackShown == nil {
				c.stackShown = map[string]string{}
			}
			c.stackShown[s.Env] = v
			if s.Secret {
				c.stackShown[s.Env] = "(secret)"
			}
		}
	}

	fs := flag.NewFlagSet("fundsvc "+command, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	RegisterFlags(fs, &c, command)
	for _, add := range more {
		add(fs, &c)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, err
		}
		return c, nil, fmt.Errorf("fundsvc %s: %w", command, err)
	}
	if len(errs) > 0 {
		return c, nil, errors.Join(errs...)
	}
	fs.Visit(func(f *flag.Flag) {
		if s, ok := SettingOfFlag(f.Name); ok {
			given[s.Env] = true
			c.FromStackFile = slices.DeleteFunc(c.FromStackFile, func(env string) bool { return env == s.Env })
		}
	})
	if !given["FUNDSVC_SHUTDOWN_TIMEOUT"] {
		// A request in flight when shutdown begins may run for its whole
		// timeout; the grace covers the longest, so SIGTERM never cuts off
		// a restatement.
		c.ShutdownTimeout = max(c.RequestTimeout, c.WriteTimeout) + shutdownMargin
	}
	if len(c.FromStackFile) > 0 {
		c.StackFile = stackPath
	}
	return c, fs.Args(), c.Validate()
}

// RegisterFlags defines on fs the flags of the settings command reads,
// each setting its field of c.
func RegisterFlags(fs *flag.FlagSet, c *Config, command string) {
	for i := range Settings {
		if s := &Settings[i]; s.Flag != "" && s.For(command) {
			fs.Var(settingValue{s, c}, s.Flag, s.Doc)
		}
	}
}

// settingValue is a setting's flag.
type settingValue struct {
	s *Setting
	c *Config
}

func (v settingValue) String() string     { return "" }
func (v settingValue) Set(x string) error { return v.s.set(v.c, x) }

// SettingOfFlag returns the setting whose flag is name, if there is one.
func SettingOfFlag(name string) (Setting, bool) {
	for _, s := range Settings {
		if s.Flag == name {
			return s, true
		}
	}
	return Setting{}, false
}

// readStackFile reads the stack file FUNDSVC_STACK_FILE names (default
// DefaultStackFile, skipped when missing) if command reads one: KEY=VALUE
// lines of the settings' variables, blank lines and # comments. It returns
// nil when there is none.
func readStackFile(getenv func(string) string, command string) (map[string]string, string, error) {
	if !slices.Contains(allCommands, command) {
		return nil, "", nil
	}
	path := strings.TrimSpace(getenv("FUNDSVC_STACK_FILE"))
	explicit := path != ""
	if !explicit {
		path = DefaultStackFile
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("FUNDSVC_STACK_FILE: %w", err)
	}
	known := map[string]bool{}
	for _, s := range Settings {
		known[s.Env] = true
	}
	vars := map[string]string{}
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		switch {
		case !ok:
			return nil, "", fmt.Errorf("stack file %s, line %d: want KEY=VALUE", path, n+1)
		case !known[k] || k == "FUNDSVC_STACK_FILE":
			return nil, "", fmt.Errorf("stack file %s, line %d: %s is no setting of fundsvc", path, n+1, k)
		}
		vars[k] = strings.TrimSpace(v)
	}
	return vars, path, nil
}

// StackNotice is the line a command writes to standard error when it used
// the stack file: which settings came from it, secrets left out.
func (c Config) StackNotice() string {
	if c.StackFile == "" {
		return ""
	}
	var parts []string
	for _, env := range c.FromStackFile {
		parts = append(parts, env+"="+c.stackShown[env])
	}
	return fmt.Sprintf("fundsvc: using the stack file %s (make run's local stack; a flag or variable overrides it): %s", c.StackFile, strings.Join(parts, ", "))
}

// shutdownMargin is what the default shutdown grace adds to the longest
// request timeout: time to write the answer and close the connection.
const shutdownMargin = 10 * time.Second

// isoPeriod is an ISO 8601 period of years, months and days (P1Y, P3M45D).
var isoPeriod = regexp.MustCompile(`^P(?:([0-9]{1,6})Y)?(?:([0-9]{1,6})M)?(?:([0-9]{1,6})D)?$`)

var tableName = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)

// Validate reports every setting that cannot work, each with what to fix.
func (c Config) Validate() error {
	var errs []error
	if !tableName.MatchString(c.Table) {
		errs = append(errs, fmt.Errorf("table %q: a DynamoDB table name is 3-255 of A-Z a-z 0-9 _ . -", c.Table))
	}
	if c.Endpoint != "" {
		if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("endpoint %q: want an http(s) URL such as http://127.0.0.1:8000, or empty for AWS", c.Endpoint))
		}
	}
	if c.Region == "" {
		errs = append(errs, errors.New("region: required (for example us-east-1)"))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("listen %q: want host:port such as :8080", c.Listen))
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			errs = append(errs, fmt.Errorf("metrics listen %q: want host:port such as 127.0.0.1:9464 (FUNDSVC_METRICS_LISTEN, --metrics-listen)", c.MetricsListen))
		}
	}
	if c.WaitForTable < 0 {
		errs = append(errs, fmt.Errorf("wait for table %s: want 0 or more (FUNDSVC_WAIT_FOR_TABLE, --wait-for-table)", c.WaitForTable))
	}
	if c.MaxBodyBytes < 1024 {
		errs = append(errs, fmt.Errorf("max body bytes %d: want at least 1024", c.MaxBodyBytes))
	}
	if c.BodiesInFlight < c.MaxBodyBytes {
		errs = append(errs, fmt.Errorf("max body bytes in flight %d: want at least the largest body, FUNDSVC_MAX_BODY_BYTES (%d), or that body is never accepted (FUNDSVC_MAX_BODY_BYTES_IN_FLIGHT)", c.BodiesInFlight, c.MaxBodyBytes))
	}
	if c.WaitingWriters < 0 || c.WaitingWriters > 10000 {
		errs = append(errs, fmt.Errorf("max waiting writers %d: want 0 to 10000 (FUNDSVC_MAX_WAITING_WRITERS)", c.WaitingWriters))
	}
	if c.NAVStaleMonths < 0 || c.NAVStaleDays < 0 || c.NAVStaleMonths > 1200 || c.NAVStaleDays > 36600 {
		errs = append(errs, fmt.Errorf("NAV stale after %d months and %d days: want at most 100 years (FUNDSVC_NAV_STALE_AFTER)", c.NAVStaleMonths, c.NAVStaleDays))
	}
	if c.MaxPositions < 1 || c.MaxPositions > 100000 {
		errs = append(errs, fmt.Errorf("max positions %d: want 1 to 100000", c.MaxPositions))
	}
	if c.ShutdownTimeout <= 0 || c.RequestTimeout <= 0 || c.WriteTimeout <= 0 {
		errs = append(errs, errors.New("timeouts must be positive durations such as 20s"))
	}
	if c.ReadHeaderTimeout <= 0 || c.ReadTimeout < c.ReadHeaderTimeout {
		errs = append(errs, fmt.Errorf("read header timeout %s, read timeout %s: want a positive header timeout no longer than the read timeout, which covers the headers too (FUNDSVC_READ_HEADER_TIMEOUT, FUNDSVC_READ_TIMEOUT)",
			c.ReadHeaderTimeout, c.ReadTimeout))
	}
	if c.FeedSettle <= 0 {
		errs = append(errs, fmt.Errorf("feed settle %s: want a positive duration such as 5m (FUNDSVC_FEED_SETTLE)", c.FeedSettle))
	}
	if c.WebhookTimeout <= 0 || c.WebhookPoll <= 0 || c.WebhookDisableAfter <= 0 || len(c.WebhookSchedule) == 0 {
		errs = append(errs, errors.New("webhooks: FUNDSVC_WEBHOOK_TIMEOUT, FUNDSVC_WEBHOOK_POLL and FUNDSVC_WEBHOOK_DISABLE_AFTER must be positive and FUNDSVC_WEBHOOK_RETRY_SCHEDULE not empty"))
	}
	if c.WebhookMaxEndpoints < 1 || c.WebhookMaxEndpoints > 1000 {
		errs = append(errs, fmt.Errorf("webhook max endpoints %d: want 1 to 1000 (FUNDSVC_WEBHOOK_MAX_ENDPOINTS)", c.WebhookMaxEndpoints))
	}
	if c.WebhookLease != 0 && c.WebhookLease <= c.WebhookTimeout {
		errs = append(errs, fmt.Errorf("webhook lease %s: must be longer than the webhook timeout %s, so no attempt outlives its claim", c.WebhookLease, c.WebhookTimeout))
	}
	if c.ClaimLease != 0 && c.ClaimLease <= c.WriteTimeout {
		errs = append(errs, fmt.Errorf("claim lease %s is not longer than the write timeout %s: a slow write could lose its position claims to another investor's and fail; "+
			"raise FUNDSVC_CLAIM_LEASE (unset, it is the write timeout plus 10s)", c.ClaimLease, c.WriteTimeout))
	}
	if c.ShutdownTimeout > 0 && c.ShutdownTimeout < c.WriteTimeout {
		errs = append(errs, fmt.Errorf("shutdown timeout %s is shorter than the write timeout %s: a restatement in flight at shutdown would be cut off; "+
			"raise FUNDSVC_SHUTDOWN_TIMEOUT (unset, it is the longer of the request and write timeouts plus 10s) or lower FUNDSVC_WRITE_TIMEOUT",
			c.ShutdownTimeout, c.WriteTimeout))
	}
	if c.DrainDelay < 0 || c.DrainDelay > 5*time.Minute {
		errs = append(errs, errors.New("drain delay: between 0 and 5m (FUNDSVC_DRAIN_DELAY)"))
	}
	if math.IsNaN(c.RateLimit) || c.RateLimit < 0 || c.RateLimit > 1e6 {
		errs = append(errs, errors.New("rate limit: requests a second per principal, from 0 (no limit) to 1000000 (FUNDSVC_RATE_LIMIT)"))
	}
	if c.RateLimit > 0 && (c.RateBurst < 1 || c.RateBurst > 1e6) {
		errs = append(errs, fmt.Errorf("rate burst %d: want 1 to 1000000 requests (FUNDSVC_RATE_BURST)", c.RateBurst))
	}
	if c.FanoutConcurrency < 0 || c.FanoutConcurrency > 10000 {
		errs = append(errs, fmt.Errorf("fan-out concurrency %d: want 0 (twice GOMAXPROCS) to 10000 (FUNDSVC_FANOUT_CONCURRENCY)", c.FanoutConcurrency))
	}
	if c.ItemMemoBytes < 0 || c.ItemMemoBytes > 1<<40 {
		errs = append(errs, fmt.Errorf("item memo %d bytes: want 0 (no memo) to 1099511627776 (FUNDSVC_ITEM_MEMO_BYTES)", c.ItemMemoBytes))
	}
	if c.CursorKey != "" && len(c.CursorKey) < 16 {
		errs = append(errs, errors.New("cursor key: at least 16 characters"))
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		errs = append(errs, errors.New("JWT secret: at least 32 bytes (FUNDSVC_JWT_HS256_SECRET)"))
	}
	if c.JWKSFile != "" && c.JWTAudience == "" {
		errs = append(errs, errors.New("FUNDSVC_JWT_JWKS_FILE is set but FUNDSVC_JWT_AUDIENCE is not: with a JWKS, tokens must carry in aud "+
			"the audience this service is known by at the identity provider, or a token it issued to another service would be accepted; set FUNDSVC_JWT_AUDIENCE"))
	}
	if c.JWTLeeway < 0 || c.JWTLeeway > 5*time.Minute {
		errs = append(errs, errors.New("JWT leeway: between 0 and 5m"))
	}
	if c.JWKSRefresh < time.Second || c.JWKSRefresh > 24*time.Hour {
		errs = append(errs, errors.New("JWKS refresh: between 1s and 24h (FUNDSVC_JWT_JWKS_REFRESH)"))
	}
	if c.JWTMaxLifetime < time.Minute || c.JWTMaxLifetime > 30*24*time.Hour {
		errs = append(errs, errors.New("JWT max lifetime: between 1m and 720h (FUNDSVC_JWT_MAX_LIFETIME)"))
	}
	if c.ChangeShards < 1 || c.ChangeShards > 256 {
		errs = append(errs, fmt.Errorf("change shards %d: want 1 to 256 (FUNDSVC_CHANGE_SHARDS)", c.ChangeShards))
	}
	if c.ExportSegments < 1 || c.ExportSegments > 1000 {
		errs = append(errs, fmt.Errorf("export segments %d: want 1 to 1000", c.ExportSegments))
	}
	if c.ExportFileBytes < 1<<10 {
		errs = append(errs, fmt.Errorf("export file bytes %d: want at least 1024", c.ExportFileBytes))
	}
	if c.ExportCompression != "zstd" && c.ExportCompression != "snappy" {
		errs = append(errs, fmt.Errorf("export compression %q: want zstd or snappy", c.ExportCompression))
	}
	if c.ExportFormat != FormatHive && c.ExportFormat != FormatIceberg {
		errs = append(errs, fmt.Errorf("--format %q: want hive or iceberg (FUNDSVC_EXPORT_FORMAT)", c.ExportFormat))
	}
	if c.ExportDest == "" {
		errs = append(errs, errors.New("export destination: want s3://bucket/prefix or a directory"))
	}
	if c.S3Endpoint != "" {
		if u, err := url.Parse(c.S3Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("S3 endpoint %q: want an http(s) URL, or empty for AWS", c.S3Endpoint))
		}
	}
	for _, p := range c.TrustedProxies {
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				errs = append(errs, fmt.Errorf("trusted proxy %q: want an IP or a CIDR", p))
			}
		}
	}
	return errors.Join(errs...)
}
