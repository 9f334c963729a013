package api_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// pagingDocument is a document of fund with n positions PAGE_1…PAGE_n whose
// capital calls are i*scale and unfunded commitments i*scale*10.
func pagingDocument(fund string, n, scale int) map[string]any {
	positions := make([]any, n)
	for i := range positions {
		positions[i] = map[string]any{
			"positionId": fmt.Sprintf("PAGE_%d", i+1), "investorId": fmt.Sprintf("PAGE_INV_%d", i+1),
			"capitalCall":        map[string]any{"amount": fmt.Sprintf("%d.00", (i+1)*scale)},
			"unfundedCommitment": map[string]any{"amount": fmt.Sprintf("%d.00", (i+1)*scale*10)},
		}
	}
	return map[string]any{"fundId": fund, "kind": "capital_call_notice", "title": "Paged notice", "asOf": "2025-12-01",
		"capitalActivity": map[string]any{"amount": fmt.Sprintf("%d.00", scale)}, "positions": positions}
}

func pagingPut(t *testing.T, s *testServer, path string, body any, headers ...string) {
	t.Helper()
	r := s.do(t, http.MethodPut, path, body, headers...)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("PUT %s: status %d\n%s", path, r.Status, r.Body)
	}
}

// listPage is the envelope of every paginated list.
type listPage struct {
	Items []json.RawMessage `json:"items"`
	Next  string            `json:"next"`
}

func getListPage(t *testing.T, s *testServer, path string) listPage {
	t.Helper()
	r := s.do(t, http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: status %d\n%s", path, r.Status, r.Body)
	}
	var p listPage
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, r.Body)
	}
	return p
}

// withQuery appends a query parameter to path.
func withQuery(path, name, value string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + name + "=" + url.QueryEscape(value)
}

// TestListsPaginate walks every list with limit=1 and compares what the
// pages hold with one unpaginated read.
func TestListsPaginate(t *testing.T) {
	s := newServer(t, true)
	pagingPut(t, s, "/v1/documents/DOC_PAGE", pagingDocument("FUND_A", 7, 1000))

	for _, tc := range []struct {
		name, path string
		atLeast    int
	}{
		{"a fund's positions walked one by one are the fund's positions", "/v1/funds/FUND_A/positions", 9},
		{"a fund's documents walked one by one are the fund's documents", "/v1/funds/FUND_A/documents", 3},
		{"a fund's documents of one kind walked one by one are those documents", "/v1/funds/FUND_A/documents?kind=capital_call_notice", 2},
		{"a position's items walked one by one are the position's items", "/v1/positions/POSITION_1", 5},
		{"a position's distributions walked one by one are its distributions", "/v1/positions/POSITION_1?itemType=distribution", 2},
		{"a position's capital calls walked one by one are its capital calls", "/v1/positions/POSITION_1/capital-calls", 2},
		{"an investor's positions walked one by one are the investor's positions", "/v1/investors/INVESTOR_1/positions", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := getListPage(t, s, tc.path)
			if whole.Next != "" {
				t.Fatalf("the unpaginated read has a next page")
			}
			if len(whole.Items) < tc.atLeast {
				t.Fatalf("the unpaginated read holds %d items, want at least %d", len(whole.Items), tc.atLeast)
			}
			var walked []json.RawMessage
			seen := map[string]bool{}
			path := withQuery(tc.path, "limit", "1")
			pages := 0
			for cursor := ""; ; {
				pages++
				if pages > 3*len(whole.Items)+3 {
					t.Fatalf("still paging after %d pages", pages)
				}
				page := path
				if cursor != "" {
					page = withQuery(path, "cursor", cursor)
				}
				p := getListPage(t, s, page)
				if len(p.Items) > 1 {
					t.Errorf("page %d holds %d items with limit=1", pages, len(p.Items))
				}
				for _, it := range p.Items {
					if seen[string(it)] {
						t.Errorf("item seen twice: %s", it)
					}
					seen[string(it)] = true
					walked = append(walked, it)
				}
				if p.Next == "" {
					break
				}
				cursor = p.Next
			}
			// Every page holds its one item, the last one too: a page that
			// ends the list has no next leading to an empty page.
			if pages != len(whole.Items) {
				t.Errorf("%d items came in %d pages of limit 1", len(whole.Items), pages)
			}
			if !reflect.DeepEqual(walked, whole.Items) {
				t.Errorf("pages hold\n%s\nthe whole list holds\n%s", joinRaw(walked), joinRaw(whole.Items))
			}
		})
	}
}

