package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/duckdbtest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

var snapshotDate = fund.MustDate("2026-11-22")

// service is the REST API over a fresh table, with an all-funds admin token.
type service struct {
	*fundtest.Env
	url, token string
}

func newService(t *testing.T) *service {
	t.Helper()
	env := fundtest.New(t)
	secret := []byte("export-test-secret-0123456789abcdef")
	v, err := api.NewVerifier(api.AuthConfig{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(api.Options{
		Documents: env.Store, Positions: env.Positions, Verifier: v,
		Logger:       slog.New(slog.NewJSONHandler(io.Discard, nil)),
		MaxBodyBytes: 4 << 20, DefaultLimit: 100, MaxLimit: 1000,
	}))
	t.Cleanup(srv.Close)
	tok, err := api.MintToken(secret, api.Principal{Subject: "export-test", Role: "admin", Funds: []string{"*"}}, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &service{Env: env, url: srv.URL, token: tok}
}

// call sends one request, with headers given as name-value pairs, and
// decodes the JSON answer; it fails t unless the status is want (any 2xx
// for 0).
func (s *service) call(t *testing.T, method, path string, body any, want int, headers ...string) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if want != 0 && res.StatusCode != want || want == 0 && res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return out
}

// all follows a list route's cursors and returns every item.
func (s *service) all(t *testing.T, path string) []map[string]any {
	t.Helper()
	var items []map[string]any
	cursor := ""
	for {
		p := path + "?limit=1000"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		page := s.call(t, http.MethodGet, p, nil, http.StatusOK)
		for _, it := range page["items"].([]any) {
			items = append(items, it.(map[string]any))
		}
		next, _ := page["next"].(string)
		if next == "" {
			return items
		}
		cursor = next
	}
}

// runExport exports e's table into sink for snapshotDate.
func runExport(t *testing.T, e *fundtest.Env, sink export.Sink, tweak func(*export.Config)) *export.Manifest {
	t.Helper()
	cfg := export.Config{Store: e.Store, Sink: sink, Date: snapshotDate, Segments: 3, TempDir: t.TempDir()}
	if tweak != nil {
		tweak(&cfg)
	}
	m, err := export.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	return m
}

func dirSink(t *testing.T) (export.Sink, string) {
	t.Helper()
	dir := t.TempDir()
	sink, err := export.OpenSink(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sink, dir
}

// mirror downloads every object of bucket into a new directory, so DuckDB
// (which has no network access here) can read them; it checks each data
// file's size against the manifest when one names it.
func mirror(t *testing.T, client *s3.Client, bucket string) string {
	t.Helper()
	dir := t.TempDir()
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			obj, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(obj.Body)
			obj.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(b)) != aws.ToInt64(o.Size) {
				t.Fatalf("object %s: read %d bytes, listed %d", aws.ToString(o.Key), len(b), aws.ToInt64(o.Size))
			}
			local := filepath.Join(dir, bucket, filepath.FromSlash(aws.ToString(o.Key)))
			if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(local, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// published returns the local paths of the files a dataset's table reads
// for snapshotDate, as Athena does: the slot the date's manifest names,
// then that slot's symlink file under root (a local destination, or a
// mirror of a bucket holding s3:// URIs). A date without a manifest reads
// no files.
func published(t *testing.T, root, prefix, dataset string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(prefix), filepath.FromSlash(export.ManifestKey(snapshotDate))))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var m export.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	return symlinked(t, root, prefix, dataset, m.Slot)
}

// symlinked returns the local paths of the files the symlink file of a
// dataset and slot of snapshotDate lists, nil if there is none.
func symlinked(t *testing.T, root, prefix, dataset, slot string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(prefix), filepath.FromSlash(export.SymlinkKey(dataset, snapshotDate, slot))))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "s3://"); ok {
			line = filepath.Join(root, filepath.FromSlash(rest))
		}
		files = append(files, line)
	}
	return files
}

