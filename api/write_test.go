package api_test

import (
	"fmt"
	"net/http"
	"testing"
)

func TestIfMatchGuardsRestatements(t *testing.T) {
	s := newServer(t, true)
	body := map[string]any{"fundId": "FUND_A", "kind": "capital_call_notice", "title": "Restated", "asOf": "2025-10-01",
		"positions": []any{map[string]any{"positionId": "POSITION_2", "investorId": "INVESTOR_2", "capitalCall": map[string]any{"amount": "1.00"}}}}
	steps := []struct {
		name, ifMatch string
		status        int
		etag          string
	}{
		{"If-Match * on an existing document restates it", "*", http.StatusOK, `"2"`},
		{"the current ETag restates it", `"2"`, http.StatusOK, `"3"`},
		{"a stale ETag is refused", `"2"`, http.StatusPreconditionFailed, ""},
		{"0 means the document must not exist yet", `"0"`, http.StatusPreconditionFailed, ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := s.do(t, http.MethodPut, "/v1/documents/DOC002", body, "If-Match", st.ifMatch)
			if r.Status != st.status || r.Header.Get("ETag") != st.etag {
				t.Fatalf("got %d ETag %q, want %d ETag %q: %s", r.Status, r.Header.Get("ETag"), st.status, st.etag, r.Body)
			}
		})
	}
	var latest struct{ Version int }
	getJSON(t, s, "/v1/documents/DOC002/versions/latest", &latest)
	if latest.Version != 3 {
		t.Fatalf("version %d after two accepted restatements of version 1, want 3", latest.Version)
	}
}

// TestFiftyConcurrentRestatementsLoseNoVersion: without If-Match, writers
// are serialized; each either gets its own version or fails cleanly, and
// the history is one dense sequence.
func TestFiftyConcurrentRestatementsLoseNoVersion(t *testing.T) {
	s := newServer(t, false)
	const writers = 50
	statuses := make(chan response, writers)
	for w := 0; w < writers; w++ {
		go func() {
			statuses <- s.do(t, http.MethodPut, "/v1/documents/HOT", smallDocument(fmt.Sprintf("writer %d", w)))
		}()
	}
	versions := map[string]bool{}
	ok := 0
	for w := 0; w < writers; w++ {
		r := <-statuses
		switch r.Status {
		case http.StatusOK, http.StatusCreated:
			ok++
			if versions[r.Header.Get("ETag")] {
				t.Fatalf("two writers got version %s", r.Header.Get("ETag"))
			}
			versions[r.Header.Get("ETag")] = true
		case http.StatusConflict:
			if r.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("unclean conflict: %s", r.Body)
			}
		default:
			t.Fatalf("writer got %d %s", r.Status, r.Body)
		}
	}
	var v struct {
		Latest     struct{ Version int }
		Historical []struct{ Version int }
	}
	getJSON(t, s, "/v1/documents/HOT/versions", &v)
	if v.Latest.Version != ok || len(v.Historical) != ok-1 || ok < writers/2 {
		t.Fatalf("%d writers succeeded; latest version %d with %d earlier ones", ok, v.Latest.Version, len(v.Historical))
	}
	for i, h := range v.Historical {
		if h.Version != i+1 {
			t.Fatalf("history is not dense: %+v", v.Historical)
		}
	}
}
