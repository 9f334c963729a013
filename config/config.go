// Package config loads fundsvc's configuration from environment variables,
// with command-line flags overriding them.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"regexp"
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
	CursorKey        string        // FUNDSVC_CURSOR_KEY: signs pagination cursors; random per process if empty
	MaxBodyBytes     int64         // FUNDSVC_MAX_BODY_BYTES
	MaxPositions     int           // FUNDSVC_MAX_POSITIONS
	ShutdownTimeout  time.Duration // FUNDSVC_SHUTDOWN_TIMEOUT: default the longer of the request and write timeouts plus 10s
	DrainDelay       time.Duration // FUNDSVC_DRAIN_DELAY: how long /readyz fails before the listener closes
	RequestTimeout   time.Duration // FUNDSVC_REQUEST_TIMEOUT: the deadline of a read
	WriteTimeout     time.Duration // FUNDSVC_WRITE_TIMEOUT: the deadline of a write (a large restatement takes longer)
	DefaultPageLimit int
	MaxPageLimit     int

	// Bearer tokens (see the README's security section).
	JWTSecret      string        // FUNDSVC_JWT_HS256_SECRET: HS256 secret, at least 32 bytes
	JWKSFile       string        // FUNDSVC_JWT_JWKS_FILE: RS256/ES256 public keys
	JWKSRefresh    time.Duration // FUNDSVC_JWT_JWKS_REFRESH: how often the JWKS file is re-read
	JWTMaxLifetime time.Duration // FUNDSVC_JWT_MAX_LIFETIME: longest exp - iat accepted
	JWTIssuer      string        // FUNDSVC_JWT_ISSUER: required iss, when set
	JWTAudience    string        // FUNDSVC_JWT_AUDIENCE: required aud, when set
	JWTLeeway      time.Duration // FUNDSVC_JWT_LEEWAY: clock skew allowed
	PublicMetrics  bool          // FUNDSVC_PUBLIC_METRICS: /metrics without a token
	PublicOpenAPI  bool          // FUNDSVC_PUBLIC_OPENAPI: /openapi.json without a token
	TrustedProxies []string      // FUNDSVC_TRUSTED_PROXIES: comma-separated CIDRs or IPs

	// Per-principal rate limit of /v1, per process (see the README).
	RateLimit float64 // FUNDSVC_RATE_LIMIT: requests a second per principal; 0 disables
	RateBurst int     // FUNDSVC_RATE_BURST: requests at once per principal

	IdempotencyLease time.Duration // FUNDSVC_IDEMPOTENCY_LEASE: default max(request timeout, 1m) + 10s
	ClaimLease       time.Duration // FUNDSVC_CLAIM_LEASE: how long a write's pending position claims are safe; default write timeout + 10s
	IdempotencyTTL   time.Duration // FUNDSVC_IDEMPOTENCY_TTL: default 24h
	ChangeShards     int           // FUNDSVC_CHANGE_SHARDS: shards of each day of the change index (store.ChangeShards)

	// The nightly export (fundsvc export, fundsvc ddl).
	ExportDest        string // FUNDSVC_EXPORT_DEST, --dest: s3://bucket/prefix or a directory
	ExportSegments    int    // FUNDSVC_EXPORT_SEGMENTS, --segments: parallel Scan segments
	ExportFileBytes   int64  // FUNDSVC_EXPORT_FILE_BYTES, --file-bytes: roll Parquet files near this size
	ExportCompression string // FUNDSVC_EXPORT_COMPRESSION, --compression: zstd or snappy
	S3Endpoint        string // FUNDSVC_S3_ENDPOINT: S3-compatible endpoint; empty for AWS
	S3Region          string // FUNDSVC_S3_REGION: default the DynamoDB region
	S3PathStyle       bool   // FUNDSVC_S3_PATH_STYLE: path-style URLs (MinIO and most S3-compatible stores)
}

