package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
)

// fullFundBody is a fund record with every member set.
var fullFundBody = map[string]any{
	"name": "Fund B", "legalName": "Fund B Holdings, L.P.", "baseCurrency": "EUR", "vintageYear": 2024,
	"targetSize": "123456789012345.6789", "inceptionDate": "2024-05-02",
	"externalIds": map[string]any{"carta": "FB-1", "burgiss.fund": "99"},
}

// fullInvestorBody is an investor record with every member set.
var fullInvestorBody = map[string]any{"displayName": "Birch Family Office", "investorType": "family_office", "externalIds": map[string]any{"crm": "C-77"}}

// everyMember fails t unless body sets a member for every field of the
// record struct t, so that a field added to the record is in the round
// trip below.
func everyMember(t *testing.T, typ reflect.Type, body map[string]any) {
	t.Helper()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if _, ok := body[name]; !ok {
			t.Errorf("the full %s body has no %s: add it", typ.Name(), name)
		}
	}
}

// TestARecordIsAnsweredAsItWasPut puts a fund and an investor record with
// every member set, and reads each back by GET and in its listing, member
// for member; then replaces it with If-Match, which the ETag follows.
func TestARecordIsAnsweredAsItWasPut(t *testing.T) {
	everyMember(t, reflect.TypeFor[fund.FundFields](), fullFundBody)
	everyMember(t, reflect.TypeFor[fund.InvestorFields](), fullInvestorBody)
	s := newServer(t, true)
	put := s.do(t, http.MethodPut, "/v1/funds/FUND_B", fullFundBody)
	if put.Status != http.StatusCreated || put.Header.Get("ETag") != `"1"` || put.Header.Get("Location") != "/v1/funds/FUND_B" {
		t.Fatalf("PUT: %d ETag %q Location %q\n%s", put.Status, put.Header.Get("ETag"), put.Header.Get("Location"), put.Body)
	}
	want := map[string]any{"fundId": "FUND_B", "version": float64(1), "updatedBy": adminOfAll.Subject}
	for k, v := range fullFundBody {
		want[k] = v
	}
	b, _ := json.Marshal(want) // as JSON numbers decode
	want = nil
	_ = json.Unmarshal(b, &want)
	check := func(what string, got map[string]any) {
		t.Helper()
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(got["updatedAt"])); err != nil {
			t.Errorf("%s: updatedAt %v is not an instant", what, got["updatedAt"])
		}
		delete(got, "updatedAt")
		delete(got, "basis") // a GET's (knownat_records_test.go), not a PUT's or a listed item's
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v\nwant %v", what, got, want)
		}
	}
	check("PUT's answer", put.JSON(t))
	get := s.do(t, http.MethodGet, "/v1/funds/FUND_B", nil)
	if get.Status != http.StatusOK || get.Header.Get("ETag") != `"1"` {
		t.Fatalf("GET: %d ETag %q\n%s", get.Status, get.Header.Get("ETag"), get.Body)
	}
	check("GET", get.JSON(t))
	listed := findItem(t, pollList(t, s, "/v1/funds", "FUND_B"), "fundId", "FUND_B")
	check("GET /v1/funds", listed)

	again := s.do(t, http.MethodPut, "/v1/funds/FUND_B", map[string]any{"name": "Fund B II", "baseCurrency": "EUR"}, "If-Match", `"1"`)
	if again.Status != http.StatusOK || again.Header.Get("ETag") != `"2"` {
		t.Fatalf("replace with If-Match: %d ETag %q\n%s", again.Status, again.Header.Get("ETag"), again.Body)
	}
	got := s.do(t, http.MethodGet, "/v1/funds/FUND_B", nil).JSON(t)
	if got["name"] != "Fund B II" || got["targetSize"] != nil || got["externalIds"] != nil || got["version"] != float64(2) {
		t.Errorf("a replacement is the whole record: %v", got)
	}

	inv := fullInvestorBody
	if r := s.do(t, http.MethodPut, "/v1/investors/INVESTOR_NEW", inv); r.Status != http.StatusCreated {
		t.Fatalf("PUT investor: %d\n%s", r.Status, r.Body)
	}
	gi := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_NEW", nil)
	if gi.Status != http.StatusOK || gi.Header.Get("ETag") != `"1"` {
		t.Fatalf("GET investor: %d\n%s", gi.Status, gi.Body)
	}
	for k, v := range inv {
		if g := gi.JSON(t)[k]; !reflect.DeepEqual(g, v) {
			t.Errorf("investor %s = %v, want %v", k, g, v)
		}
	}
	findItem(t, pollList(t, s, "/v1/investors", "INVESTOR_NEW"), "investorId", "INVESTOR_NEW")
}

