package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
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
		{"a weak ETag never matches, not even the current version (strong comparison)", `W/"3"`, http.StatusPreconditionFailed, ""},
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

// TestIfMatchStarHoldsWhenAnotherWriterCommitsFirst: If-Match: * asks only
// that the document exist, so a restatement that loses the race to another
// writer between reading the head and committing is not refused: it
// commits on top, as a write without If-Match would.
func TestIfMatchStarHoldsWhenAnotherWriterCommitsFirst(t *testing.T) {
	env := fundtest.New(t)
	env.Seed(t)
	other := startAPI(t, env, nil)
	hook := &dynamotest.WriteHook{}
	slow := instanceWithHook(t, env, hook, nil)
	body := func(title string) map[string]any {
		return map[string]any{"fundId": "FUND_A", "kind": "capital_call_notice", "title": title, "asOf": "2025-10-01",
			"positions": []any{map[string]any{"positionId": "POSITION_2", "investorId": "INVESTOR_2", "capitalCall": map[string]any{"amount": "1.00"}}}}
	}
	hook.OnWrite(1, func() { // the slow writer has read the head (version 1)
		if r := other.do(t, http.MethodPut, "/v1/documents/DOC002", body("other")); r.Status != http.StatusOK {
			t.Errorf("the other writer: %d %s", r.Status, r.Body)
		}
	})
	r := slow.do(t, http.MethodPut, "/v1/documents/DOC002", body("slow"), "If-Match", "*")
	if !hook.Fired() || r.Status != http.StatusOK || r.Header.Get("ETag") != `"3"` {
		t.Fatalf("If-Match: * after another writer committed: %d ETag %s (hook fired: %v) %s, want 200 at version 3", r.Status, r.Header.Get("ETag"), hook.Fired(), r.Body)
	}
}

// TestFiftyConcurrentRestatementsLoseNoVersion: without If-Match, writers
// are serialized; each either gets its own version or fails cleanly, and
// the history is one dense sequence.
func TestFiftyConcurrentRestatementsLoseNoVersion(t *testing.T) {
	s := newServer(t, false)
	const writers = 50
	s.Store.MaxWaitingWriters = writers // all may queue: what is tested is the serialization, not its bound (inflight_test.go)
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
		Latest   struct{ Version int }
		Versions []struct {
			Version int
			Status  string
		}
	}
	getJSON(t, s, "/v1/documents/HOT/versions?limit=1000", &v)
	if v.Latest.Version != ok || len(v.Versions) != ok || ok < writers/2 {
		t.Fatalf("%d writers succeeded; latest version %d with %d versions listed", ok, v.Latest.Version, len(v.Versions))
	}
	for i, h := range v.Versions { // newest first
		if want := map[bool]string{true: "latest", false: "superseded"}[i == 0]; h.Version != ok-i || h.Status != want {
			t.Fatalf("history is not dense, each version superseded but the latest: %+v", v.Versions)
		}
	}
}
