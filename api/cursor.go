package api

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
)

// cursor is the state of a paginated read. It travels as an opaque token:
// base64url(nonce || AES-256-GCM(JSON)), sealed with the query it continues
// as associated data. A client can neither read it (it may hold the keys of
// items the caller was not shown) nor alter it, and a token from one query,
// or one principal, is refused by every other.
type cursor struct {
	Query string        `json:"-"`           // which query it continues: sealed in, not stored
	Key   store.PageKey `json:"k,omitempty"` // where the store resumes: opaque
	// Overview pages pin one committed version.
	Commit  string `json:"c,omitempty"`
	Version int    `json:"v,omitempty"`
	After   string `json:"a,omitempty"`
	// The basis of the first page (basis.go), which the pages after it
	// are read on.
	Basis *pinnedBasis `json:"b,omitempty"`
}

// pinnedBasis is a basis as a cursor carries it.
type pinnedBasis struct {
	AsOf    fund.Date `json:"d,omitzero"`
	KnownAt time.Time `json:"t"`
	Asked   bool      `json:"a,omitempty"` // basis.asked
}

type cursorCodec struct{ key []byte }

func (cc cursorCodec) aead() cipher.AEAD {
	k := sha256.Sum256(append([]byte("fundsvc cursor v1\x00"), cc.key...))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return gcm
}

func (cc cursorCodec) encode(c cursor) string {
	plain, _ := json.Marshal(c)
	gcm := cc.aead()
	nonce := make([]byte, gcm.NonceSize(), gcm.NonceSize()+len(plain)+gcm.Overhead())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(gcm.Seal(nonce, nonce, plain, []byte(c.Query)))
}

// maxCursor bounds a cursor token's length.
const maxCursor = 4096

// decode opens a cursor and checks that it continues query. It returns
// EINVALID for anything else.
func (cc cursorCodec) decode(s, query string) (cursor, error) {
	bad := fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
	if len(s) > maxCursor {
		return cursor{}, bad
	}
	// Strict: unused trailing bits must be zero, so no two tokens decode alike.
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	gcm := cc.aead()
	if err != nil || len(b) < gcm.NonceSize()+gcm.Overhead() {
		return cursor{}, bad
	}
	plain, err := gcm.Open(nil, b[:gcm.NonceSize()], b[gcm.NonceSize():], []byte(query))
	if err != nil {
		return cursor{}, bad
	}
	var c cursor
	if err := json.Unmarshal(plain, &c); err != nil {
		return cursor{}, bad
	}
	c.Query = query
	return c, nil
}
