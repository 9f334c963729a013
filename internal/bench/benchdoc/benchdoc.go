// Package benchdoc writes a benchmark's report into a Markdown file, such
// as docs/benchmarks.md, between markers named after the benchmark.
package benchdoc

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Splice replaces the text between the markers <!-- name:begin --> and
// <!-- name:end --> of the Markdown file at path with report, or appends
// the report between new markers when the file has none.
func Splice(path, name, report string) error {
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	s := string(old)
	block := begin + "\n" + report + end
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i >= 0 && j > i {
		s = s[:i] + block + s[j+len(end):]
	} else {
		s += "\n" + block + "\n"
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write report into %s: %w", path, err)
	}
	return nil
}