func joinRaw(items []json.RawMessage) string {
	var b strings.Builder
	for _, it := range items {
		b.Write(it)
		b.WriteByte('\n')
	}
	return b.String()
}

// overviewPage is an overview answer with the parts paging changes.
type overviewPage struct {
	Version           int             `json:"version"`
	Documents         json.RawMessage `json:"documents"`
	CapitalActivities json.RawMessage `json:"capitalActivities"`
	Positions         map[string]struct {
		CapitalCalls []struct {
			Amount          string `json:"amount"`
			DocumentVersion int    `json:"documentVersion"`
			FundID          string `json:"fundId"`
			AsOf            string `json:"asOf"`
		} `json:"capitalCalls"`
		UnfundedCommitments []struct {
			Amount string `json:"amount"`
		} `json:"unfundedCommitments"`
	} `json:"positions"`
	Next string `json:"next"`
}

func getOverviewPage(t *testing.T, s *testServer, path string) overviewPage {
	t.Helper()
	r := s.do(t, http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: status %d\n%s", path, r.Status, r.Body)
	}
	var p overviewPage
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, r.Body)
	}
	if etag := r.Header.Get("ETag"); etag != fmt.Sprintf(`"%d"`, p.Version) {
		t.Errorf("GET %s: ETag %s for version %d", path, etag, p.Version)
	}
	return p
}

func positionIDs[T any](m map[string]T) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// TestOverviewPagesShowOneVersion pages through a seven-position document
// three at a time and restates it between the first and second page.
func TestOverviewPagesShowOneVersion(t *testing.T) {
	s := newServer(t, false)
	const doc = "/v1/documents/DOC_PAGE"
	pagingPut(t, s, doc, pagingDocument("FUND_P", 7, 1000))

	first := getOverviewPage(t, s, doc+"?limit=3")
	// Restate with amounts ten times larger before reading on.
	pagingPut(t, s, doc, pagingDocument("FUND_P", 7, 10000), "If-Match", `"1"`)
	second := getOverviewPage(t, s, withQuery(doc+"?limit=3", "cursor", first.Next))
	third := getOverviewPage(t, s, withQuery(doc+"?limit=3", "cursor", second.Next))
	latest := getOverviewPage(t, s, doc)
	pages := []overviewPage{first, second, third}

	t.Run("the pages hold 3, 3 and 1 positions and only the last has no next", func(t *testing.T) {
		for i, want := range []int{3, 3, 1} {
			if got := len(pages[i].Positions); got != want {
				t.Errorf("page %d holds %d positions %v, want %d", i+1, got, positionIDs(pages[i].Positions), want)
			}
		}
		if first.Next == "" || second.Next == "" || third.Next != "" {
			t.Errorf("next cursors: %q, %q, %q; want two and then none", first.Next, second.Next, third.Next)
		}
	})

	t.Run("the pages together hold each of the seven positions once", func(t *testing.T) {
		var all []string
		for _, p := range pages {
			all = append(all, positionIDs(p.Positions)...)
		}
		sort.Strings(all)
		want := []string{"PAGE_1", "PAGE_2", "PAGE_3", "PAGE_4", "PAGE_5", "PAGE_6", "PAGE_7"}
		if !reflect.DeepEqual(all, want) {
			t.Errorf("positions across pages = %v, want %v", all, want)
		}
	})

	t.Run("documents and capital activities come with the first page only", func(t *testing.T) {
		if len(first.Documents) == 0 || len(first.CapitalActivities) == 0 {
			t.Errorf("first page lacks documents or capital activities")
		}
		for i, p := range pages[1:] {
			if len(p.Documents) != 0 || len(p.CapitalActivities) != 0 {
				t.Errorf("page %d carries documents %s and capital activities %s", i+2, p.Documents, p.CapitalActivities)
			}
		}
	})

	t.Run("pages read after a restatement still show the original version", func(t *testing.T) {
		for i, p := range pages {
			if p.Version != 1 {
				t.Errorf("page %d is version %d, want 1", i+1, p.Version)
			}
			for id, g := range p.Positions {
				var n int
				fmt.Sscanf(id, "PAGE_%d", &n)
				if len(g.CapitalCalls) != 1 || len(g.UnfundedCommitments) != 1 {
					t.Errorf("page %d, %s: %d calls and %d unfunded commitments, want 1 and 1", i+1, id, len(g.CapitalCalls), len(g.UnfundedCommitments))
					continue
				}
				c := g.CapitalCalls[0]
				if want := fmt.Sprintf("%d.00", n*1000); c.Amount != want || c.DocumentVersion != 1 {
					t.Errorf("page %d, %s: call %s of version %d, want %s of version 1", i+1, id, c.Amount, c.DocumentVersion, want)
				}
				if c.FundID != "FUND_P" || c.AsOf != "2025-12-01" {
					t.Errorf("page %d, %s: call of fund %q as of %q, want FUND_P as of 2025-12-01", i+1, id, c.FundID, c.AsOf)
				}
				if want := fmt.Sprintf("%d.00", n*10000); g.UnfundedCommitments[0].Amount != want {
					t.Errorf("page %d, %s: unfunded %s, want %s", i+1, id, g.UnfundedCommitments[0].Amount, want)
				}
			}
		}
	})

	t.Run("a fresh read shows the restated version", func(t *testing.T) {
		if latest.Version != 2 {
			t.Fatalf("latest version %d, want 2", latest.Version)
		}
		if got := latest.Positions["PAGE_7"].CapitalCalls; len(got) != 1 || got[0].Amount != "70000.00" || got[0].DocumentVersion != 2 {
			t.Errorf("PAGE_7 calls in the latest version = %+v, want 70000.00 of version 2", got)
		}
	})
}

