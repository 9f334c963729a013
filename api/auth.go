package api

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/golang-jwt/jwt/v5"
)

// Roles a token can carry.
const (
	RoleAdmin    = "admin"    // fund administrator: writes and reads within Funds
	RoleInvestor = "investor" // investor portal: reads its own investor's positions
)

// AllFunds in an admin's funds claim grants every fund.
const AllFunds = "*"

// Principal is who a request acts for, taken from its verified token and
// from nowhere else (never from the path or the body).
type Principal struct {
	Subject  string
	Role     string
	Funds    []string // admin only
	Investor string   // investor only
}

// MayAdminister reports whether p is an admin whose scope covers fundID.
func (p Principal) MayAdminister(fundID string) bool {
	return p.Role == RoleAdmin && (slices.Contains(p.Funds, AllFunds) || slices.Contains(p.Funds, fundID))
}

// scope identifies the principal's whole view, so that a cursor or an
// idempotency record made for one principal is refused to any other.
func (p Principal) scope() string {
	funds := slices.Clone(p.Funds)
	slices.Sort(funds)
	return p.Role + "\x1f" + p.Subject + "\x1f" + strings.Join(funds, ",") + "\x1f" + p.Investor
}

// claims is the token payload fundsvc reads and mints.
type claims struct {
	jwt.RegisteredClaims
	Role     string   `json:"role"`
	Funds    []string `json:"funds,omitempty"`
	Investor string   `json:"investor,omitempty"`
}

func (c *claims) principal() (Principal, error) {
	p := Principal{Subject: c.Subject, Role: c.Role, Funds: c.Funds, Investor: c.Investor}
	if p.Subject == "" {
		return p, errors.New("the token has no subject")
	}
	switch p.Role {
	case RoleAdmin:
		if len(p.Funds) == 0 || p.Investor != "" {
			return p, errors.New("an admin token names its funds (or *) and no investor")
		}
		for _, f := range p.Funds {
			if f != AllFunds && !fund.ValidID(f) {
				return p, fmt.Errorf("funds claim holds an invalid fund ID")
			}
		}
	case RoleInvestor:
		if !fund.ValidID(p.Investor) || len(p.Funds) != 0 {
			return p, errors.New("an investor token names exactly one investor and no funds")
		}
	default:
		return p, errors.New("role must be admin or investor")
	}
	return p, nil
}

// AuthConfig says which tokens to accept.
type AuthConfig struct {
	HS256Secret []byte        // shared secret for HS256 tokens, if any
	JWKS        []byte        // a JWKS document of RS256/ES256 public keys, if any
	Issuer      string        // required iss, when set
	Audience    string        // required aud, when set
	Leeway      time.Duration // clock skew allowed on exp, nbf, iat
}

// Verifier checks bearer tokens: signature, an algorithm allow-list made
// from the configured keys only (so a token can never pick its own
// verification method: no "none", no HS256 signed with a public key), a
// required expiry, and issuer and audience when configured.
type Verifier struct {
	secret  []byte
	keys    map[string]any // kid → *rsa.PublicKey or *ecdsa.PublicKey
	methods []string
	opts    []jwt.ParserOption
	now     func() time.Time
	known   knownTokens
}

// MinSecretBytes is the shortest HS256 secret accepted.
const MinSecretBytes = 32

// NewVerifier builds a Verifier; it fails if no key is configured or a key is
// unusable.
func NewVerifier(c AuthConfig) (*Verifier, error) {
	v := &Verifier{keys: map[string]any{}, now: time.Now}
	if len(c.HS256Secret) > 0 {
		if len(c.HS256Secret) < MinSecretBytes {
			return nil, fmt.Errorf("the HS256 secret must be at least %d bytes", MinSecretBytes)
		}
		v.secret = c.HS256Secret
		v.methods = append(v.methods, jwt.SigningMethodHS256.Alg())
	}
	if len(c.JWKS) > 0 {
		if err := v.loadJWKS(c.JWKS); err != nil {
			return nil, err
		}
	}
	if len(v.methods) == 0 {
		return nil, errors.New("no token keys configured: set an HS256 secret or a JWKS file")
	}
	v.opts = []jwt.ParserOption{jwt.WithValidMethods(v.methods), jwt.WithExpirationRequired(), jwt.WithLeeway(c.Leeway), jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return v.now() })}
	if c.Issuer != "" {
		v.opts = append(v.opts, jwt.WithIssuer(c.Issuer))
	}
	if c.Audience != "" {
		v.opts = append(v.opts, jwt.WithAudience(c.Audience))
	}
	return v, nil
}

type jwk struct {
	Kty, Kid, Alg, Use string
	N, E               string // RSA
	Crv, X, Y          string // EC
}

