package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/api"
)

// tokenFlags are the flags of fundsvc token.
type tokenFlags struct {
	role, funds, investor, subject string
	ttl                            durationFlag
}

// durationFlag is a duration flag that knows whether it was given.
type durationFlag struct {
	d   time.Duration
	set bool
}

func (f *durationFlag) String() string { return f.d.String() }

func (f *durationFlag) Set(v string) (err error) {
	f.d, err = time.ParseDuration(v)
	f.set = true
	return err
}

// defaultTokenTTL is a development token's validity unless --ttl or a
// shorter FUNDSVC_JWT_MAX_LIFETIME says otherwise.
const defaultTokenTTL = 12 * time.Hour

func registerToken(fs *flag.FlagSet, f *flags) {
	fs.StringVar(&f.token.role, "role", "", "the token's role, `admin|investor`")
	fs.StringVar(&f.token.funds, "funds", "", "admin: the comma-separated fund `IDS` the token covers, or *")
	fs.StringVar(&f.token.investor, "investor", "", "investor: the investor `ID`")
	fs.StringVar(&f.token.subject, "subject", "", "the subject `NAME` the token carries (default dev-ROLE)")
	f.token.ttl.d = defaultTokenTTL
	fs.Var(&f.token.ttl, "ttl", "the token's validity, a `DURATION` of at most FUNDSVC_JWT_MAX_LIFETIME, which also caps the default")
}

// mintToken prints a development token signed with the configured secret.
func mintToken(_ context.Context, e invocation) error {
	cfg, f := e.cfg, e.f.token
	if cfg.JWTSecret == "" {
		return errors.New("token: set FUNDSVC_JWT_HS256_SECRET to the secret the service verifies with")
	}
	ttl := f.ttl.d
	if !f.ttl.set {
		ttl = min(ttl, cfg.JWTMaxLifetime)
	}
	if ttl <= 0 || ttl > cfg.JWTMaxLifetime {
		return fmt.Errorf("token: --ttl %s: want more than 0 and at most %s, the longest lifetime the service accepts (FUNDSVC_JWT_MAX_LIFETIME)", ttl, cfg.JWTMaxLifetime)
	}
	p := api.Principal{Subject: f.subject, Role: f.role, Investor: f.investor}
	if f.funds != "" {
		p.Funds = strings.Split(f.funds, ",")
	}
	p.Subject = cmp.Or(p.Subject, "dev-"+f.role)
	tok, err := api.MintToken([]byte(cfg.JWTSecret), p, cfg.JWTIssuer, cfg.JWTAudience, ttl, time.Now())
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}
