package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

// testServer is the API over a fresh table.
type testServer struct {
	*fundtest.Env
	URL  string
	logs *fundtest.SyncBuffer
}

// newServer starts the API on a fresh table; seed loads the demo dataset.
func newServer(t *testing.T, seed bool) *testServer {
	t.Helper()
	env := fundtest.New(t)
	if seed {
		env.Seed(t)
	}
	logs := &fundtest.SyncBuffer{}
	h := api.NewServer(api.Options{
		Documents: env.Store, Positions: env.Positions,
		Logger:       slog.New(slog.NewJSONHandler(logs, nil)),
		CursorKey:    []byte("test-cursor-key-0123456789"),
		MaxBodyBytes: 1 << 20, DefaultLimit: 100, MaxLimit: 1000,
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testServer{Env: env, URL: srv.URL, logs: logs}
}

// response is a finished HTTP exchange.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, r.Body)
	}
	return v
}

// do sends a request; body may be nil, a string or a value to encode as JSON.
func (s *testServer) do(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: res.StatusCode, Header: res.Header, Body: b}
}
