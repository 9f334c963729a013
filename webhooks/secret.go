// Package webhooks delivers the event feed to administrators' endpoints,
// signed as Standard Webhooks 1.0 asks, at least once across instances:
// each delivery is claimed in the table with a lease (store/webhooks.go),
// retried on a schedule, and logged. It reaches the table only through
// store. See docs/webhooks.md.
package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// SecretPrefix begins every signing secret, as Standard Webhooks names them.
const SecretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and 24 random bytes in
// base64, the form the reference libraries read.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sealer encrypts signing secrets at rest with AES-256-GCM, so a copy of
// the table (a backup, the export's Scan, an operator's read) holds no
// usable secret: delivery needs the secret itself (HMAC is symmetric), so a
// one-way hash would not do, and the key lives in the configuration, not
// in the table.
type Sealer struct{ aead cipher.AEAD }

// NewSealer returns a Sealer with a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("webhooks: the secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// ParseSealerKey reads the key as configured: 32 bytes in standard base64.
func ParseSealerKey(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(k) != 32 {
		return nil, errors.New("must be 32 bytes in standard base64 (openssl rand -base64 32)")
	}
	return k, nil
}

// Seal encrypts secret, bound to the endpoint's ID so that a sealed secret
// copied onto another endpoint does not open.
func (s *Sealer) Seal(endpointID, secret string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(secret), []byte(endpointID))
}

// Open decrypts what Seal sealed for endpointID.
func (s *Sealer) Open(endpointID string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("webhooks: a sealed secret is too short")
	}
	b, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(endpointID))
	if err != nil {
		return "", errors.New("webhooks: a sealed secret does not open with this key")
	}
	return string(b), nil
}
