package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// TestLiveAndKnownAtAnswersHaveOneShape: for every /v1 GET route that takes
// knownAt (the OpenAPI document's, as TestEveryReadRouteTakesKnownAtAndEchoesItsBasis
// finds them), on the demo, the answer read live and the answer read with
// knownAt at an instant after the last write (the same data) hold the same
// JSON keys, recursively (an array's objects merged), so that a replay
// reads like the live answer it replays.
func TestLiveAndKnownAtAnswersHaveOneShape(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	// The server's clock an hour after the demo's writes; knownAt half an
	// hour after them, so every write is known then.
	env.Store.Now = func() time.Time { return fundtest.Clock.Add(time.Hour) }
	knownAt := fundtest.Clock.Add(30 * time.Minute).Format(time.RFC3339)
	s := startAPI(t, env, nil)
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// The demo's IDs for each path parameter.
	ids := strings.NewReplacer("{documentId}", "DOC007", "{positionId}", "POSITION_1", "{fundId}", "FUND_A",
		"{investorId}", "INVESTOR_1", "{version}", "1")
	checked := 0
	for path, ops := range doc.Paths {
		if _, ok := ops["get"]; !ok || !strings.HasPrefix(path, "/v1/") || slices.Contains(notAsKnownAt, path) {
			continue
		}
		checked++
		t.Run(path, func(t *testing.T) {
			p := ids.Replace(path)
			if strings.Contains(p, "{") {
				t.Fatalf("%s: a path parameter without a demo ID", p)
			}
			live := s.do(t, http.MethodGet, p, nil)
			known := s.do(t, http.MethodGet, p+"?knownAt="+url.QueryEscape(knownAt), nil)
			if live.Status != http.StatusOK || known.Status != http.StatusOK {
				t.Fatalf("live %d, knownAt %d\n%s\n%s", live.Status, known.Status, live.Body, known.Body)
			}
			a, b := jsonKeys(t, live.Body), jsonKeys(t, known.Body)
			if !slices.Equal(a, b) {
				t.Errorf("keys only live: %v\nkeys only with knownAt: %v", minus(a, b), minus(b, a))
			}
		})
	}
	if checked < 20 {
		t.Errorf("checked %d read routes: the walk is broken", checked)
	}
}

// jsonKeys lists the paths of every key of a JSON document, sorted: "a.b"
// for key b of object a, "a[].b" for key b of any object in array a.
func jsonKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	set := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				set[prefix+k] = true
				walk(prefix+k+".", e)
			}
		case []any:
			for _, e := range x {
				walk(strings.TrimSuffix(prefix, ".")+"[].", e)
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// minus is the keys of a not in b.
func minus(a, b []string) []string {
	var out []string
	for _, k := range a {
		if !slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}
