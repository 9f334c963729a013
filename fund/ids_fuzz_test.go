package fund

import (
	"strings"
	"testing"
	"time"
)

// isID is the ID rule written out by hand, without regexp, so that FuzzID
// checks the pattern in ids.go against a second reading of the same rule:
// 1 to 64 bytes, ASCII letters, digits and _ . : - only, starting with a
// letter or digit.
func isID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if i == 0 && !alnum {
			return false
		}
		if !alnum && c != '_' && c != '.' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

func FuzzID(f *testing.F) {
	for _, s := range []string{
		"DOC001", "a", "POSITION_1", "fund.a:b-c", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"", "DOC#1", "a b", "-a", "_a", ".a", "a/b", "é", "a\x00", "a\n", "\na", "A\u0130", "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := CheckID("positionId", s)
		if want := isID(s); (err == nil) != want {
			t.Fatalf("CheckID(%q) = %v; the rule says valid = %t", s, err, want)
		}
		if ValidID(s) != (err == nil) {
			t.Fatalf("ValidID(%q) = %t but CheckID(%q) = %v", s, ValidID(s), s, err)
		}
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != EINVALID || e.Field != "positionId" {
				t.Fatalf("CheckID(%q) = %#v, want EINVALID blaming positionId", s, err)
			}
			return
		}
		// An ID becomes part of a key such as "DOC#" + id; a '#' in it could
		// forge another entity's key.
		if strings.Contains(s, "#") {
			t.Fatalf("CheckID accepted %q, which contains '#'", s)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{
		"2025-11-01", "2024-02-29", "2025-02-29", "2025-13-01", "2025-00-10", "2025-1-01", "2025-01-1", "0000-01-01",
		"0001-01-01", "1899-12-31", "1900-01-01", "9999-12-31", "+025-01-01", "-025-01-01", "2025-01-01T00:00:00Z",
		"2025-01-01 ", " 2025-01-01", "2025/01/01", "", "２０２５-01-01", "2026-02-30", "2024-02-30", "2025-01-00", "31-12-2025",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		// The reference: what time.Parse accepts and writes back the same,
		// from MinYear on (earlier years are refused on purpose, so that no
		// date is the zero Date, which means "no date").
		ref, refErr := time.Parse(dateLayout, s)
		want := refErr == nil && ref.Format(dateLayout) == s && ref.Year() >= MinYear
		if (err == nil) != want {
			t.Fatalf("ParseDate(%q) = %v, %v; time.Parse gives %v, %v, so want accepted = %t", s, d, err, ref, refErr, want)
		}
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.Code != EINVALID {
				t.Fatalf("ParseDate(%q) = %#v, want EINVALID", s, err)
			}
			// A second reading of "not a calendar date": four, two and two
			// ASCII digits that time.Parse still refuses.
			shaped := len(s) == 10 && s[4] == '-' && s[7] == '-' && strings.Trim(s[:4]+s[5:7]+s[8:], "0123456789") == ""
			if calendar := strings.Contains(e.Message, "is not a calendar date"); calendar != (shaped && refErr != nil) {
				t.Fatalf("ParseDate(%q) says %q; YYYY-MM-DD shaped: %t, time.Parse: %v", s, e.Message, shaped, refErr)
			}
			return
		}
		if d.IsZero() || d.String() != s {
			t.Fatalf("ParseDate(%q) = %q (zero: %t), want the same date back", s, d, d.IsZero())
		}
	})
}
