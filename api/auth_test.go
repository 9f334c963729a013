package api

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/golang-jwt/jwt/v5"
)

var b64 = base64.RawURLEncoding.EncodeToString

// ecJWK is the public JWK of k under kid, with alg ES256 and use sig unless
// changed by set (a value of "" removes the member).
func ecJWK(t *testing.T, kid string, k *ecdsa.PrivateKey, set ...string) map[string]any {
	t.Helper()
	point, err := k.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		t.Fatal(err)
	}
	n := (len(point) - 1) / 2
	crv := map[int]string{32: "P-256", 48: "P-384", 66: "P-521"}[n]
	return withMembers(map[string]any{"kty": "EC", "kid": kid, "alg": "ES256", "use": "sig", "crv": crv,
		"x": b64(point[1 : 1+n]), "y": b64(point[1+n:])}, set...)
}

// rsaJWK is the public JWK of k under kid, with alg RS256 and use sig unless
// changed by set.
func rsaJWK(kid string, k *rsa.PrivateKey, set ...string) map[string]any {
	return withMembers(map[string]any{"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}, set...)
}

func withMembers(m map[string]any, set ...string) map[string]any {
	for i := 0; i+1 < len(set); i += 2 {
		if set[i+1] == "" {
			delete(m, set[i])
		} else {
			m[set[i]] = set[i+1]
		}
	}
	return m
}

func jwksDoc(t *testing.T, keys ...map[string]any) []byte {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func newECKey(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newRSAKey(t *testing.T, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signed is a token for an admin of FUND_A issued at iat for ttl, signed
// with key under kid.
// jwksAudience is the audience the tests' JWKS verifiers require, and
// signed's tokens carry.
const jwksAudience = "fundsvc-test"

func signed(t *testing.T, m jwt.SigningMethod, key any, kid string, iat time.Time, ttl time.Duration) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, jwt.MapClaims{"sub": "idp-admin", "role": RoleAdmin, "funds": []string{"FUND_A"},
		"aud": jwksAudience, "iat": iat.Unix(), "exp": iat.Add(ttl).Unix()})
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWKSRefusesAmbiguousOrUnsafeKeys: a JWKS that could make a kid mean
// two keys, or that holds what must not be published, or a key that is
// malformed or contradicts itself, is refused whole, with an error that
// names the key.
func TestJWKSRefusesAmbiguousOrUnsafeKeys(t *testing.T) {
	p256, other := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256())
	p384 := newECKey(t, elliptic.P384())
	rk := newRSAKey(t, 2048)
	weak := newRSAKey(t, 1024)
	offCurve := ecJWK(t, "off", p256)
	offCurve["y"] = offCurve["x"]
	withD := ecJWK(t, "priv", p256)
	priv, err := p256.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	withD["d"] = b64(priv)
	for _, c := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"two EC keys with one kid are refused, naming the kid", jwksDoc(t, ecJWK(t, "k1", p256), ecJWK(t, "k1", other)), `kid "k1" names two keys`},
		{"an RSA and an EC key with one kid are refused", jwksDoc(t, rsaJWK("both", rk), ecJWK(t, "both", p256)), `kid "both" names two keys`},
		{"a signing key and an encryption key with one kid are refused", jwksDoc(t, ecJWK(t, "k2", p256), ecJWK(t, "k2", other, "use", "enc")), `kid "k2" names two keys`},
		{"a key without a kid is refused", jwksDoc(t, ecJWK(t, "", p256)), "has no kid"},
		{"a key holding its private half is refused", jwksDoc(t, withD), `key "priv" holds private or secret key material`},
		{"a symmetric key is refused", jwksDoc(t, map[string]any{"kty": "oct", "kid": "hs", "k": b64([]byte("0123456789abcdef0123456789abcdef"))}), `key "hs" holds private or secret`},
		{"an RSA key of 1024 bits is refused", jwksDoc(t, rsaJWK("weak", weak)), `key "weak": an RSA key needs at least 2048 bits`},
		{"an RSA key labelled ES256 is refused", jwksDoc(t, rsaJWK("mislabelled", rk, "alg", "ES256")), `key "mislabelled": alg ES256 does not fit an RSA key`},
		{"an EC key labelled RS256 is refused", jwksDoc(t, ecJWK(t, "mislabelled", p256, "alg", "RS256")), `key "mislabelled": alg RS256 does not fit an EC key`},
		{"a P-384 key labelled ES256 is refused", jwksDoc(t, ecJWK(t, "p384", p384)), `key "p384": alg ES256 needs curve P-256`},
		{"an EC point off its curve is refused", jwksDoc(t, offCurve), `JWKS key "off"`},
		{"an RSA key without its modulus is refused", jwksDoc(t, rsaJWK("no-n", rk, "n", "")), `JWKS key "no-n"`},
		{"a set of only an encryption key is refused", jwksDoc(t, ecJWK(t, "enc", p256, "use", "enc")), "no RS256 or ES256 signing key (skipped: enc: use"},
		{"an empty set is refused", []byte(`{"keys":[]}`), "no RS256 or ES256 signing key"},
		{"a document that is not JSON is refused", []byte(`{"keys":[`), "JWKS:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := NewVerifier(AuthConfig{JWKS: c.doc, Audience: jwksAudience})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewVerifier: %v (verifier %v), want an error containing %q", err, v != nil, c.want)
			}
		})
	}
}

