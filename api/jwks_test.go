package api_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/golang-jwt/jwt/v5"
)

// TestJWKSRotationWithoutRestart: a server on a JWKS file whose key is
// rotated while it runs accepts the new key's tokens and refuses the old
// key's, although the old key's token was verified (and remembered) before,
// with no restart; the requests in between are each 200 or 401, never an
// error of the server.
func TestJWKSRotationWithoutRestart(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	oldKey, newKey := jwksTestKey(t), jwksTestKey(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	jwksTestWrite(t, path, map[string]*ecdsa.PrivateKey{"2026-01": oldKey})
	v, err := api.NewVerifier(api.AuthConfig{JWKSFile: path, JWKSRefresh: 50 * time.Millisecond, Audience: "fundsvc-api", Leeway: 5 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s := authzServer(t, env, v)
	now := time.Now()
	claims := authzClaims(authzAdminA, now)
	claims["aud"] = "fundsvc-api"
	oldTok := authzBearer(authzSign(t, jwt.SigningMethodES256, oldKey, "2026-01", claims))
	newTok := authzBearer(authzSign(t, jwt.SigningMethodES256, newKey, "2026-02", claims))
	get := func(auth string) int {
		r := s.do(t, http.MethodGet, "/v1/funds/FUND_A/documents", nil, "Authorization", auth)
		if r.Status != http.StatusOK && r.Status != http.StatusUnauthorized {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		return r.Status
	}
	if got := get(oldTok); got != http.StatusOK {
		t.Fatalf("the old key's token before the rotation: %d", got)
	}
	if got := get(newTok); got != http.StatusUnauthorized {
		t.Fatalf("the new key's token before the rotation: %d", got)
	}

	// Written in place, not renamed: a re-read may see it half written, and
	// must then keep the old keys until the next one.
	jwksTestWrite(t, path, map[string]*ecdsa.PrivateKey{"2026-02": newKey})
	deadline := time.Now().Add(10 * time.Second)
	for get(newTok) != http.StatusOK || get(oldTok) != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("10s after the rotation, the new key is not accepted or the old one still is")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Refused for good, not only on one request.
	for range 5 {
		if got := get(oldTok); got != http.StatusUnauthorized {
			t.Fatalf("the old key's token after the rotation: %d", got)
		}
	}
}

func jwksTestKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwksTestWrite writes a JWKS of the public halves of keys, by kid.
func jwksTestWrite(t *testing.T, path string, keys map[string]*ecdsa.PrivateKey) {
	t.Helper()
	var set []map[string]string
	for kid, k := range keys {
		point, err := k.PublicKey.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, map[string]string{"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
			"x": base64.RawURLEncoding.EncodeToString(point[1:33]), "y": base64.RawURLEncoding.EncodeToString(point[33:])})
	}
	doc, err := json.Marshal(map[string]any{"keys": set})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
}
