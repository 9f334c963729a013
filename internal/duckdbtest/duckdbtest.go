// Package duckdbtest runs SQL in DuckDB, a Parquet reader independent of
// the code under test, for tests to check the files that code writes.
//
// Each Query starts `node tools/duckdb-query.mjs` with a fresh in-memory
// database, so it needs Node.js and `make tools` (which installs
// @duckdb/node-api into tools/node_modules). Read files with DuckDB's
// table functions:
//
//	res, err := duckdbtest.Query(ctx, "SELECT sum(amount) AS total FROM read_parquet('"+path+"')")
package duckdbtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fundsvc/fundsvc/internal/harness"
)

const (
	// script is the query runner, relative to the repository root.
	script = "tools/duckdb-query.mjs"
	// apiPackage is where `make tools` installs @duckdb/node-api.
	apiPackage = "tools/node_modules/@duckdb/node-api/package.json"
)

// Result is the result of a query. Every value is DuckDB's own text for it,
// as CAST(value AS VARCHAR) gives it: DECIMAL keeps its exact digits and
// scale ("123456789012345.1234", "-0.0001"), DATE is "2006-01-02",
// TIMESTAMP is like "2026-11-22 10:11:12.5". A nil value is NULL.
//
// Statements that cannot be a subquery (PRAGMA, COPY, DDL) have their values
// rendered by @duckdb/node-api instead, which differs from DuckDB's text
// for FLOAT and DOUBLE.
type Result struct {
	// Columns are the column names, in order; they may repeat.
	Columns []string
	// Types are the DuckDB types of the columns, like "DECIMAL(19,4)",
	// "DATE", "TIMESTAMP", "VARCHAR".
	Types []string
	// Rows hold one value per column each.
	Rows [][]*string
}

// Maps returns each row as a map from column name to value, with NULL as
// "". A repeated column name keeps its last value.
func (r *Result) Maps() []map[string]string {
	maps := make([]map[string]string, len(r.Rows))
	for i, row := range r.Rows {
		m := make(map[string]string, len(row))
		for j, v := range row {
			if j >= len(r.Columns) {
				break
			}
			s := ""
			if v != nil {
				s = *v
			}
			m[r.Columns[j]] = s
		}
		maps[i] = m
	}
	return maps
}

// Column returns the values of the named column, one per row, nil for
// NULL; it is an error if no column, or more than one, has that name.
func (r *Result) Column(name string) ([]*string, error) {
	idx := -1
	for i, c := range r.Columns {
		if c != name {
			continue
		}
		if idx >= 0 {
			return nil, fmt.Errorf("duckdbtest: more than one column named %q in %q", name, r.Columns)
		}
		idx = i
	}
	if idx < 0 {
		return nil, fmt.Errorf("duckdbtest: no column %q in %q", name, r.Columns)
	}
	vals := make([]*string, len(r.Rows))
	for i, row := range r.Rows {
		if idx < len(row) {
			vals[i] = row[idx]
		}
	}
	return vals, nil
}

// Value returns the only value of a result of one row and one column,
// "" for NULL; it is an error if the result has any other shape.
func (r *Result) Value() (string, error) {
	if len(r.Columns) != 1 || len(r.Rows) != 1 || len(r.Rows[0]) != 1 {
		return "", fmt.Errorf("duckdbtest: want 1 row of 1 column, got %d rows of columns %q", len(r.Rows), r.Columns)
	}
	if v := r.Rows[0][0]; v != nil {
		return *v, nil
	}
	return "", nil
}

type request struct {
	SQL   string   `json:"sql"`
	Setup []string `json:"setup,omitempty"`
}

type response struct {
	Columns []string    `json:"columns"`
	Types   []string    `json:"types"`
	Rows    [][]*string `json:"rows"`
}

// Query runs the setup statements and then sql, a single statement, in a
// new in-memory DuckDB, and returns the result of sql. Nothing persists
// between calls except files the statements write.
func Query(ctx context.Context, sql string, setup ...string) (*Result, error) {
	root, err := harness.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("duckdbtest: %w", err)
	}
	if _, err := os.Stat(filepath.Join(root, apiPackage)); err != nil {
		return nil, fmt.Errorf("duckdbtest: @duckdb/node-api not installed at %s: run `make tools`", filepath.Dir(filepath.Join(root, apiPackage)))
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("duckdbtest: Node.js is needed to run DuckDB: %w", err)
	}

	in, err := json.Marshal(request{SQL: sql, Setup: setup})
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, filepath.Join(root, script))
	cmd.Dir = root
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "(no output on stderr)"
		}
		return nil, fmt.Errorf("duckdbtest: query %q: %w: %s", sql, err, msg)
	}

	var resp response
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("duckdbtest: query %q: decode output of %s: %w", sql, script, err)
	}
	if len(resp.Types) != len(resp.Columns) {
		return nil, fmt.Errorf("duckdbtest: query %q: %d column names but %d types", sql, len(resp.Columns), len(resp.Types))
	}
	for i, row := range resp.Rows {
		if len(row) != len(resp.Columns) {
			return nil, fmt.Errorf("duckdbtest: query %q: row %d has %d values for %d columns", sql, i, len(row), len(resp.Columns))
		}
	}
	return &Result{Columns: resp.Columns, Types: resp.Types, Rows: resp.Rows}, nil
}
