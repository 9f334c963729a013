package api

import (
	"errors"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

// TestACursorOfTheLimitOpensAndALongerOneIsRefusedUnread drives maxCursor,
// 4,096 characters: a cursor the codec sealed that is exactly 4,096
// characters long opens; one sealed the same way of 4,098 (the next length
// a sealed cursor can have: base64 of one byte more) is refused as not
// this query's, without being opened, as is one of 4,097 characters.
func TestACursorOfTheLimitOpensAndALongerOneIsRefusedUnread(t *testing.T) {
	cc := cursorCodec{key: []byte("cursor-limit-test-key-of-32bytes")}
	const query = "GET /v1/funds/FUND_A/positions"
	// sealed is a cursor of query whose token has exactly n characters.
	sealed := func(t *testing.T, n int) (cursor, string) {
		t.Helper()
		c := cursor{Query: query}
		for pad := 0; pad < n; pad++ {
			c.After = strings.Repeat("a", pad)
			if s := cc.encode(c); len(s) >= n {
				if len(s) != n {
					t.Fatalf("no sealed cursor has %d characters (the next is %d)", n, len(s))
				}
				return c, s
			}
		}
		t.Fatalf("no sealed cursor of %d characters", n)
		return c, ""
	}
	refused := func(t *testing.T, token string) {
		t.Helper()
		_, err := cc.decode(token, query)
		var fe *fund.Error
		if !errors.As(err, &fe) || fe.Code != fund.EINVALID || fe.Field != "cursor" || !strings.Contains(fe.Message, "not a cursor this query issued") {
			t.Errorf("a cursor of %d characters: %v, want EINVALID of field cursor: not a cursor this query issued", len(token), err)
		}
	}

	if maxCursor != 4096 {
		t.Fatalf("maxCursor = %d, the documented limit is 4096", maxCursor)
	}
	want, token := sealed(t, 4096)
	got, err := cc.decode(token, query)
	if err != nil || got.After != want.After {
		t.Fatalf("a sealed cursor of 4096 characters: %v, After of %d bytes, want %d", err, len(got.After), len(want.After))
	}
	if _, err := cc.decode(token, query+"?kind=x"); fund.ErrorCode(err) != fund.EINVALID {
		t.Errorf("a cursor of 4096 characters of another query: %v, want EINVALID", err)
	}
	_, longer := sealed(t, 4098)
	refused(t, longer)
	refused(t, token+"A")
}
