package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"time"
)

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