func (v *Verifier) loadJWKS(doc []byte) error {
	var set struct{ Keys []jwk }
	if err := json.Unmarshal(doc, &set); err != nil {
		return fmt.Errorf("JWKS: %w", err)
	}
	b64 := base64.RawURLEncoding
	for i, k := range set.Keys {
		if k.Kid == "" {
			return fmt.Errorf("JWKS key %d has no kid", i)
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch k.Kty {
		case "RSA":
			n, err1 := b64.DecodeString(k.N)
			e, err2 := b64.DecodeString(k.E)
			if err1 != nil || err2 != nil || len(n) < 256 || len(e) == 0 || len(e) > 4 {
				return fmt.Errorf("JWKS key %s: an RSA key needs n (at least 2048 bits) and e", k.Kid)
			}
			v.keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
			if !slices.Contains(v.methods, "RS256") {
				v.methods = append(v.methods, "RS256")
			}
		case "EC":
			x, err1 := b64.DecodeString(k.X)
			y, err2 := b64.DecodeString(k.Y)
			if k.Crv != "P-256" || err1 != nil || err2 != nil {
				return fmt.Errorf("JWKS key %s: only P-256 EC keys (ES256) are supported", k.Kid)
			}
			pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, pad32(x)...), pad32(y)...))
			if err != nil {
				return fmt.Errorf("JWKS key %s: %w", k.Kid, err)
			}
			v.keys[k.Kid] = pub
			if !slices.Contains(v.methods, "ES256") {
				v.methods = append(v.methods, "ES256")
			}
		default:
			return fmt.Errorf("JWKS key %s: unsupported kty %q", k.Kid, k.Kty)
		}
	}
	return nil
}

func pad32(b []byte) []byte {
	if len(b) >= 32 {
		return b
	}
	return append(make([]byte, 32-len(b)), b...)
}

// key returns the one key that may verify t: the secret for HS256, the
// JWKS key named by kid for RS256 and ES256, and only of the matching type.
func (v *Verifier) key(t *jwt.Token) (any, error) {
	switch t.Method.Alg() {
	case "HS256":
		if v.secret == nil {
			return nil, errors.New("HS256 is not accepted")
		}
		return v.secret, nil
	case "RS256", "ES256":
		kid, _ := t.Header["kid"].(string)
		k, ok := v.keys[kid]
		if !ok {
			return nil, errors.New("unknown kid")
		}
		if _, isRSA := k.(*rsa.PublicKey); isRSA != (t.Method.Alg() == "RS256") {
			return nil, errors.New("kid names a key of another type")
		}
		return k, nil
	}
	return nil, errors.New("algorithm not accepted")
}

// Verify checks a bearer token and returns its principal. Every failure is
// EUNAUTHORIZED with a message that says what kind of problem, not which
// key or claim value would have worked.
//
// A token verified in the last minute is not verified again: its principal
// is remembered until then or until the token expires, whichever is
// first (see knownTokens). The keys do not change while the process runs.
func (v *Verifier) Verify(token string) (Principal, error) {
	now := v.now()
	if p, ok := v.known.get(token, now); ok {
		return p, nil
	}
	var c claims
	if _, err := jwt.ParseWithClaims(token, &c, v.key, v.opts...); err != nil {
		msg := "the bearer token is not valid"
		switch {
		case errors.Is(err, jwt.ErrTokenExpired):
			msg = "the bearer token has expired"
		case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
			msg = "the bearer token lacks a required claim (exp, or iss/aud where configured)"
		case errors.Is(err, jwt.ErrTokenInvalidAudience), errors.Is(err, jwt.ErrTokenInvalidIssuer):
			msg = "the bearer token was not issued for this service"
		}
		return Principal{}, &fund.Error{Code: fund.EUNAUTHORIZED, Message: msg}
	}
	p, err := c.principal()
	if err != nil {
		return Principal{}, &fund.Error{Code: fund.EUNAUTHORIZED, Message: "the bearer token's claims are not usable: " + err.Error()}
	}
	v.known.put(token, p, now, c.ExpiresAt.Time) // exp is required, so present
	return p, nil
}

// knownTokens remembers the principals of recently verified tokens, so a
// portal that sends the same token with every request pays for one
// signature check a minute rather than one a request (about a tenth of a
// millisecond of CPU each for HS256, more for RS256 and ES256). A token is
// remembered for at most knownTokenTTL and never past its exp (the leeway
// is not granted again). The key is the whole token, signature included,
// so only the very token verified is recognised. At most knownTokenMax
// tokens are kept, of at most knownTokenBytes each; when full, it starts
// afresh. The zero value is ready to use; it is safe for concurrent use.
type knownTokens struct {
	mu sync.Mutex
	m  map[string]knownToken
}

type knownToken struct {
	p     Principal
	until time.Time
}

const (
	knownTokenTTL   = time.Minute
	knownTokenMax   = 4096
	knownTokenBytes = 4096
)

func (k *knownTokens) get(token string, now time.Time) (Principal, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.m[token]
	if !ok || !now.Before(t.until) {
		return Principal{}, false
	}
	return t.p, true
}

func (k *knownTokens) put(token string, p Principal, now, exp time.Time) {
	if len(token) > knownTokenBytes {
		return
	}
	until := now.Add(knownTokenTTL)
	if exp.Before(until) {
		until = exp
	}
	p.Funds = slices.Clone(p.Funds) // the remembered principal is its own
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= knownTokenMax {
		k.m = make(map[string]knownToken)
	}
	k.m[token] = knownToken{p: p, until: until}
}

// MintToken signs an HS256 development token for p, valid for ttl.
func MintToken(secret []byte, p Principal, issuer, audience string, ttl time.Duration, now time.Time) (string, error) {
	if len(secret) < MinSecretBytes {
		return "", fmt.Errorf("the HS256 secret must be at least %d bytes", MinSecretBytes)
	}
	c := claims{Role: p.Role, Funds: p.Funds, Investor: p.Investor}
	c.Subject, c.Issuer = p.Subject, issuer
	if audience != "" {
		c.Audience = jwt.ClaimStrings{audience}
	}
	c.IssuedAt, c.ExpiresAt = jwt.NewNumericDate(now), jwt.NewNumericDate(now.Add(ttl))
	if _, err := c.principal(); err != nil {
		return "", err
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
}