// TestJWKSSkipsKeysNotForSigningTokens: keys that are well formed but not
// for verifying RS256/ES256 tokens are skipped, each named with why, and a
// token naming one is refused like an unknown kid; the set's signing keys
// still work.
func TestJWKSSkipsKeysNotForSigningTokens(t *testing.T) {
	good, enc, ops, rs384 := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256())
	p384 := newECKey(t, elliptic.P384())
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	opsJWK := ecJWK(t, "ops", ops, "use", "")
	opsJWK["key_ops"] = []string{"encrypt"}
	doc := jwksDoc(t,
		ecJWK(t, "good", good),
		ecJWK(t, "enc", enc, "use", "enc"),
		opsJWK,
		ecJWK(t, "alg", rs384, "alg", "ES384"),
		ecJWK(t, "p384", p384, "alg", ""),
		map[string]any{"kty": "OKP", "kid": "ed", "crv": "Ed25519", "x": b64(edPub), "use": "sig"},
	)
	var logs bytes.Buffer
	v, err := NewVerifier(AuthConfig{JWKS: doc, Audience: jwksAudience, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	set := v.jwks.set.Load()
	if kids := set.kids(); !slices.Equal(kids, []string{"good"}) {
		t.Errorf("verifying keys %v, want [good]", kids)
	}
	wantSkipped := []string{`enc: use "enc", not sig`, "ops: key_ops without verify", "alg: alg ES384 (only RS256 and ES256 are accepted)",
		"p384: curve P-384 (only P-256, for ES256, is accepted)", "ed: kty OKP (only RSA and EC keys are accepted)"}
	if !slices.Equal(set.skipped, wantSkipped) {
		t.Errorf("skipped %q,\nwant %q", set.skipped, wantSkipped)
	}
	if !strings.Contains(logs.String(), "JWKS keys skipped") || !strings.Contains(logs.String(), "key_ops without verify") {
		t.Errorf("the skipped keys were not logged: %s", logs.String())
	}
	now := time.Now()
	if _, err := v.Verify(signed(t, jwt.SigningMethodES256, good, "good", now, time.Hour)); err != nil {
		t.Errorf("a token of the signing key: %v", err)
	}
	for _, c := range []struct {
		kid string
		tok string
	}{
		{"enc", signed(t, jwt.SigningMethodES256, enc, "enc", now, time.Hour)},
		{"ops", signed(t, jwt.SigningMethodES256, ops, "ops", now, time.Hour)},
		{"alg", signed(t, jwt.SigningMethodES256, rs384, "alg", now, time.Hour)},
		{"p384", signed(t, jwt.SigningMethodES384, p384, "p384", now, time.Hour)},
		{"ed", signed(t, jwt.SigningMethodEdDSA, edPriv, "ed", now, time.Hour)},
	} {
		if _, err := v.Verify(c.tok); fund.ErrorCode(err) != fund.EUNAUTHORIZED {
			t.Errorf("a token of the skipped key %s: %v, want unauthorized", c.kid, err)
		}
	}
}

// jwksFileVerifier is a Verifier on a JWKS file in a temporary directory,
// with a clock the test moves, a count of the file's reads, and its logs.
type jwksFileVerifier struct {
	*Verifier
	path  string
	clock time.Time
	reads int
	logs  *bytes.Buffer
}

func newJWKSFileVerifier(t *testing.T, refresh time.Duration, doc []byte) *jwksFileVerifier {
	t.Helper()
	f := &jwksFileVerifier{path: filepath.Join(t.TempDir(), "jwks.json"), logs: &bytes.Buffer{}}
	f.write(t, doc)
	v, err := NewVerifier(AuthConfig{JWKSFile: f.path, JWKSRefresh: refresh, Audience: jwksAudience, Logger: slog.New(slog.NewJSONHandler(f.logs, nil))})
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	f.clock = v.jwks.base // the file was read at the clock's start
	v.now = func() time.Time { return f.clock }
	v.jwks.read = func(path string) ([]byte, error) { f.reads++; return readJWKS(path) }
	f.Verifier = v
	return f
}

// write replaces the file's content.
func (f *jwksFileVerifier) write(t *testing.T, doc []byte) {
	t.Helper()
	if err := os.WriteFile(f.path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (f *jwksFileVerifier) accepts(t *testing.T, tok string) bool {
	t.Helper()
	_, err := f.Verify(tok)
	if err != nil && fund.ErrorCode(err) != fund.EUNAUTHORIZED {
		t.Fatalf("Verify: %v, want nil or unauthorized", err)
	}
	return err == nil
}

// TestJWKSFileIsRereadOnAnUnknownKid: a token signed by a key just added to
// the file is accepted at once, without waiting for the refresh, and the
// token of the key the rotation removed is refused although it was
// verified moments before; a flood of invented kids costs one file read
// per interval, not one per token.
func TestJWKSFileIsRereadOnAnUnknownKid(t *testing.T) {
	a, b := newECKey(t, elliptic.P256()), newRSAKey(t, 2048)
	f := newJWKSFileVerifier(t, time.Hour, jwksDoc(t, ecJWK(t, "a", a)))
	tokA := signed(t, jwt.SigningMethodES256, a, "a", f.clock, time.Hour)
	tokB := signed(t, jwt.SigningMethodRS256, b, "b", f.clock, time.Hour)
	if !f.accepts(t, tokA) {
		t.Fatal("the token of key a was refused")
	}
	f.write(t, jwksDoc(t, rsaJWK("b", b))) // rotation: RSA key b replaces EC key a

	f.clock = f.clock.Add(jwksUnknownKidInterval)
	if !f.accepts(t, tokB) {
		t.Fatalf("the token of the new key b was refused; logs: %s", f.logs)
	}
	if f.reads != 1 {
		t.Errorf("%d reads of the file for the new kid, want 1", f.reads)
	}
	if f.accepts(t, tokA) {
		t.Error("the token of the removed key a is still accepted (remembered from before the rotation)")
	}
	if !strings.Contains(f.logs.String(), "JWKS keys reloaded") {
		t.Errorf("the reload was not logged: %s", f.logs)
	}

	// A flood of unknown kids within the interval reads the file no more.
	for i := range 1000 {
		tok := signed(t, jwt.SigningMethodES256, a, fmt.Sprintf("invented-%d", i), f.clock, time.Hour)
		if f.accepts(t, tok) {
			t.Fatal("a token with an invented kid was accepted")
		}
		f.clock = f.clock.Add(jwksUnknownKidInterval / 2000)
	}
	if f.reads != 1 {
		t.Errorf("%d reads of the file after 1,000 unknown kids within %s, want still 1", f.reads, jwksUnknownKidInterval)
	}
	f.clock = f.clock.Add(jwksUnknownKidInterval / 2)
	if f.accepts(t, signed(t, jwt.SigningMethodES256, a, "invented-again", f.clock, time.Hour)) {
		t.Fatal("a token with an invented kid was accepted")
	}
	if f.reads != 2 {
		t.Errorf("%d reads of the file once the interval passed, want 2", f.reads)
	}
	// A token without a kid never causes a read.
	f.clock = f.clock.Add(jwksUnknownKidInterval)
	if f.accepts(t, signed(t, jwt.SigningMethodRS256, b, "", f.clock, time.Hour)) {
		t.Fatal("a token without a kid was accepted")
	}
	if f.reads != 2 {
		t.Errorf("%d reads of the file after a token without a kid, want 2", f.reads)
	}
}

// TestJWKSFileIsRereadPeriodically: the file is re-read once the refresh
// interval has passed, and not before; a key removed from it stops being
// accepted from then, even for a token remembered as verified less than a
// minute earlier, and a key added is accepted.
func TestJWKSFileIsRereadPeriodically(t *testing.T) {
	a, b, c := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256())
	const refresh = 30 * time.Second // shorter than a remembered token's minute
	f := newJWKSFileVerifier(t, refresh, jwksDoc(t, ecJWK(t, "a", a), ecJWK(t, "b", b)))
	tokA := signed(t, jwt.SigningMethodES256, a, "a", f.clock, time.Hour)
	tokB := signed(t, jwt.SigningMethodES256, b, "b", f.clock, time.Hour)
	if !f.accepts(t, tokA) || !f.accepts(t, tokB) {
		t.Fatal("a token of the first set was refused")
	}
	f.write(t, jwksDoc(t, ecJWK(t, "b", b), ecJWK(t, "c", c)))

	f.clock = f.clock.Add(refresh - time.Second)
	if !f.accepts(t, tokA) || f.reads != 0 {
		t.Fatalf("before the refresh: key a refused or the file read (%d reads)", f.reads)
	}
	f.clock = f.clock.Add(time.Second)
	if f.accepts(t, tokA) {
		t.Error("the token of the removed key a is accepted after the refresh")
	}
	if f.reads != 1 {
		t.Errorf("%d reads at the refresh, want 1", f.reads)
	}
	tokC := signed(t, jwt.SigningMethodES256, c, "c", f.clock, time.Hour)
	if !f.accepts(t, tokB) || !f.accepts(t, tokC) {
		t.Error("a token of the kept key b or the added key c was refused after the refresh")
	}
	if got := f.jwks.set.Load().generation(); got != 2 {
		t.Errorf("generation %d after one change, want 2", got)
	}

	// An unchanged file is read at each refresh but changes nothing: the
	// remembered tokens stay remembered.
	f.clock = f.clock.Add(refresh)
	if !f.accepts(t, tokB) || f.reads != 2 || f.jwks.set.Load().generation() != 2 {
		t.Errorf("an unchanged re-read: %d reads, generation %d, want 2 and 2", f.reads, f.jwks.set.Load().generation())
	}
}

// TestJWKSFailedRereadKeepsTheLastGoodKeys: a file that is half written,
// refused (duplicate kids) or gone leaves the keys in use as they were, and
// each failure is logged; once the file is good again it is used.
func TestJWKSFailedRereadKeepsTheLastGoodKeys(t *testing.T) {
	a, b := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256())
	const refresh = time.Minute
	f := newJWKSFileVerifier(t, refresh, jwksDoc(t, ecJWK(t, "a", a)))
	tokA := signed(t, jwt.SigningMethodES256, a, "a", f.clock, time.Hour)
	good := jwksDoc(t, ecJWK(t, "b", b))
	for _, c := range []struct {
		name    string
		change  func()
		wantLog string
	}{
		{"a half-written file", func() { f.write(t, good[:len(good)/2]) }, "unexpected end of JSON input"},
		{"a file with one kid for two keys", func() { f.write(t, jwksDoc(t, ecJWK(t, "a", a), ecJWK(t, "a", b))) }, `kid \"a\" names two keys`},
		{"a file with no signing key", func() { f.write(t, jwksDoc(t, ecJWK(t, "b", b, "use", "enc"))) }, "no RS256 or ES256 signing key"},
		{"a missing file", func() {
			if err := os.Remove(f.path); err != nil {
				t.Fatal(err)
			}
		}, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.logs.Reset()
			c.change()
			f.clock = f.clock.Add(refresh)
			if !f.accepts(t, tokA) {
				t.Error("the last good key a is refused")
			}
			if logs := f.logs.String(); !strings.Contains(logs, "JWKS re-read failed: the last good keys stay in use") || !strings.Contains(logs, c.wantLog) {
				t.Errorf("logs %s\nwant the failure with %q", logs, c.wantLog)
			}
		})
	}
	f.write(t, good)
	f.clock = f.clock.Add(refresh)
	if f.accepts(t, tokA) || !f.accepts(t, signed(t, jwt.SigningMethodES256, b, "b", f.clock, time.Hour)) {
		t.Error("the good file is not in use once it is back")
	}
}

