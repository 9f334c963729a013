package api

import (
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// TestKnownTokensExpireWithTheToken: a remembered token is accepted without
// a second signature check, but never past its exp, never past a minute, and
// a token that differs in any byte is checked afresh.
func TestKnownTokensExpireWithTheToken(t *testing.T) {
	secret := []byte("known-token-test-secret-0123456789")
	v, err := NewVerifier(AuthConfig{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	v.now = func() time.Time { return now }
	p := Principal{Subject: "portal", Role: RoleInvestor, Investor: "INVESTOR_1"}
	short, err := MintToken(secret, p, "", "", 30*time.Second, now)
	if err != nil {
		t.Fatal(err)
	}
	long, err := MintToken(secret, p, "", "", time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{short, long} {
		if got, err := v.Verify(tok); err != nil || got.Investor != "INVESTOR_1" {
			t.Fatalf("first use: %+v, %v", got, err)
		}
	}
	if n := len(v.known.m); n != 2 {
		t.Fatalf("%d tokens remembered, want 2", n)
	}
	// Within the minute and before exp: from memory, with the same principal.
	now = now.Add(20 * time.Second)
	if got, ok := v.known.get(short, now, 0); !ok || got.Subject != p.Subject || got.Role != p.Role || got.Investor != p.Investor {
		t.Fatalf("short token within its life: %+v, %v", got, ok)
	}
	// Past the short token's exp: refused, though remembered less than a minute ago.
	now = now.Add(20 * time.Second)
	if _, err := v.Verify(short); fund.ErrorCode(err) != fund.EUNAUTHORIZED {
		t.Fatalf("expired token accepted: %v", err)
	}
	// Past the minute: the long token is checked again (and still good).
	now = now.Add(time.Minute)
	if _, ok := v.known.get(long, now, 0); ok {
		t.Fatal("a token remembered for more than a minute")
	}
	if _, err := v.Verify(long); err != nil {
		t.Fatalf("long token after a minute: %v", err)
	}
	// A token whose signature differs in one character is not the
	// remembered one (not the last character: some of its bits are padding).
	i := len(long) - 5
	c := byte('A')
	if long[i] == c {
		c = 'B'
	}
	tampered := long[:i] + string(c) + long[i+1:]
	if _, err := v.Verify(tampered); fund.ErrorCode(err) != fund.EUNAUTHORIZED {
		t.Fatalf("tampered token accepted: %v", err)
	}
}
