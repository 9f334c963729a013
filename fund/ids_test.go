package fund

import (
	"errors"
	"testing"
)

// TestParseDateSaysWhyADateIsRefused checks the message of each refusal:
// a day the calendar does not have is refused as such, with the reason,
// while a string that is not YYYY-MM-DD is refused as malformed. Bodies and
// queries read dates through ParseDate, so these are their messages too.
func TestParseDateSaysWhyADateIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"February 30 is not in the calendar", "2026-02-30", `"2026-02-30" is not a calendar date: February 2026 has 28 days (2026 is not a leap year)`},
		{"February 29 of a common year is not in the calendar", "2025-02-29", `"2025-02-29" is not a calendar date: February 2025 has 28 days (2025 is not a leap year)`},
		{"February 30 of a leap year is not in the calendar", "2024-02-30", `"2024-02-30" is not a calendar date: February 2024 has 29 days`},
		{"February 29 of 1900, a century that is not a leap year, is not in the calendar", "1900-02-29", `"1900-02-29" is not a calendar date: February 1900 has 28 days (1900 is not a leap year)`},
		{"month 13 is not in the calendar", "2025-13-01", `"2025-13-01" is not a calendar date: there is no month 13; months run from 01 to 12`},
		{"month 00 is not in the calendar", "2025-00-10", `"2025-00-10" is not a calendar date: there is no month 00; months run from 01 to 12`},
		{"day 00 is not in the calendar", "2025-01-00", `"2025-01-00" is not a calendar date: there is no day 00; days run from 01`},
		{"September 31 is not in the calendar", "2025-09-31", `"2025-09-31" is not a calendar date: September 2025 has 30 days`},
		{"January 32 is not in the calendar", "2025-01-32", `"2025-01-32" is not a calendar date: January 2025 has 31 days`},
		{"slashes are malformed", "2025/12/31", `"2025/12/31" is not a valid date: want YYYY-MM-DD`},
		{"day first is malformed", "31-12-2025", `"31-12-2025" is not a valid date: want YYYY-MM-DD`},
		{"a one-digit month is malformed", "2025-1-01", `"2025-1-01" is not a valid date: want YYYY-MM-DD`},
		{"a time after the date is malformed", "2025-01-01T00:00:00Z", `"2025-01-01T00:00:00Z" is not a valid date: want YYYY-MM-DD`},
		{"a sign in the year is malformed", "+025-02-30", `"+025-02-30" is not a valid date: want YYYY-MM-DD`},
		{"non-ASCII digits are malformed", "２０２５-02-30", `"２０２５-02-30" is not a valid date: want YYYY-MM-DD`},
		{"the empty string is malformed", "", `"" is not a valid date: want YYYY-MM-DD`},
		{"a year before 1900 is refused as such", "1899-12-31", `"1899-12-31" is not a valid date: years before 1900 are not accepted`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDate(tc.in)
			var e *Error
			if !errors.As(err, &e) || e.Code != EINVALID {
				t.Fatalf("ParseDate(%q) = %v, %v; want EINVALID", tc.in, d, err)
			}
			if e.Message != tc.want {
				t.Errorf("ParseDate(%q) says %q,\nwant %q", tc.in, e.Message, tc.want)
			}
		})
	}

	// The positive controls: the last day of each month, leap days included.
	for _, s := range []string{"2024-02-29", "2000-02-29", "2025-02-28", "2025-04-30", "2025-12-31", "1900-01-01", "9999-12-31"} {
		if d, err := ParseDate(s); err != nil || d.String() != s {
			t.Errorf("ParseDate(%q) = %v, %v; want the date back", s, d, err)
		}
	}
}