// TestTokenLifetimeIsBounded: a token needs exp and iat, and exp - iat may
// not exceed the maximum lifetime (24h unless configured); tokens minted by
// MintToken for the development command's default 12h pass.
func TestTokenLifetimeIsBounded(t *testing.T) {
	secret := []byte("lifetime-test-secret-0123456789-abcdef")
	now := time.Now()
	hs := func(c jwt.MapClaims) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claims := func(iat, exp time.Time) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "a", "role": RoleInvestor, "investor": "INVESTOR_1"}
		if !iat.IsZero() {
			c["iat"] = iat.Unix()
		}
		if !exp.IsZero() {
			c["exp"] = exp.Unix()
		}
		return c
	}
	minted, err := MintToken(secret, Principal{Subject: "dev", Role: RoleInvestor, Investor: "INVESTOR_1"}, "", "", 12*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		max     time.Duration
		token   string
		refusal string // "" when accepted
	}{
		{"a token of exactly 24 hours is accepted", 0, hs(claims(now, now.Add(24*time.Hour))), ""},
		{"a token of 24 hours and a second is refused", 0, hs(claims(now, now.Add(24*time.Hour+time.Second))), "lifetime"},
		{"a year-long token in its last hour is refused", 0, hs(claims(now.Add(-365*24*time.Hour), now.Add(time.Hour))), "lifetime"},
		{"a token without iat is refused", 0, hs(claims(time.Time{}, now.Add(time.Hour))), "lacks a required claim"},
		{"a token without exp is refused", 0, hs(claims(now, time.Time{})), "lacks a required claim"},
		{"a token issued in the future is refused", 0, hs(claims(now.Add(time.Hour), now.Add(2*time.Hour))), "not valid"},
		{"a 2-hour token is refused under a 1-hour maximum", time.Hour, hs(claims(now, now.Add(2*time.Hour))), "lifetime"},
		{"a 1-hour token is accepted under a 1-hour maximum", time.Hour, hs(claims(now, now.Add(time.Hour))), ""},
		{"a token minted for 12 hours is accepted", 0, minted, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := NewVerifier(AuthConfig{HS256Secret: secret, MaxLifetime: c.max})
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.Verify(c.token)
			switch {
			case c.refusal == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.refusal != "" && (fund.ErrorCode(err) != fund.EUNAUTHORIZED || !strings.Contains(err.Error(), c.refusal)):
				t.Errorf("%v, want unauthorized saying %q", err, c.refusal)
			}
		})
	}
}