// pollList reads a listing until an item names id (the registries are a
// secondary index), following next; it returns every item read.
func pollList(t *testing.T, s *testServer, path, id string, headers ...string) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		items := readAll(t, s, path, headers...)
		for _, it := range items {
			if it["fundId"] == id || it["investorId"] == id {
				return items
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listed %s: %v", path, id, items)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readAll reads every page of a listing.
func readAll(t *testing.T, s *testServer, path string, headers ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	next := ""
	for pages := 0; ; pages++ {
		p := path
		if next != "" {
			sep := "?"
			if strings.Contains(p, "?") {
				sep = "&"
			}
			p += sep + "cursor=" + next
		}
		r := s.do(t, http.MethodGet, p, nil, headers...)
		if r.Status != http.StatusOK || pages > 200 {
			t.Fatalf("GET %s: %d\n%s", p, r.Status, r.Body)
		}
		var page struct {
			Items []map[string]any `json:"items"`
			Next  string           `json:"next"`
		}
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Items...)
		if page.Next == "" {
			return out
		}
		next = page.Next
	}
}

func findItem(t *testing.T, items []map[string]any, key, id string) map[string]any {
	t.Helper()
	for _, it := range items {
		if it[key] == id {
			return it
		}
	}
	t.Fatalf("no item with %s %s in %v", key, id, items)
	return nil
}

// TestBadRecordInputIsRefusedAndChangesNothing sends record bodies that
// break one rule each: each is 400 naming the member, and the record stays
// as it was (version and members).
func TestBadRecordInputIsRefusedAndChangesNothing(t *testing.T) {
	s := newServer(t, true)
	before := s.do(t, http.MethodGet, "/v1/funds/FUND_A", nil)
	if before.Status != http.StatusOK || before.JSON(t)["name"] != "Fund A" {
		t.Fatalf("the demo's FUND_A record: %d\n%s", before.Status, before.Body)
	}
	with := func(k string, v any) map[string]any {
		b := map[string]any{"name": "Changed", "baseCurrency": "USD"}
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	many := map[string]any{}
	for i := range fund.MaxExternalIDs + 1 {
		many[fmt.Sprintf("sys%d", i)] = "x"
	}
	fundCases := []struct {
		name  string
		body  any
		field string
	}{
		{"an unknown member", with("nickname", "A"), "nickname"},
		{"no name", with("name", nil), "name"},
		{"a name of 201 bytes", with("name", strings.Repeat("n", 201)), "name"},
		{"a lower-case currency", with("baseCurrency", "usd"), "baseCurrency"},
		{"a currency of four letters", with("baseCurrency", "USDT"), "baseCurrency"},
		{"a vintage year with a fraction", with("vintageYear", 2025.5), "vintageYear"},
		{"a vintage year written 2025.0", `{"name":"Changed","baseCurrency":"USD","vintageYear":2025.0}`, "vintageYear"},
		{"a vintage year as a string", with("vintageYear", "2025"), "vintageYear"},
		{"a vintage year of 1899", with("vintageYear", 1899), "vintageYear"},
		{"a target size in exponent notation", `{"name":"Changed","baseCurrency":"USD","targetSize":1e9}`, "targetSize"},
		{"a negative target size", with("targetSize", "-1.00"), "targetSize"},
		{"a target size of five decimals", with("targetSize", "1.00001"), "targetSize"},
		{"an inception date that is no date", with("inceptionDate", "2025-02-30"), "inceptionDate"},
		{"too many external identifiers", with("externalIds", many), "externalIds"},
		{"an external identifier that is a number", with("externalIds", map[string]any{"carta": 7}), "externalIds.carta"},
		{"an empty external identifier", with("externalIds", map[string]any{"carta": ""}), "externalIds.carta"},
		{"an external system with a space", with("externalIds", map[string]any{"my system": "1"}), "externalIds"},
		{"a null name", `{"name":null,"baseCurrency":"USD"}`, "name"},
		{"externalIds that is a list", with("externalIds", []any{"a"}), "externalIds"},
		{"a server-owned version", with("version", 7), "version"},
	}
	for _, c := range fundCases {
		t.Run("a fund record with "+c.name+" is 400", func(t *testing.T) {
			r := s.do(t, http.MethodPut, "/v1/funds/FUND_A", c.body)
			p := checkProblem(t, r, http.StatusBadRequest, "/problems/invalid")
			if p.Field != c.field {
				t.Errorf("field %q, want %q (%s)", p.Field, c.field, p.Detail)
			}
		})
	}
	invCases := []struct {
		name  string
		body  any
		field string
	}{
		{"an investor type in another casing", map[string]any{"displayName": "X", "investorType": "Pension"}, "investorType"},
		{"an unknown investor type", map[string]any{"displayName": "X", "investorType": "hedge_fund"}, "investorType"},
		{"no investor type", map[string]any{"displayName": "X"}, "investorType"},
		{"no display name", map[string]any{"investorType": "pension"}, "displayName"},
		{"an unknown member", map[string]any{"displayName": "X", "investorType": "pension", "type": "pension"}, "type"},
	}
	invBefore := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_1", nil)
	for _, c := range invCases {
		t.Run("an investor record with "+c.name+" is 400", func(t *testing.T) {
			r := s.do(t, http.MethodPut, "/v1/investors/INVESTOR_1", c.body)
			p := checkProblem(t, r, http.StatusBadRequest, "/problems/invalid")
			if p.Field != c.field {
				t.Errorf("field %q, want %q (%s)", p.Field, c.field, p.Detail)
			}
		})
	}
	t.Run("If-Match of another version, or * without a record, is 412", func(t *testing.T) {
		checkProblem(t, s.do(t, http.MethodPut, "/v1/funds/FUND_A", with("name", "Changed"), "If-Match", `"2"`), http.StatusPreconditionFailed, "/problems/precondition_failed")
		checkProblem(t, s.do(t, http.MethodPut, "/v1/funds/FUND_A", with("name", "Changed"), "If-Match", `"0"`), http.StatusPreconditionFailed, "/problems/precondition_failed")
		checkProblem(t, s.do(t, http.MethodPut, "/v1/investors/INVESTOR_3", map[string]any{"displayName": "X", "investorType": "other"}, "If-Match", "*"), http.StatusPreconditionFailed, "/problems/precondition_failed")
	})
	t.Run("nothing changed", func(t *testing.T) {
		after := s.do(t, http.MethodGet, "/v1/funds/FUND_A", nil)
		if string(after.Body) != string(before.Body) || after.Header.Get("ETag") != `"1"` {
			t.Errorf("FUND_A changed:\n%s\nwas\n%s", after.Body, before.Body)
		}
		if a := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_1", nil); string(a.Body) != string(invBefore.Body) {
			t.Errorf("INVESTOR_1 changed:\n%s\nwas\n%s", a.Body, invBefore.Body)
		}
		r := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_3", nil)
		if r.Status != http.StatusOK || r.Header.Get("ETag") != "" || r.JSON(t)["displayName"] != nil {
			t.Errorf("INVESTOR_3 has a record now: %d %s", r.Status, r.Body)
		}
	})
}

// TestFundsAndInvestorsKnownOnlyFromDocuments: a fund and an investor that
// documents name but that have no record are answered and listed by ID
// alone, and position listings carry the names of those that have one.
func TestFundsAndInvestorsKnownOnlyFromDocuments(t *testing.T) {
	s := newServer(t, true)
	d := map[string]any{"fundId": "FUND_D", "kind": "capital_call_notice", "title": "Call", "asOf": "2025-12-01", "currency": "USD",
		"positions": []any{
			map[string]any{"positionId": "POS_D1", "investorId": "INVESTOR_1", "capitalCall": map[string]any{"amount": "1.00", "status": "pending", "dueDate": "2025-12-31"}},
			map[string]any{"positionId": "POS_D9", "investorId": "INVESTOR_D9", "capitalCall": map[string]any{"amount": "2.00", "status": "pending", "dueDate": "2025-12-31"}},
		}}
	if r := s.do(t, http.MethodPut, "/v1/documents/DOC_D", d); r.Status != http.StatusCreated {
		t.Fatalf("PUT: %d\n%s", r.Status, r.Body)
	}
	for path, want := range map[string]map[string]any{
		"/v1/funds/FUND_D":          {"fundId": "FUND_D"},
		"/v1/investors/INVESTOR_D9": {"investorId": "INVESTOR_D9"},
		"/v1/investors/INVESTOR_3":  {"investorId": "INVESTOR_3"},
	} {
		r := s.do(t, http.MethodGet, path, nil)
		got := r.JSON(t)
		delete(got, "basis") // knownat_records_test.go
		if r.Status != http.StatusOK || r.Header.Get("ETag") != "" || !reflect.DeepEqual(got, want) {
			t.Errorf("GET %s: %d ETag %q %s; want %v and no ETag", path, r.Status, r.Header.Get("ETag"), r.Body, want)
		}
	}
	for _, path := range []string{"/v1/funds/FUND_NONE", "/v1/investors/INVESTOR_NONE"} {
		checkProblem(t, s.do(t, http.MethodGet, path, nil), http.StatusNotFound, "/problems/not_found")
	}
	funds := pollList(t, s, "/v1/funds?limit=1", "FUND_D")
	if a := findItem(t, funds, "fundId", "FUND_A"); a["name"] != "Fund A" {
		t.Errorf("FUND_A listed as %v", a)
	}
	if dd := findItem(t, funds, "fundId", "FUND_D"); !reflect.DeepEqual(dd, map[string]any{"fundId": "FUND_D"}) {
		t.Errorf("FUND_D listed as %v", dd)
	}
	invs := pollList(t, s, "/v1/investors?limit=2", "INVESTOR_D9")
	ids := []string{}
	for _, it := range invs {
		ids = append(ids, it["investorId"].(string))
	}
	slices.Sort(ids)
	if want := []string{"INVESTOR_1", "INVESTOR_2", "INVESTOR_3", "INVESTOR_D9"}; !slices.Equal(ids, want) {
		t.Errorf("investors %v, want %v, each once", ids, want)
	}
	asA := "Bearer " + token(t, api.Principal{Subject: "admin-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	ofA := readAll(t, s, "/v1/investors?fundId=FUND_A&limit=2", "Authorization", asA)
	got := map[string]any{}
	for _, it := range ofA {
		got[it["investorId"].(string)] = it["displayName"]
	}
	if want := map[string]any{"INVESTOR_1": "Northwind State Pension Plan", "INVESTOR_2": "Alder University Endowment", "INVESTOR_3": nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("FUND_A's investors %v, want %v", got, want)
	}

	t.Run("a fund's positions carry the fund's and the investors' names", func(t *testing.T) {
		names := map[string][2]any{}
		for _, it := range readAll(t, s, "/v1/funds/FUND_A/positions") {
			names[it["positionId"].(string)] = [2]any{it["fundName"], it["investorDisplayName"]}
		}
		want := map[string][2]any{"POSITION_1": {"Fund A", "Northwind State Pension Plan"}, "POSITION_2": {"Fund A", "Alder University Endowment"}, "POSITION_3": {"Fund A", nil}}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("names %v, want %v", names, want)
		}
	})
	t.Run("an investor's positions and summary carry the names", func(t *testing.T) {
		inv1 := "Bearer " + token(t, api.Principal{Subject: "lp1", Role: api.RoleInvestor, Investor: "INVESTOR_1"})
		names := map[string]any{}
		for _, it := range readAll(t, s, "/v1/investors/INVESTOR_1/positions", "Authorization", inv1) {
			names[it["fundId"].(string)] = it["fundName"]
			if it["investorDisplayName"] != "Northwind State Pension Plan" {
				t.Errorf("position %v without the investor's name", it)
			}
		}
		if want := map[string]any{"FUND_A": "Fund A", "FUND_D": nil}; !reflect.DeepEqual(names, want) {
			t.Errorf("fund names %v, want %v", names, want)
		}
		sum := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_1/summary", nil, "Authorization", inv1).JSON(t)
		if sum["investorDisplayName"] != "Northwind State Pension Plan" {
			t.Errorf("summary's investorDisplayName %v", sum["investorDisplayName"])
		}
		got := map[string]any{}
		for _, p := range sum["positions"].([]any) {
			m := p.(map[string]any)
			got[m["fundId"].(string)] = m["fundName"]
		}
		if want := map[string]any{"FUND_A": "Fund A", "FUND_D": nil}; !reflect.DeepEqual(got, want) {
			t.Errorf("summary's fund names %v, want %v", got, want)
		}
	})
	t.Run("an investor reads the funds it holds positions of, and no other", func(t *testing.T) {
		inv2 := "Bearer " + token(t, api.Principal{Subject: "lp2", Role: api.RoleInvestor, Investor: "INVESTOR_2"})
		var ids []string
		for _, it := range readAll(t, s, "/v1/funds", "Authorization", inv2) {
			ids = append(ids, it["fundId"].(string))
		}
		if !slices.Equal(ids, []string{"FUND_A"}) {
			t.Errorf("INVESTOR_2's funds %v, want [FUND_A]", ids)
		}
		a := s.do(t, http.MethodGet, "/v1/funds/FUND_D", nil, "Authorization", inv2)
		b := s.do(t, http.MethodGet, "/v1/funds/FUND_NONE", nil, "Authorization", inv2)
		pa, pb := checkProblem(t, a, http.StatusNotFound, "/problems/not_found"), checkProblem(t, b, http.StatusNotFound, "/problems/not_found")
		if strings.ReplaceAll(pa.Detail, "FUND_D", "FUND_NONE") != pb.Detail {
			t.Errorf("another fund %q differs from an unknown one %q", pa.Detail, pb.Detail)
		}
	})
	t.Run("an admin of some funds reads and writes the investors of its funds only", func(t *testing.T) {
		asD := "Bearer " + token(t, api.Principal{Subject: "admin-d", Role: api.RoleAdmin, Funds: []string{"FUND_D"}})
		if r := s.do(t, http.MethodGet, "/v1/investors/INVESTOR_1", nil, "Authorization", asD); r.Status != http.StatusOK {
			t.Errorf("INVESTOR_1 holds a position of FUND_D: %d %s", r.Status, r.Body)
		}
		checkProblem(t, s.do(t, http.MethodGet, "/v1/investors/INVESTOR_2", nil, "Authorization", asD), http.StatusNotFound, "/problems/not_found")
		checkProblem(t, s.do(t, http.MethodPut, "/v1/investors/INVESTOR_2", map[string]any{"displayName": "X", "investorType": "other"}, "Authorization", asD), http.StatusNotFound, "/problems/not_found")
		if r := s.do(t, http.MethodPut, "/v1/investors/INVESTOR_D9", map[string]any{"displayName": "Nine", "investorType": "individual"}, "Authorization", asD); r.Status != http.StatusCreated {
			t.Errorf("PUT INVESTOR_D9 by FUND_D's admin: %d %s", r.Status, r.Body)
		}
		checkProblem(t, s.do(t, http.MethodGet, "/v1/investors", nil, "Authorization", asD), http.StatusBadRequest, "/problems/invalid")
	})
}
