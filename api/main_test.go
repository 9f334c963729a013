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
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/webhooks"
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
	return startAPI(t, env, nil)
}

// testOptions are the options of every test server: env's stores, the test
// verifier, logs as JSON to logs, a fixed cursor key, 1 MiB bodies, pages of
// 100 up to 1,000.
func testOptions(t *testing.T, env *fundtest.Env, logs io.Writer) api.Options {
	t.Helper()
	return api.Options{
		Documents: env.Store, Positions: env.Positions, Verifier: testVerifier(t),
		Logger:       slog.New(slog.NewJSONHandler(logs, nil)),
		CursorKey:    []byte("test-cursor-key-0123456789"),
		MaxBodyBytes: 1 << 20, DefaultLimit: 100, MaxLimit: 1000,
		WebhookSealer: testSealer(t), WebhookPolicy: webhooks.Policy{AllowLoopback: true},
	}
}

// testSealer seals webhook secrets with a fixed key.
func testSealer(t *testing.T) *webhooks.Sealer {
	t.Helper()
	s, err := webhooks.NewSealer([]byte("test-webhook-sealing-key-32bytes"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startAPI serves the API over env with testOptions, changed by tweak when
// it is not nil, until t ends.
func startAPI(t *testing.T, env *fundtest.Env, tweak func(*api.Options)) *testServer {
	t.Helper()
	logs := &fundtest.SyncBuffer{}
	o := testOptions(t, env, logs)
	if tweak != nil {
		tweak(&o)
	}
	srv := httptest.NewServer(api.NewServer(o))
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
// It carries an all-funds admin token unless headers set Authorization
// (to "" for none).
func (s *testServer) do(t *testing.T, method, path string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader: // sent as it is read, without a Content-Length
		rd = b
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
	req.Header.Set("Authorization", "Bearer "+token(t, adminOfAll))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
		if headers[i] == "Authorization" && headers[i+1] == "" {
			req.Header.Del("Authorization")
		}
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

// testSecret signs the tokens of the API tests.
const testSecret = "api-test-secret-0123456789-abcdefghij"

var adminOfAll = api.Principal{Subject: "test-admin", Role: api.RoleAdmin, Funds: []string{api.AllFunds}}

func testVerifier(t *testing.T) *api.Verifier {
	t.Helper()
	v, err := api.NewVerifier(api.AuthConfig{HS256Secret: []byte(testSecret), Leeway: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// token mints a valid test token for p.
func token(t *testing.T, p api.Principal) string {
	t.Helper()
	tok, err := api.MintToken([]byte(testSecret), p, "", "", time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
