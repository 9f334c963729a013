package dynamotest

import (
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/internal/harness"
)

// UniqueName returns a table name for t that no other test, package or run
// uses: prefix, t's name, and a random suffix, in the characters DynamoDB
// allows (A-Z a-z 0-9 _ - .) and within its 255-character limit. Tests of
// different packages may share one server (see EndpointEnv), so a name must
// be unique across processes, not only within one.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	suffix := "-" + harness.RandomHex(6)

	name := tableNameChars(prefix)
	if name != "" {
		name += "-"
	}
	name += tableNameChars(t.Name())
	if max := 255 - len(suffix); len(name) > max {
		name = name[:max]
	}
	return name + suffix
}

// tableNameChars replaces every character DynamoDB does not allow in a table
// name with '_'; a subtest's "/" becomes "_".
func tableNameChars(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9',
			r == '_', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}
