package iceberg

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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/shopspring/decimal"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/duckdbtest"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/harness"
	"github.com/fundsvc/fundsvc/internal/s3test"
)

// TestMain shares one DynamoDB Local and one MinIO among the tests and
// stops both afterwards.
func TestMain(m *testing.M) {
	code := dynamotest.Main(m)
	s3test.Cleanup()
	os.Exit(code)
}

// service is the REST API over a fresh table, with an all-funds admin token.
type service struct {
	*fundtest.Env
	url, token string
}

func newService(t *testing.T) *service {
	t.Helper()
	env := fundtest.New(t)
	secret := []byte("iceberg-test-secret-0123456789abcdef")
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
	tok, err := api.MintToken(secret, api.Principal{Subject: "iceberg-test", Role: "admin", Funds: []string{"*"}}, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &service{Env: env, url: srv.URL, token: tok}
}

// oneDocumentInDirectory is a service holding one document of three
// positions, and a fresh local destination: its sink and directory.
func oneDocumentInDirectory(t *testing.T) (*service, export.Sink, string) {
	t.Helper()
	s := newService(t)
	s.putDocument(t, "DOC_1", "FUND_A", 3, "10")
	dir := t.TempDir()
	sink, err := export.OpenSink(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, sink, dir
}

func (s *service) call(t *testing.T, method, path string, body any) map[string]any {
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
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode == http.StatusNotFound && method == http.MethodGet && strings.HasPrefix(path, "/v1/positions/") {
		// A position a restatement dropped from every document: listed
		// for its investor, with no items.
		return map[string]any{"items": []any{}}
	}
	if res.StatusCode/100 != 2 {
		t.Fatalf("%s %s: status %d: %s", method, path, res.StatusCode, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return out
}

func (s *service) all(t *testing.T, path string) []map[string]any {
	t.Helper()
	var items []map[string]any
	cursor := ""
	for {
		p := path + "?limit=1000"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		page := s.call(t, http.MethodGet, p, nil)
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

var funds = []string{"FUND_A", "FUND_B"}

// putDocument writes one capital call notice of fund f whose positions
// (one per investor) call amount × (investor number) and leave that much
// unfunded, with a distribution of amount/10 for even investors.
func (s *service) putDocument(t *testing.T, id, f string, investors int, amount string) {
	t.Helper()
	a := decimal.RequireFromString(amount)
	var positions []map[string]any
	for inv := 1; inv <= investors; inv++ {
		n := a.Mul(decimal.NewFromInt(int64(inv)))
		p := map[string]any{"positionId": fmt.Sprintf("P_%s_%d", f, inv), "investorId": fmt.Sprintf("INV_%d", inv),
			"capitalCall":        map[string]any{"amount": n.StringFixed(4), "status": "pending", "dueDate": "2026-03-31"},
			"unfundedCommitment": map[string]any{"amount": n.StringFixed(4)}}
		if inv%2 == 0 {
			p["distribution"] = map[string]any{"amount": n.Div(decimal.NewFromInt(10)).StringFixed(4), "status": "completed", "paymentDate": "2026-02-15"}
		}
		positions = append(positions, p)
	}
	s.call(t, http.MethodPut, "/v1/documents/"+id, map[string]any{
		"fundId": f, "kind": "capital_call_notice", "title": id, "asOf": "2026-03-01", "currency": "USD", "positions": positions,
	})
}

// apiTotals are what the REST API says: "called|FUND_A", "unfunded|INV_2",
// "count|capital_calls", ….
func (s *service) apiTotals(t *testing.T) map[string]decimal.Decimal {
	t.Helper()
	want := map[string]decimal.Decimal{}
	add := func(k string, amount any) {
		want[k] = want[k].Add(decimal.RequireFromString(amount.(string)))
	}
	metric := map[string]string{"capitalCalls": "called", "distributions": "distributed", "unfundedCommitments": "unfunded"}
	dataset := map[string]string{"called": "capital_calls", "distributed": "distributions", "unfunded": "unfunded_commitments"}
	investors := map[string]bool{}
	for _, f := range funds {
		docs := s.all(t, "/v1/funds/"+f+"/documents")
		want["count|documents"] = want["count|documents"].Add(decimal.NewFromInt(int64(len(docs))))
		for _, doc := range docs {
			o := s.call(t, http.MethodGet, "/v1/documents/"+doc["documentId"].(string)+"?limit=1000", nil)
			for _, p := range o["positions"].(map[string]any) {
				p := p.(map[string]any)
				investors[p["investorId"].(string)] = true
				for field, m := range metric {
					items, _ := p[field].([]any)
					want["count|"+dataset[m]] = want["count|"+dataset[m]].Add(decimal.NewFromInt(int64(len(items))))
					for _, it := range items {
						add(m+"|"+f, it.(map[string]any)["amount"])
					}
				}
			}
		}
	}
	for inv := range investors {
		for _, pos := range s.all(t, "/v1/investors/"+inv+"/positions") {
			for _, it := range s.all(t, "/v1/positions/"+pos["positionId"].(string)) {
				if m, ok := map[string]string{"capital_call": "called", "distribution": "distributed", "unfunded_commitment": "unfunded"}[it["itemType"].(string)]; ok {
					add(m+"|"+inv, it["amount"])
				}
			}
		}
	}
	return want
}

// totals computes the same figures from rows of the datasets, read by
// some reader: amounts as decimal text.
func totals(rows map[string][]map[string]string) map[string]decimal.Decimal {
	got := map[string]decimal.Decimal{}
	got["count|documents"] = decimal.NewFromInt(int64(len(rows["documents"])))
	for d, m := range map[string]string{"capital_calls": "called", "distributions": "distributed", "unfunded_commitments": "unfunded"} {
		got["count|"+d] = decimal.NewFromInt(int64(len(rows[d])))
		for _, r := range rows[d] {
			a := decimal.RequireFromString(r["amount"])
			got[m+"|"+r["fund_id"]] = got[m+"|"+r["fund_id"]].Add(a)
			got[m+"|"+r["investor_id"]] = got[m+"|"+r["investor_id"]].Add(a)
		}
	}
	return got
}

func compareTotals(t *testing.T, who string, got, want map[string]decimal.Decimal) {
	t.Helper()
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	for k := range keys {
		if !got[k].Equal(want[k]) {
			t.Errorf("%s: %s reads %s, the API says %s", who, k, got[k], want[k])
		}
	}
	if len(keys) < 10 {
		t.Fatalf("%s: only %d figures compared", who, len(keys))
	}
}

// icebirdRead is one table read by icebird at one metadata file.
type icebirdRead struct {
	Table            string            `json:"table"`
	MetadataFileName string            `json:"metadataFileName"`
	ManifestList     string            `json:"manifestList"`
	Summary          map[string]string `json:"summary"`
	Files            []string          `json:"files"`
	Rows             []map[string]any  `json:"rows"`
}

type icebirdRequest struct {
	Table            string `json:"table"`
	TableURL         string `json:"tableUrl"`
	MetadataFileName string `json:"metadataFileName"`
}

// icebird reads tables with the npm package icebird (tools/node_modules),
// over HTTP from MinIO, whose bucket allows anonymous reads.
func icebird(t *testing.T, endpoint string, reads []icebirdRequest) []icebirdRead {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(root, "tools/node_modules/icebird/src/index.js")
	if _, err := os.Stat(module); err != nil {
		t.Fatalf("icebird is not installed (run make tools): %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(map[string]any{"module": module, "endpoint": endpoint, "reads": reads})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, filepath.Join(root, "export/iceberg/testdata/icebird.mjs"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("icebird: %v: %s", err, stderr.String())
	}
	var out []icebirdRead
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("icebird: %v", err)
	}
	return out
}

// icebirdRows turns icebird's rows into text: its decimals are float64
// (hyparquet's), exact to 4 places for the amounts of these tests.
func icebirdRows(rows []map[string]any) []map[string]string {
	out := make([]map[string]string, len(rows))
	for i, r := range rows {
		out[i] = map[string]string{}
		for k, v := range r {
			switch v := v.(type) {
			case json.Number:
				out[i][k] = decimal.RequireFromString(v.String()).Round(4).String()
			case nil:
				out[i][k] = ""
			default:
				out[i][k] = fmt.Sprint(v)
			}
		}
	}
	return out
}

// allowAnonymousReads lets anyone GET the bucket's objects, as icebird
// reads them.
func allowAnonymousReads(t *testing.T, client *s3.Client, bucket string) {
	t.Helper()
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/*"]}]}`, bucket)
	if _, err := client.PutBucketPolicy(t.Context(), &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(policy)}); err != nil {
		t.Fatal(err)
	}
}

// duckRows downloads the files (s3:// URIs in bucket) and has DuckDB read
// them, returning every row as text.
func duckRows(t *testing.T, client *s3.Client, files []string) []map[string]string {
	t.Helper()
	if len(files) == 0 {
		return nil
	}
	dir := t.TempDir()
	var local []string
	for i, f := range files {
		rest, ok := strings.CutPrefix(f, "s3://")
		if !ok {
			t.Fatalf("data file %s is not an s3:// URI", f)
		}
		bucket, key, _ := strings.Cut(rest, "/")
		obj, err := client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("get %s: %v", f, err)
		}
		b, err := io.ReadAll(obj.Body)
		obj.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("%d.parquet", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		local = append(local, "'"+p+"'")
	}
	res, err := duckdbtest.Query(t.Context(), fmt.Sprintf("SELECT * FROM read_parquet([%s])", strings.Join(local, ", ")))
	if err != nil {
		t.Fatal(err)
	}
	return res.Maps()
}

// newCatalog opens a SQL catalog on a SQLite file that keeps its metadata
// in MinIO, or with no MinIO in local directories.
func newCatalog(t *testing.T, minio *s3test.Server, file string) *Catalog {
	t.Helper()
	cfg := CatalogConfig{URI: file}
	if minio != nil {
		cfg.Region, cfg.S3Endpoint, cfg.S3PathStyle = minio.Region, minio.Endpoint, true
		cfg.AccessKey, cfg.SecretKey = minio.AccessKey, minio.SecretKey
	}
	c, err := OpenCatalog(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func exportConfig(t *testing.T, s *service, sink export.Sink, date string) export.Config {
	t.Helper()
	d, err := fund.ParseDate(date)
	if err != nil {
		t.Fatal(err)
	}
	return export.Config{Store: s.Store, Sink: sink, Date: d, Segments: 2, TempDir: t.TempDir(), TargetFileBytes: 1 << 10}
}
