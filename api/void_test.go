package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

// changesAnswer is the `changes` member of a write's answer.
type changesAnswer struct {
	ReplacedVersion int
	Positions       positionChanges
	ItemTypes       []struct {
		ItemType string
		positionChanges
	}
}

type positionChanges struct{ Added, Removed, Changed []string }

func (c positionChanges) String() string {
	return "added [" + strings.Join(c.Added, ",") + "] removed [" + strings.Join(c.Removed, ",") + "] changed [" + strings.Join(c.Changed, ",") + "]"
}

func TestARestatementAnswersThePositionsItAddedRemovedAndChanged(t *testing.T) {
	s := newServer(t, false)
	position := func(id, call string, distribution string) map[string]any {
		p := map[string]any{"positionId": id, "investorId": "INV_" + id, "capitalCall": map[string]any{"amount": call}}
		if distribution != "" {
			p["distribution"] = map[string]any{"amount": distribution}
		}
		return p
	}
	body := func(ps ...any) map[string]any {
		return map[string]any{"fundId": "FUND_A", "kind": "capital_call_notice", "title": "Changes", "asOf": "2025-10-01", "positions": ps}
	}
	write := func(t *testing.T, want int, b map[string]any) (map[string]any, *changesAnswer) {
		t.Helper()
		r := s.do(t, http.MethodPut, "/v1/documents/CHG", b)
		if r.Status != want {
			t.Fatalf("PUT: %d, want %d\n%s", r.Status, want, r.Body)
		}
		var out struct{ Changes *changesAnswer }
		if err := json.Unmarshal(r.Body, &out); err != nil {
			t.Fatal(err)
		}
		return r.JSON(t), out.Changes
	}
	check := func(t *testing.T, c *changesAnswer, replaced int, positions string, byType map[string]string) {
		t.Helper()
		if c == nil {
			t.Fatal("the answer has no changes")
		}
		if c.ReplacedVersion != replaced {
			t.Errorf("replacedVersion %d, want %d", c.ReplacedVersion, replaced)
		}
		if got := c.Positions.String(); got != positions {
			t.Errorf("positions: %s, want %s", got, positions)
		}
		var types []string
		for _, it := range c.ItemTypes {
			types = append(types, it.ItemType)
			want := byType[it.ItemType]
			if want == "" {
				want = "added [] removed [] changed []"
			}
			if got := it.positionChanges.String(); got != want {
				t.Errorf("%s: %s, want %s", it.ItemType, got, want)
			}
		}
		if !slices.Equal(types, fund.ItemKindNames()) {
			t.Errorf("item types %v, want every one: %v", types, fund.ItemKindNames())
		}
	}

	first, c := write(t, http.StatusCreated, body(position("POS_K", "100.00", ""), position("POS_L", "200.00", "50.00"), position("POS_M", "300.00", "")))
	if c != nil || first["changes"] != nil {
		t.Fatalf("a first version answers changes: %v", first["changes"])
	}
	t.Run("a restatement dropping a position and a distribution lists them as removed, and leaves out the unchanged position", func(t *testing.T) {
		// POS_K's amount is spelled otherwise but the same: unchanged.
		_, c := write(t, http.StatusOK, body(position("POS_K", "100", ""), position("POS_L", "200.00", ""), position("POS_N", "10.00", "")))
		check(t, c, 1, "added [POS_N] removed [POS_M] changed [POS_L]", map[string]string{
			"capital_call": "added [POS_N] removed [POS_M] changed []",
			"distribution": "added [] removed [POS_L] changed []",
		})
	})
	t.Run("a restatement changing an amount lists that position as changed", func(t *testing.T) {
		_, c := write(t, http.StatusOK, body(position("POS_K", "150.00", ""), position("POS_L", "200.00", ""), position("POS_N", "10.00", "")))
		check(t, c, 2, "added [] removed [] changed [POS_K]", map[string]string{"capital_call": "added [] removed [] changed [POS_K]"})
	})
}