// Default returns the configuration used when nothing is set: DynamoDB Local
// on its usual port, so a newcomer needs no cloud account.
func Default() Config {
	return Config{
		Table:            "fundsvc",
		Endpoint:         "http://127.0.0.1:8000",
		Region:           "us-east-1",
		Listen:           ":8080",
		LogLevel:         slog.LevelInfo,
		MaxBodyBytes:     16 << 20,
		MaxPositions:     5000,
		ShutdownTimeout:  5*time.Minute + shutdownMargin, // Load derives it from the timeouts when not set
		RequestTimeout:   60 * time.Second,
		WriteTimeout:     5 * time.Minute,
		DefaultPageLimit: 100,
		MaxPageLimit:     1000,
		JWTLeeway:        30 * time.Second,
		JWKSRefresh:      5 * time.Minute,
		JWTMaxLifetime:   24 * time.Hour,
		PublicMetrics:    true,
		PublicOpenAPI:    true,
		RateLimit:        100,
		RateBurst:        200,
		ChangeShards:     8,

		ExportDest:        "fundsvc-export",
		ExportSegments:    4,
		ExportFileBytes:   128 << 20,
		ExportCompression: "zstd",
	}
}

// Load reads the environment through getenv, then parses args (flags
// override the environment), and validates the result. It returns the
// remaining positional arguments. A command adds flags of its own through
// more, which runs once the environment has been read.
func Load(getenv func(string) string, args []string, name string, more ...func(*flag.FlagSet, *Config)) (Config, []string, error) {
	c := Default()
	var errs []error
	env := func(key string, apply func(string) error) {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			if err := apply(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", key, err))
			}
		}
	}
	str := func(p *string) func(string) error { return func(v string) error { *p = v; return nil } }
	env("FUNDSVC_TABLE", str(&c.Table))
	env("FUNDSVC_DYNAMODB_ENDPOINT", str(&c.Endpoint))
	env("AWS_REGION", str(&c.Region))
	env("FUNDSVC_REGION", str(&c.Region))
	env("FUNDSVC_LISTEN", str(&c.Listen))
	env("FUNDSVC_LOG_LEVEL", func(v string) error { return c.LogLevel.UnmarshalText([]byte(v)) })
	env("FUNDSVC_CURSOR_KEY", str(&c.CursorKey))
	env("FUNDSVC_MAX_BODY_BYTES", func(v string) (err error) { c.MaxBodyBytes, err = strconv.ParseInt(v, 10, 64); return })
	env("FUNDSVC_MAX_POSITIONS", func(v string) (err error) { c.MaxPositions, err = strconv.Atoi(v); return })
	env("FUNDSVC_SHUTDOWN_TIMEOUT", func(v string) (err error) { c.ShutdownTimeout, err = time.ParseDuration(v); return })
	env("FUNDSVC_REQUEST_TIMEOUT", func(v string) (err error) { c.RequestTimeout, err = time.ParseDuration(v); return })
	env("FUNDSVC_WRITE_TIMEOUT", func(v string) (err error) { c.WriteTimeout, err = time.ParseDuration(v); return })
	if strings.TrimSpace(getenv("FUNDSVC_SHUTDOWN_TIMEOUT")) == "" {
		// A request in flight when shutdown begins may run for its whole
		// timeout; the grace covers the longest, so SIGTERM never cuts off
		// a restatement.
		c.ShutdownTimeout = max(c.RequestTimeout, c.WriteTimeout) + shutdownMargin
	}
	env("FUNDSVC_DRAIN_DELAY", func(v string) (err error) { c.DrainDelay, err = time.ParseDuration(v); return })
	env("FUNDSVC_RATE_LIMIT", func(v string) (err error) { c.RateLimit, err = strconv.ParseFloat(v, 64); return })
	env("FUNDSVC_RATE_BURST", func(v string) (err error) { c.RateBurst, err = strconv.Atoi(v); return })
	env("FUNDSVC_IDEMPOTENCY_LEASE", func(v string) (err error) { c.IdempotencyLease, err = time.ParseDuration(v); return })
	env("FUNDSVC_CLAIM_LEASE", func(v string) (err error) { c.ClaimLease, err = time.ParseDuration(v); return })
	env("FUNDSVC_IDEMPOTENCY_TTL", func(v string) (err error) { c.IdempotencyTTL, err = time.ParseDuration(v); return })
	env("FUNDSVC_CHANGE_SHARDS", func(v string) (err error) { c.ChangeShards, err = strconv.Atoi(v); return })
	env("FUNDSVC_JWT_HS256_SECRET", str(&c.JWTSecret))
	env("FUNDSVC_JWT_JWKS_FILE", str(&c.JWKSFile))
	env("FUNDSVC_JWT_ISSUER", str(&c.JWTIssuer))
	env("FUNDSVC_JWT_AUDIENCE", str(&c.JWTAudience))
	env("FUNDSVC_JWT_LEEWAY", func(v string) (err error) { c.JWTLeeway, err = time.ParseDuration(v); return })
	env("FUNDSVC_JWT_JWKS_REFRESH", func(v string) (err error) { c.JWKSRefresh, err = time.ParseDuration(v); return })
	env("FUNDSVC_JWT_MAX_LIFETIME", func(v string) (err error) { c.JWTMaxLifetime, err = time.ParseDuration(v); return })
	env("FUNDSVC_PUBLIC_METRICS", func(v string) (err error) { c.PublicMetrics, err = strconv.ParseBool(v); return })
	env("FUNDSVC_PUBLIC_OPENAPI", func(v string) (err error) { c.PublicOpenAPI, err = strconv.ParseBool(v); return })
	env("FUNDSVC_TRUSTED_PROXIES", func(v string) error {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				c.TrustedProxies = append(c.TrustedProxies, p)
			}
		}
		return nil
	})

	env("FUNDSVC_EXPORT_DEST", str(&c.ExportDest))
	env("FUNDSVC_EXPORT_SEGMENTS", func(v string) (err error) { c.ExportSegments, err = strconv.Atoi(v); return })
	env("FUNDSVC_EXPORT_FILE_BYTES", func(v string) (err error) { c.ExportFileBytes, err = strconv.ParseInt(v, 10, 64); return })
	env("FUNDSVC_EXPORT_COMPRESSION", str(&c.ExportCompression))
	env("FUNDSVC_S3_ENDPOINT", str(&c.S3Endpoint))
	env("FUNDSVC_S3_REGION", str(&c.S3Region))
	env("FUNDSVC_S3_PATH_STYLE", func(v string) (err error) { c.S3PathStyle, err = strconv.ParseBool(v); return })

	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.Table, "table", c.Table, "DynamoDB table name (FUNDSVC_TABLE)")
	fs.StringVar(&c.Endpoint, "endpoint", c.Endpoint, "DynamoDB endpoint URL; empty for AWS (FUNDSVC_DYNAMODB_ENDPOINT)")
	fs.StringVar(&c.Region, "region", c.Region, "AWS region (FUNDSVC_REGION)")
	fs.StringVar(&c.Listen, "listen", c.Listen, "HTTP listen address (FUNDSVC_LISTEN)")
	fs.TextVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error (FUNDSVC_LOG_LEVEL)")
	for _, add := range more {
		add(fs, &c)
	}
	if err := fs.Parse(args); err != nil {
		return c, nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(errs) > 0 {
		return c, nil, errors.Join(errs...)
	}
	return c, fs.Args(), c.Validate()
}

// shutdownMargin is what the default shutdown grace adds to the longest
// request timeout: time to write the answer and close the connection.
const shutdownMargin = 10 * time.Second

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
	if c.MaxBodyBytes < 1024 {
		errs = append(errs, fmt.Errorf("max body bytes %d: want at least 1024", c.MaxBodyBytes))
	}
	if c.MaxPositions < 1 || c.MaxPositions > 100000 {
		errs = append(errs, fmt.Errorf("max positions %d: want 1 to 100000", c.MaxPositions))
	}
	if c.ShutdownTimeout <= 0 || c.RequestTimeout <= 0 || c.WriteTimeout <= 0 {
		errs = append(errs, errors.New("timeouts must be positive durations such as 20s"))
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
	if c.CursorKey != "" && len(c.CursorKey) < 16 {
		errs = append(errs, errors.New("cursor key: at least 16 characters"))
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		errs = append(errs, errors.New("JWT secret: at least 32 bytes (FUNDSVC_JWT_HS256_SECRET)"))
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
