package api

import (
	"bytes"
	"crypto/elliptic"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestAJWKSFileOfTheLimitIsReadAndALargerOneIsNot drives maxJWKSBytes, 1
// MiB: a JWKS file of exactly 1,048,576 bytes is read, at start and on a
// re-read; one of 1,048,577 is refused at start, and on a re-read is not
// taken: the last good keys stay.
func TestAJWKSFileOfTheLimitIsReadAndALargerOneIsNot(t *testing.T) {
	a, b := newECKey(t, elliptic.P256()), newECKey(t, elliptic.P256())
	// sized is doc padded with trailing spaces (valid JSON) to n bytes.
	sized := func(t *testing.T, doc []byte, n int) []byte {
		t.Helper()
		if len(doc) > n {
			t.Fatalf("the document has %d bytes, more than %d", len(doc), n)
		}
		return append(doc, bytes.Repeat([]byte(" "), n-len(doc))...)
	}
	if maxJWKSBytes != 1<<20 {
		t.Fatalf("maxJWKSBytes = %d, the documented limit is 1 MiB", maxJWKSBytes)
	}
	docA, docB := jwksDoc(t, ecJWK(t, "a", a)), jwksDoc(t, ecJWK(t, "b", b))

	f := newJWKSFileVerifier(t, time.Hour, sized(t, docA, 1<<20))
	tokA := signed(t, jwt.SigningMethodES256, a, "a", f.clock, time.Hour)
	tokB := signed(t, jwt.SigningMethodES256, b, "b", f.clock, time.Hour)
	if !f.accepts(t, tokA) {
		t.Fatalf("the token of key a, in a file of 1 MiB, was refused; logs: %s", f.logs)
	}

	f.write(t, sized(t, docB, 1<<20+1))
	f.clock = f.clock.Add(jwksUnknownKidInterval)
	if f.accepts(t, tokB) {
		t.Error("the token of key b, in a file of 1 MiB + 1 byte, was accepted")
	}
	if f.reads != 1 || !strings.Contains(f.logs.String(), "larger than 1048576 bytes") {
		t.Errorf("%d reads; the refused file is not logged as too large: %s", f.reads, f.logs)
	}
	if !f.accepts(t, tokA) {
		t.Error("after a file of 1 MiB + 1 byte, the last good key a was refused")
	}

	f.write(t, sized(t, docB, 1<<20))
	f.clock = f.clock.Add(jwksUnknownKidInterval)
	if !f.accepts(t, tokB) {
		t.Errorf("the token of key b, in a file of 1 MiB again, was refused; logs: %s", f.logs)
	}

	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, sized(t, docA, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewVerifier(AuthConfig{JWKSFile: path, Audience: jwksAudience}); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("a verifier on a file of 1 MiB + 1 byte: %v, want refused as larger than 1048576 bytes", err)
	}
}