// voidReadPaths are the figures and listings a void must leave the voided
// document out of, read as an administrator of every fund; each answers
// otherwise with the document. (The position registry, /v1/funds/{fundId}/positions
// and /v1/investors/{investorId}/positions, is not among them: a position
// stays registered to its investor for good, whatever documents report it.)
var voidReadPaths = []string{
	"/v1/funds/FUND_A/documents",
	"/v1/funds/FUND_A/documents?kind=distribution_notice",
	"/v1/funds/FUND_A/performance?asOf=2025-12-31",
	"/v1/investors/INVESTOR_3/summary?asOf=2025-12-31",
	"/v1/investors/INVESTOR_3/performance?asOf=2025-12-31",
	"/v1/positions/POSITION_3",
	"/v1/positions/POSITION_3?itemType=distribution",
	"/v1/positions/POSITION_3/summary?asOf=2025-12-31",
	"/v1/positions/POSITION_3/cashflows?asOf=2025-12-31",
	"/v1/positions/POSITION_3/performance?asOf=2025-12-31",
	"/v1/documents/DOC007/reconciliation",
}

// TestAVoidedDocumentLeavesEveryFigureAndListing voids the demo's second
// distribution notice (DOC006) and compares every figure and listing with
// those of a table on which DOC006 was never written: they must be equal
// byte for byte. Every version of DOC006 stays readable, the voided one
// listed last.
func TestAVoidedDocumentLeavesEveryFigureAndListing(t *testing.T) {
	s := newServer(t, true)
	without := fundtest.New(t)
	seen := 0
	for _, d := range fund.DemoVersions() {
		if d.ID == "DOC006" {
			seen++
			continue
		}
		d.CreatedBy = "fundsvc seed"
		if _, err := without.Store.Restate(context.Background(), d, nil); err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("the demo has no DOC006")
	}
	// The demo's records too, which name the fund and investors in the answers.
	funds, investors := fund.DemoRecords()
	for _, f := range funds {
		if _, err := without.Store.PutFundRecord(context.Background(), f.ID, f.FundFields, nil, "fundsvc seed", without.Store.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range investors {
		if _, err := without.Store.PutInvestorRecord(context.Background(), i.ID, i.InvestorFields, nil, "fundsvc seed", without.Store.Now()); err != nil {
			t.Fatal(err)
		}
	}
	reference := startAPI(t, without, nil)

	for _, path := range voidReadPaths {
		if a, b := s.do(t, http.MethodGet, path, nil), reference.do(t, http.MethodGet, path, nil); bytes.Equal(a.Body, b.Body) {
			t.Fatalf("control: %s answers the same with DOC006 as without it, so this test could not fail\n%s", path, a.Body)
		}
	}

	if r := s.do(t, http.MethodDelete, "/v1/documents/DOC006", nil); r.Status != http.StatusPreconditionRequired || !strings.Contains(string(r.Body), "/problems/precondition_required") {
		t.Fatalf("DELETE without If-Match: %d, want 428\n%s", r.Status, r.Body)
	}
	if r := s.do(t, http.MethodDelete, "/v1/documents/DOC006", nil, "If-Match", `"2"`); r.Status != http.StatusPreconditionFailed {
		t.Fatalf("DELETE with a version DOC006 is not at: %d, want 412\n%s", r.Status, r.Body)
	}
	if r := s.do(t, http.MethodDelete, "/v1/documents/DOC006", nil, "If-Match", `W/"1"`); r.Status != http.StatusPreconditionFailed {
		t.Fatalf("DELETE with a weak ETag: %d, want 412\n%s", r.Status, r.Body)
	}
	var before struct{ Version int }
	getJSON(t, s, "/v1/documents/DOC006/versions/latest", &before)
	if before.Version != 1 {
		t.Fatalf("a refused DELETE wrote: DOC006 is at version %d", before.Version)
	}

	voided := s.do(t, http.MethodDelete, "/v1/documents/DOC006", nil, "If-Match", `"1"`)
	if voided.Status != http.StatusOK || voided.Header.Get("ETag") != `"2"` {
		t.Fatalf("DELETE: %d ETag %q\n%s", voided.Status, voided.Header.Get("ETag"), voided.Body)
	}
	var v struct {
		Version       int
		Status        string
		PositionCount int
		Positions     []any
		CreatedBy     string
		Changes       changesAnswer
	}
	if err := json.Unmarshal(voided.Body, &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != 2 || v.Status != "voided" || v.PositionCount != 0 || len(v.Positions) != 0 || v.CreatedBy != adminOfAll.Subject ||
		v.Changes.Positions.String() != "added [] removed [POSITION_1,POSITION_2,POSITION_3] changed []" {
		t.Fatalf("the void's answer: %+v\n%s", v, voided.Body)
	}

	t.Run("voiding again answers the same and writes nothing, whatever If-Match names", func(t *testing.T) {
		for _, ifMatch := range []string{`"1"`, `"2"`, "*"} {
			again := s.do(t, http.MethodDelete, "/v1/documents/DOC006", nil, "If-Match", ifMatch)
			if again.Status != http.StatusOK || !bytes.Equal(again.Body, voided.Body) || again.Header.Get("ETag") != `"2"` {
				t.Errorf("DELETE again with If-Match %s: %d\n%s\nwant the first answer\n%s", ifMatch, again.Status, again.Body, voided.Body)
			}
		}
	})
	t.Run("a restatement of the voided document is 409", func(t *testing.T) {
		body := map[string]any{"fundId": "FUND_A", "kind": "distribution_notice", "title": "Back", "asOf": "2025-12-08",
			"positions": []any{map[string]any{"positionId": "POSITION_1", "investorId": "INVESTOR_1", "distribution": map[string]any{"amount": "1.00"}}}}
		if r := s.do(t, http.MethodPut, "/v1/documents/DOC006", body); r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "voided") {
			t.Errorf("PUT after the void: %d, want 409 saying it was voided\n%s", r.Status, r.Body)
		}
	})
	t.Run("every figure and listing equals that of a table without the document", func(t *testing.T) {
		for _, path := range voidReadPaths {
			a, b := s.do(t, http.MethodGet, path, nil), reference.do(t, http.MethodGet, path, nil)
			if a.Status != http.StatusOK || !bytes.Equal(a.Body, b.Body) {
				t.Errorf("GET %s after the void: %d\n%s\nwithout DOC006: %d\n%s", path, a.Status, a.Body, b.Status, b.Body)
			}
		}
	})
	t.Run("every version stays readable and the versions listing begins with the voided one", func(t *testing.T) {
		var list struct {
			Latest struct {
				Version int
				Status  string
			}
			Versions []struct {
				Version       int
				Status        string
				PositionCount int
			}
		}
		getJSON(t, s, "/v1/documents/DOC006/versions", &list)
		if list.Latest.Version != 2 || list.Latest.Status != "voided" || len(list.Versions) != 2 ||
			list.Versions[1].Status != "superseded" || list.Versions[1].PositionCount != 3 || list.Versions[0].Status != "voided" || list.Versions[0].Version != 2 {
			t.Errorf("versions: %+v", list)
		}
		var first struct{ Positions []struct{ PositionID string } }
		getJSON(t, s, "/v1/documents/DOC006/versions/1", &first)
		if len(first.Positions) != 3 {
			t.Errorf("version 1 after the void holds %d positions, want 3", len(first.Positions))
		}
		var overview struct {
			Documents struct{ Latest struct{ Status string } }
			Positions map[string]any
		}
		getJSON(t, s, "/v1/documents/DOC006", &overview)
		if overview.Documents.Latest.Status != "voided" || len(overview.Positions) != 0 {
			t.Errorf("overview: %+v", overview)
		}
		if r := s.do(t, http.MethodGet, "/v1/documents/DOC006/positions/POSITION_1", nil); r.Status != http.StatusNotFound {
			t.Errorf("a position of the voided document: %d, want 404\n%s", r.Status, r.Body)
		}
	})
}