// views are DuckDB setup statements that read a destination's tables for
// snapshotDate as Athena reads them through the DDL: the snapshots table
// over the date's manifest (one JSON record per line, as Athena's JSON
// SerDe needs), each dataset's table of symlink files over both slots
// (every file either slot lists, as a table without dynamic filtering
// reads them, so a listed file that is missing fails the query), and then
// each dataset's view exactly as export.DDL writes it, which keeps the
// slot the manifest names.
func views(t *testing.T, root, prefix string) []string {
	t.Helper()
	return viewsIn(t, root, prefix, "main")
}

// viewsIn are views, in a schema of DuckDB's.
func viewsIn(t *testing.T, root, prefix, schema string) []string {
	t.Helper()
	date := snapshotDate.String()
	q := func(name string) string { return schema + "." + name }
	manifest := filepath.Join(root, filepath.FromSlash(prefix), filepath.FromSlash(export.ManifestKey(snapshotDate)))
	out := []string{"CREATE VIEW " + q(export.SnapshotsTable) + " AS SELECT NULL::VARCHAR AS run_id, NULL::VARCHAR AS slot, NULL::VARCHAR AS snapshot_date WHERE false"}
	if _, err := os.Stat(manifest); err == nil {
		out[0] = fmt.Sprintf(`CREATE VIEW %s AS SELECT runId AS run_id, slot, '%s' AS snapshot_date
			FROM read_json('%s', format = 'newline_delimited', columns = {runId: 'VARCHAR', slot: 'VARCHAR'})`, q(export.SnapshotsTable), date, manifest)
	}
	for _, name := range export.Datasets {
		var parts []string
		for _, slot := range export.Slots {
			files := symlinked(t, root, prefix, name, slot)
			if len(files) == 0 {
				continue
			}
			quoted := make([]string, len(files))
			for i, f := range files {
				quoted[i] = "'" + f + "'"
			}
			parts = append(parts, fmt.Sprintf("SELECT *, '%s' AS snapshot_date, '%s' AS slot FROM read_parquet([%s], hive_partitioning = false)",
				date, slot, strings.Join(quoted, ", ")))
		}
		if len(parts) == 0 {
			var nulls []string
			for _, f := range export.Schema(name).Fields() {
				nulls = append(nulls, fmt.Sprintf(`NULL AS "%s"`, f.Name()))
			}
			parts = append(parts, "SELECT "+strings.Join(nulls, ", ")+", NULL::VARCHAR AS snapshot_date, NULL::VARCHAR AS slot WHERE false")
		}
		out = append(out, fmt.Sprintf("CREATE VIEW %s AS %s", q(export.SlotsTable(name)), strings.Join(parts, " UNION ALL BY NAME ")))
		// The view as the DDL writes it, its names in the schema.
		ddl := export.DDL(name, "s3://lake/")
		view := strings.TrimSuffix(ddl[strings.Index(ddl, "CREATE OR REPLACE VIEW"):], ";")
		view = strings.NewReplacer(
			"VIEW "+name+" AS", "VIEW "+q(name)+" AS",
			"FROM "+export.SlotsTable(name)+" t", "FROM "+q(export.SlotsTable(name))+" t",
			"JOIN "+export.SnapshotsTable+" s", "JOIN "+q(export.SnapshotsTable)+" s",
		).Replace(view)
		out = append(out, view)
	}
	return out
}

// duck runs sql over the views and returns rows of text (NULL as "NULL").
func duck(t *testing.T, setup []string, sql string) [][]string {
	t.Helper()
	res, err := duckdbtest.Query(context.Background(), sql, setup...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]string, len(res.Rows))
	for i, r := range res.Rows {
		for _, v := range r {
			if v == nil {
				out[i] = append(out[i], "NULL")
			} else {
				out[i] = append(out[i], *v)
			}
		}
	}
	return out
}