// tamperCursor changes the character at i to another one of the same alphabet.
func tamperCursor(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

// TestBadCursorsAndLimitsAreRefused sends cursors that were altered or
// issued for another read, and limits out of range.
func TestBadCursorsAndLimitsAreRefused(t *testing.T) {
	s := newServer(t, true)
	pagingPut(t, s, "/v1/documents/DOC_PAGE", pagingDocument("FUND_A", 7, 1000))
	pagingPut(t, s, "/v1/documents/DOC_B", map[string]any{"fundId": "FUND_B", "kind": "capital_call_notice", "title": "B", "asOf": "2025-12-01",
		"positions": []any{
			map[string]any{"positionId": "B_1", "investorId": "B_INV_1", "capitalCall": map[string]any{"amount": "1.00"}},
			map[string]any{"positionId": "B_2", "investorId": "B_INV_2", "capitalCall": map[string]any{"amount": "2.00"}},
		}})

	positionsCursor := getListPage(t, s, "/v1/funds/FUND_A/positions?limit=1").Next
	documentsCursor := getListPage(t, s, "/v1/funds/FUND_A/documents?limit=1&kind=capital_call_notice").Next
	overviewCursor := getOverviewPage(t, s, "/v1/documents/DOC_PAGE?limit=3").Next
	if positionsCursor == "" || documentsCursor == "" || overviewCursor == "" {
		t.Fatalf("no cursors to tamper with: %q %q %q", positionsCursor, documentsCursor, overviewCursor)
	}

	t.Run("a cursor does not show the keys it holds", func(t *testing.T) {
		raw, err := base64.RawURLEncoding.DecodeString(positionsCursor)
		if err != nil || bytes.Contains(raw, []byte("FUND#")) || bytes.Contains(raw, []byte("POSITION")) {
			t.Fatalf("cursor %q decodes to readable keys (%v)", positionsCursor, err)
		}
	})

	t.Run("the cursors as issued are accepted", func(t *testing.T) {
		for _, path := range []string{
			withQuery("/v1/funds/FUND_A/positions?limit=1", "cursor", positionsCursor),
			withQuery("/v1/funds/FUND_A/documents?limit=1&kind=capital_call_notice", "cursor", documentsCursor),
			withQuery("/v1/documents/DOC_PAGE?limit=3", "cursor", overviewCursor),
		} {
			if r := s.do(t, http.MethodGet, path, nil); r.Status != http.StatusOK {
				t.Errorf("GET %s: status %d\n%s", path, r.Status, r.Body)
			}
		}
	})

	for _, tc := range []struct{ name, path string }{
		{"a cursor with its first character changed is refused", withQuery("/v1/funds/FUND_A/positions?limit=1", "cursor", tamperCursor(positionsCursor, 0))},
		{"a cursor with a character in the middle changed is refused", withQuery("/v1/funds/FUND_A/positions?limit=1", "cursor", tamperCursor(positionsCursor, len(positionsCursor)/2))},
		{"a cursor with a character of its authentication tag changed is refused", withQuery("/v1/funds/FUND_A/positions?limit=1", "cursor", tamperCursor(positionsCursor, len(positionsCursor)-5))},
		{"a cursor without its authentication tag is refused", withQuery("/v1/funds/FUND_A/positions?limit=1", "cursor", positionsCursor[:len(positionsCursor)-22])},
		{"a cursor of fund positions is refused by fund documents", withQuery("/v1/funds/FUND_A/documents?limit=1", "cursor", positionsCursor)},
		{"a cursor of fund A's positions is refused for fund B", withQuery("/v1/funds/FUND_B/positions?limit=1", "cursor", positionsCursor)},
		{"a cursor of one kind of documents is refused without the kind", withQuery("/v1/funds/FUND_A/documents?limit=1", "cursor", documentsCursor)},
		{"a cursor of fund positions is refused by an investor's positions", withQuery("/v1/investors/INVESTOR_1/positions?limit=1", "cursor", positionsCursor)},
		{"a cursor of one document's overview is refused by another's", withQuery("/v1/documents/DOC001?limit=3", "cursor", overviewCursor)},
		{"a cursor of an overview is refused by a list", withQuery("/v1/funds/FUND_A/positions?limit=1", "cursor", overviewCursor)},
		{"a cursor of 5000 characters is refused", withQuery("/v1/funds/FUND_A/positions?limit=1", "cursor", strings.Repeat("A", 5000))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := checkProblem(t, s.do(t, http.MethodGet, tc.path, nil), http.StatusBadRequest, "/problems/invalid")
			if p.Field != "cursor" {
				t.Errorf("field = %q, want cursor", p.Field)
			}
		})
	}

	for _, path := range []string{"/v1/funds/FUND_A/positions", "/v1/funds/FUND_A/documents", "/v1/positions/POSITION_1", "/v1/documents/DOC001", "/v1/investors/INVESTOR_1/positions"} {
		for _, limit := range []string{"0", "1001", "abc", "-1", "1.5", "1e2"} {
			t.Run(fmt.Sprintf("limit=%s is refused on %s", limit, path), func(t *testing.T) {
				p := checkProblem(t, s.do(t, http.MethodGet, path+"?limit="+limit, nil), http.StatusBadRequest, "/problems/invalid")
				if p.Field != "limit" {
					t.Errorf("field = %q, want limit", p.Field)
				}
			})
		}
		t.Run("limit=1000 is accepted on "+path, func(t *testing.T) {
			if r := s.do(t, http.MethodGet, path+"?limit=1000", nil); r.Status != http.StatusOK {
				t.Errorf("status %d\n%s", r.Status, r.Body)
			}
		})
	}
}