// FuzzJWKS: parseJWKS never panics, and a set it accepts holds only RS256
// keys of at least 2048 bits and P-256 keys, from a document in which no
// kid names two keys.
func FuzzJWKS(f *testing.F) {
	ec := func(kid string) map[string]any {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			f.Fatal(err)
		}
		point, err := k.PublicKey.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		return map[string]any{"kty": "EC", "kid": kid, "alg": "ES256", "use": "sig", "crv": "P-256", "x": b64(point[1:33]), "y": b64(point[33:])}
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		f.Fatal(err)
	}
	for _, keys := range [][]map[string]any{
		{ec("a")}, {ec("a"), ec("a")}, {ec("a"), rsaJWK("b", rk)}, {rsaJWK("b", rk, "alg", "")}, {ec("a"), withMembers(ec("b"), "use", "enc")},
	} {
		doc, err := json.Marshal(map[string]any{"keys": keys})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc)
	}
	f.Add([]byte(`{"keys":[{"kty":"oct","kid":"x","k":"AAAA"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		set, err := parseJWKS(doc)
		if err != nil {
			return
		}
		var raw struct {
			Keys []struct {
				Kid string `json:"kid"`
			} `json:"keys"`
		}
		if err := json.Unmarshal(doc, &raw); err != nil {
			t.Fatalf("accepted a document encoding/json refuses: %v", err)
		}
		seen := map[string]bool{}
		for _, k := range raw.Keys {
			if seen[k.Kid] {
				t.Fatalf("accepted kid %q twice", k.Kid)
			}
			seen[k.Kid] = true
		}
		if len(set.keys) == 0 {
			t.Fatal("accepted a set without keys")
		}
		for kid, k := range set.keys {
			switch k := k.(type) {
			case *rsa.PublicKey:
				if k.N.BitLen() < 2048 {
					t.Fatalf("key %q: RSA of %d bits", kid, k.N.BitLen())
				}
			case *ecdsa.PublicKey:
				if k.Curve != elliptic.P256() {
					t.Fatalf("key %q: curve %s", kid, k.Curve.Params().Name)
				}
			default:
				t.Fatalf("key %q: %T", kid, k)
			}
		}
	})
}

// TestJWKSNeedsAnAudience: a verifier of a JWKS, given as a document or a
// file, is refused without an audience; with one, a token of its key is
// accepted only when its aud holds that audience.
func TestJWKSNeedsAnAudience(t *testing.T) {
	key := newECKey(t, elliptic.P256())
	doc := jwksDoc(t, ecJWK(t, "k", key))
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]AuthConfig{"a JWKS document": {JWKS: doc}, "a JWKS file": {JWKSFile: path},
		"a JWKS beside an HS256 secret": {JWKS: doc, HS256Secret: []byte("0123456789abcdef0123456789abcdef")}} {
		if v, err := NewVerifier(c); !errors.Is(err, ErrJWKSNeedsAudience) {
			t.Errorf("%s without an audience: verifier %v, error %v; want ErrJWKSNeedsAudience", name, v != nil, err)
		}
	}
	v, err := NewVerifier(AuthConfig{JWKS: doc, Audience: jwksAudience})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sign := func(aud any) string {
		c := jwt.MapClaims{"sub": "idp-admin", "role": RoleAdmin, "funds": []string{"FUND_A"}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		if aud != nil {
			c["aud"] = aud
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
		tok.Header["kid"] = "k"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name string
		aud  any
		ok   bool
	}{
		{"no aud", nil, false},
		{"an empty aud", "", false},
		{"another audience", "another-api", false},
		{"other audiences only", []string{"another-api", "fundsvc"}, false},
		{"the audience", jwksAudience, true},
		{"audiences that include it", []string{"another-api", jwksAudience}, true},
	} {
		_, err := v.Verify(sign(c.aud))
		if c.ok && err != nil || !c.ok && fund.ErrorCode(err) != fund.EUNAUTHORIZED {
			t.Errorf("a token with %s: %v, want accepted %v", c.name, err, c.ok)
		}
	}
}
