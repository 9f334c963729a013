package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
)

// cursor is the state of a paginated read. It travels as an opaque token:
// base64url(JSON) "." base64url(HMAC-SHA256), so a client can neither read
// meaning into it nor alter it, and a token from one query is refused by
// another.
type cursor struct {
	Query string            `json:"q"`           // which query it continues
	Key   map[string]string `json:"k,omitempty"` // DynamoDB's LastEvaluatedKey
	// Overview pages pin one committed version.
	Commit  string `json:"c,omitempty"`
	Version int    `json:"v,omitempty"`
	After   string `json:"a,omitempty"`
}

type cursorCodec struct{ key []byte }

func (cc cursorCodec) sign(b []byte) []byte {
	m := hmac.New(sha256.New, cc.key)
	m.Write(b)
	return m.Sum(nil)
}

func (cc cursorCodec) encode(c cursor) string {
	b, _ := json.Marshal(c)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(b) + "." + enc.EncodeToString(cc.sign(b))
}

// decode verifies a cursor and that it continues query. It returns EINVALID
// for anything else.
func (cc cursorCodec) decode(s, query string) (cursor, error) {
	bad := fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
	body, mac, ok := strings.Cut(s, ".")
	if !ok || len(s) > 4096 {
		return cursor{}, bad
	}
	// Strict: unused trailing bits must be zero, so no two tokens decode alike.
	enc := base64.RawURLEncoding.Strict()
	b, err1 := enc.DecodeString(body)
	m, err2 := enc.DecodeString(mac)
	if err1 != nil || err2 != nil || !hmac.Equal(m, cc.sign(b)) {
		return cursor{}, bad
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Query != query {
		return cursor{}, bad
	}
	return c, nil
}

func keyToStrings(k fund.PageKey) map[string]string {
	if len(k) == 0 {
		return nil
	}
	out := make(map[string]string, len(k))
	for name, av := range k {
		if s, ok := av.(*types.AttributeValueMemberS); ok {
			out[name] = s.Value
		}
	}
	return out
}

func stringsToKey(m map[string]string) fund.PageKey {
	if len(m) == 0 {
		return nil
	}
	k := make(fund.PageKey, len(m))
	for name, v := range m {
		k[name] = &types.AttributeValueMemberS{Value: v}
	}
	return k
}