// TestOverviewPagesWithPrefixIDs pages one position at a time through IDs
// that are prefixes of one another, where a careless sort-key bound would
// skip or repeat a position.
func TestOverviewPagesWithPrefixIDs(t *testing.T) {
	s := newServer(t, false)
	ids := []string{"P_1", "P_10", "P_100", "P_1-2", "P_1.5", "P_1:3", "P_2", "Q"}
	positions := make([]any, len(ids))
	for i, id := range ids {
		positions[len(ids)-1-i] = map[string]any{"positionId": id, "investorId": "INV_" + id,
			"distribution": map[string]any{"amount": fmt.Sprintf("%d.00", i+1)}}
	}
	pagingPut(t, s, "/v1/documents/DOC_PREFIX", map[string]any{"fundId": "FUND_P", "kind": "distribution_notice", "title": "Prefixes",
		"asOf": "2025-12-01", "positions": positions})

	var got []string
	path := "/v1/documents/DOC_PREFIX?limit=1"
	for page := 1; ; page++ {
		if page > len(ids)+1 {
			t.Fatalf("still paging after %d pages", page)
		}
		p := getOverviewPage(t, s, path)
		got = append(got, positionIDs(p.Positions)...)
		if p.Next == "" {
			break
		}
		path = withQuery("/v1/documents/DOC_PREFIX?limit=1", "cursor", p.Next)
	}
	want := append([]string(nil), ids...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("positions page by page = %v, want %v", got, want)
	}
}
