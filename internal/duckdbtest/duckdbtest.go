// Package duckdbtest runs SQL in DuckDB, a Parquet reader independent of
// the code under test, for tests to check the files that code writes.
//
// Each Query runs in a fresh in-memory database of `node
// tools/duckdb-query.mjs`, so it needs Node.js and `make tools` (which
// installs @duckdb/node-api into tools/node_modules). A test process keeps
// its runners for its next queries (starting Node.js and loading DuckDB
// costs some 0.5 CPU-seconds, more than most queries); they end with it.
// Read files with DuckDB's table functions:
//
//	res, err := duckdbtest.Query(ctx, "SELECT sum(amount) AS total FROM read_parquet('"+path+"')")
package duckdbtest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

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
	Error   string      `json:"error"`
}

// Query runs the setup statements and then sql, a single statement, in a
// new in-memory DuckDB, and returns the result of sql. Nothing persists
// between calls except files the statements write.
func Query(ctx context.Context, sql string, setup ...string) (*Result, error) {
	in, err := json.Marshal(request{SQL: sql, Setup: setup})
	if err != nil {
		return nil, err
	}
	r, err := idle.take()
	if err != nil {
		return nil, err
	}
	resp, err := r.ask(ctx, in)
	if err != nil {
		r.kill()
		return nil, fmt.Errorf("duckdbtest: query %q: %w", sql, err)
	}
	idle.put(r)
	if resp.Error != "" {
		return nil, fmt.Errorf("duckdbtest: query %q: %s", sql, resp.Error)
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

// idle are the runners no query uses now: one per query a test process
// ran at the same time, at most.
var idle runners

type runners struct {
	mu   sync.Mutex
	free []*runner
}

func (rs *runners) take() (*runner, error) {
	rs.mu.Lock()
	if n := len(rs.free); n > 0 {
		r := rs.free[n-1]
		rs.free = rs.free[:n-1]
		rs.mu.Unlock()
		return r, nil
	}
	rs.mu.Unlock()
	return startRunner()
}

func (rs *runners) put(r *runner) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.free = append(rs.free, r)
}

// runner is one `node tools/duckdb-query.mjs`, answering a request line
// with a response line. It reads its stdin to the end, so it ends with the
// test process that holds the pipe's other end, however that ends.
type runner struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer // read only once the process has exited
}

func startRunner() (*runner, error) {
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
	r := &runner{cmd: exec.Command(node, filepath.Join(root, script)), stderr: &bytes.Buffer{}}
	r.cmd.Dir = root
	r.cmd.Stderr = r.stderr
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r.stdout = bufio.NewReaderSize(out, 1<<20)
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("duckdbtest: start %s: %w", script, err)
	}
	return r, nil
}

// ask sends one request line and reads its response line, or gives up
// when ctx ends (the caller then kills the runner).
func (r *runner) ask(ctx context.Context, line []byte) (*response, error) {
	type answer struct {
		resp *response
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		if _, err := r.stdin.Write(append(line, '\n')); err != nil {
			done <- answer{err: r.exited(err)}
			return
		}
		text, err := r.stdout.ReadBytes('\n')
		if err != nil {
			done <- answer{err: r.exited(err)}
			return
		}
		var resp response
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&resp); err != nil {
			done <- answer{err: fmt.Errorf("decode the answer of %s: %w", script, err)}
			return
		}
		done <- answer{resp: &resp}
	}()
	select {
	case a := <-done:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// exited waits for a runner whose pipe failed and says why it ended.
func (r *runner) exited(err error) error {
	werr := r.cmd.Wait()
	msg := cmp.Or(strings.TrimSpace(r.stderr.String()), "(no output on stderr)")
	return fmt.Errorf("%s ended (%v, %v): %s", script, err, werr, msg)
}

// kill ends a runner that is not to be asked again.
func (r *runner) kill() {
	_ = r.cmd.Process.Kill()
	_ = r.stdin.Close()
}
