package fund

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// MaxIDLength is the longest ID, in bytes.
const MaxIDLength = 64

// idPattern admits no '#', so no ID can forge another entity's key.
var idPattern = regexp.MustCompile(fmt.Sprintf(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,%d}$`, MaxIDLength-1))

// ValidID reports whether id may name a document, fund, investor or position.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// CheckID returns EINVALID blaming field unless id is a valid ID.
func CheckID(field, id string) error {
	if id == "" {
		return Invalid(field, "is required")
	}
	if !ValidID(id) {
		return Invalid(field, "%s is not a valid ID: 1 to 64 characters, letters, digits and _ . : - only, starting with a letter or digit", quoteShort(id))
	}
	return nil
}

// quoteShort quotes s for an error message, cut to about 70 bytes without
// splitting a character.
func quoteShort(s string) string {
	if len(s) > 70 {
		s = strings.ToValidUTF8(s[:70], "") + "…"
	}
	return `"` + s + `"`
}

// Date is a calendar date (YYYY-MM-DD) with no time zone.
type Date struct{ t time.Time }

const dateLayout = "2006-01-02"

// MinYear is the earliest year a date may have. It keeps every valid date
// apart from the zero Date, which means "no date".
const MinYear = 1900

// ParseDate parses a YYYY-MM-DD date from MinYear on; it returns EINVALID
// otherwise. Its messages are those of every date a request holds, in a
// body or a query: a day the calendar does not have (2026-02-30,
// 2025-13-01) is refused as such, anything else that is not YYYY-MM-DD as
// malformed.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(dateLayout, s)
	if err != nil || len(s) != len(dateLayout) {
		if why := notInCalendar(s); why != "" {
			return Date{}, Errorf(EINVALID, "%s is not a calendar date: %s", quoteShort(s), why)
		}
		return Date{}, Errorf(EINVALID, "%s is not a valid date: want YYYY-MM-DD", quoteShort(s))
	}
	if t.Year() < MinYear {
		return Date{}, Errorf(EINVALID, "%s is not a valid date: years before %d are not accepted", quoteShort(s), MinYear)
	}
	return Date{t: t}, nil
}

// notInCalendar says why s, which has the shape YYYY-MM-DD (ASCII digits),
// names no day of the calendar: "there is no month 13", "February 2026
// has 28 days". It returns "" when s does not have that shape.
func notInCalendar(s string) string {
	if len(s) != len(dateLayout) || s[4] != '-' || s[7] != '-' {
		return ""
	}
	number := func(digits string) (int, bool) {
		n := 0
		for i := 0; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return 0, false
			}
			n = n*10 + int(digits[i]-'0')
		}
		return n, true
	}
	year, okY := number(s[:4])
	month, okM := number(s[5:7])
	day, okD := number(s[8:])
	switch {
	case !okY || !okM || !okD:
		return ""
	case month < 1 || month > 12:
		return fmt.Sprintf("there is no month %s; months run from 01 to 12", s[5:7])
	case day < 1:
		return "there is no day 00; days run from 01"
	}
	// The day after the month's last is the first of the next month.
	last := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if day <= last {
		return "" // a real day: not this function's to refuse
	}
	why := fmt.Sprintf("%s %04d has %d days", time.Month(month), year, last)
	if month == 2 && last == 28 {
		why += fmt.Sprintf(" (%04d is not a leap year)", year)
	}
	return why
}

// MustDate parses s and panics if it is not a date. For code and tests only.
func MustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DateOf is the UTC date of the instant t.
func DateOf(t time.Time) Date {
	y, m, d := t.UTC().Date()
	return Date{t: time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// IsZero reports whether d is unset.
func (d Date) IsZero() bool { return d.t.IsZero() }

// String returns YYYY-MM-DD, or "" for the zero date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.t.Format(dateLayout)
}

// Append appends what String returns to b.
func (d Date) Append(b []byte) []byte {
	if d.IsZero() {
		return b
	}
	return d.t.AppendFormat(b, dateLayout)
}

// Time returns midnight UTC of d (the zero time for the zero date).
func (d Date) Time() time.Time { return d.t }

// Before reports whether d is before o.
func (d Date) Before(o Date) bool { return d.t.Before(o.t) }

// Compare returns -1, 0 or +1 as d is before, equal to or after o.
func (d Date) Compare(o Date) int { return d.t.Compare(o.t) }

// MarshalText writes YYYY-MM-DD; it makes Date a string in JSON and DynamoDB.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses YYYY-MM-DD.
func (d *Date) UnmarshalText(b []byte) error {
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
