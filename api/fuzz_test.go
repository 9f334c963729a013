package api

import (
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"

	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fundsvc/fundsvc/fund"
)

// The fuzz targets here reach the unexported decoders directly and never
// touch DynamoDB; the package's TestMain (in package api_test) still runs.

// validDocumentBody is a document that every check accepts, with every kind
// of item and every line item; the seeds below break it in one place each.
const validDocumentBody = `{
	"fundId": "FUND_A", "kind": "capital_call_notice", "title": "Capital call notice 2025-11",
	"asOf": "2025-11-01", "currency": "USD",
	"capitalActivity": {"amount": "100000.00", "status": "pending", "activityDate": "2025-11-01", "description": "November call"},
	"positions": [
		{"positionId": "POSITION_1", "investorId": "INVESTOR_1",
			"capitalCall": {"amount": "60000.00", "status": "pending", "dueDate": "2025-11-30",
				"investment": "55000.00", "managementFee": "4000.00", "fundExpenses": "1000.00"},
			"distribution": {"amount": "10000.00", "status": "completed", "paymentDate": "2025-11-15",
				"returnOfCapital": "6000.00", "realizedGain": "3000.00", "income": "1000.00", "recallable": "2000.00", "withholding": "500.00",
				"transactions": [{"transactionType": "recallable_return_of_capital", "amount": "2000.00"}, {"transactionType": "return_of_capital", "amount": "4000.00"},
					{"transactionType": "gain_loss", "amount": "3000.00", "unfundedEffect": "none"}, {"transactionType": "income", "amount": "1000.00"}]},
			"unfundedCommitment": {"amount": "1440000.00", "commitment": "2000000.00"}},
		{"positionId": "POSITION_2", "investorId": "INVESTOR_2", "capitalCall": {"amount": 40000.5},
			"capitalAccount": {"periodStart": "2025-10-01", "beginningNav": "100000.00", "contributions": "40000.50",
				"managementFeesGross": "-1000.00", "netUnrealizedGainLoss": "5999.50", "endingNav": "145000.00",
				"carriedInterestAccruedEarned": "-1200.00", "totalCommitment": "500000.00", "beginningUnfundedCommitment": "400000.00",
				"lessContributions": "-40000.50", "endingUnfundedCommitment": "359999.50"}}
	]
}`

// acceptDocument runs a request body through everything a PUT of document
// DOC1 does before it reaches the store.
func acceptDocument(body []byte) (fund.Document, error) {
	var req wire.DocumentRequest
	if err := wire.DecodeStrict(bytes.NewReader(body), &req); err != nil {
		return fund.Document{}, err
	}
	d, err := req.ToDocument("DOC1")
	if err != nil {
		return d, err
	}
	d.Normalize()
	return d, d.Validate(fund.DefaultMaxPositions)
}

// documentAmounts names every amount of d.
func documentAmounts(d fund.Document) map[string]fund.Money {
	out := map[string]fund.Money{}
	opt := func(name string, m *fund.Money) {
		if m != nil {
			out[name] = *m
		}
	}
	if a := d.CapitalActivity; a != nil {
		out["capitalActivity.amount"] = a.Amount
	}
	for _, p := range d.Positions {
		if c := p.CapitalCall; c != nil {
			out[p.ID+".capitalCall.amount"] = c.Amount
			opt(p.ID+".capitalCall.investment", c.Investment)
			opt(p.ID+".capitalCall.managementFee", c.ManagementFee)
			opt(p.ID+".capitalCall.fundExpenses", c.FundExpenses)
		}
		if x := p.Distribution; x != nil {
			out[p.ID+".distribution.amount"] = x.Amount
			opt(p.ID+".distribution.returnOfCapital", x.ReturnOfCapital)
			opt(p.ID+".distribution.realizedGain", x.RealizedGain)
			opt(p.ID+".distribution.income", x.Income)
			opt(p.ID+".distribution.recallable", x.Recallable)
			opt(p.ID+".distribution.withholding", x.Withholding)
		}
		if u := p.UnfundedCommitment; u != nil {
			out[p.ID+".unfundedCommitment.amount"] = u.Amount
			opt(p.ID+".unfundedCommitment.commitment", u.Commitment)
		}
		for _, item := range []struct {
			name  string
			lines []fund.Transaction
		}{{"capitalCall", callLines(p)}, {"distribution", distributionLines(p)}} {
			for i, l := range item.lines {
				out[fmt.Sprintf("%s.%s.transactions[%d].amount", p.ID, item.name, i)] = l.Amount
			}
		}
		if c := p.CapitalAccount; c != nil {
			for _, l := range fund.CapitalLines() {
				opt(p.ID+".capitalAccount."+l.Name, l.Get(c))
			}
		}
	}
	return out
}

func callLines(p fund.Position) []fund.Transaction {
	if p.CapitalCall == nil {
		return nil
	}
	return p.CapitalCall.Transactions
}

func distributionLines(p fund.Position) []fund.Transaction {
	if p.Distribution == nil {
		return nil
	}
	return p.Distribution.Transactions
}

func callAmount(p fund.Position) *fund.Money {
	if p.CapitalCall == nil {
		return nil
	}
	return &p.CapitalCall.Amount
}

func distributionAmount(p fund.Position) *fund.Money {
	if p.Distribution == nil {
		return nil
	}
	return &p.Distribution.Amount
}

// rollsForward recomputes, independently of fund's check, that a section
// of an accepted statement adds up: the beginning plus the movements is the
// ending, the memos left out.
func rollsForward(c *fund.CapitalAccount, section string) bool {
	var sum, end fund.Money
	given := false
	for _, l := range fund.CapitalLines() {
		m := l.Get(c)
		if l.Section != section || m == nil {
			continue
		}
		given = true
		switch l.Role {
		case "beginning", "movement":
			sum = sum.Add(*m)
		case "ending":
			end = *m
		}
	}
	return !given || sum.Equal(end)
}

// TestValidDocumentBodyIsAccepted keeps FuzzDocumentRequest honest: its
// main seed must reach the checks on accepted documents.
func TestValidDocumentBodyIsAccepted(t *testing.T) {
	d, err := acceptDocument([]byte(validDocumentBody))
	if err != nil {
		t.Fatalf("the valid seed is refused: %v", err)
	}
	if len(d.Positions) != 2 || len(documentAmounts(d)) != 28 {
		t.Fatalf("the valid seed has %d positions and %d amounts, want 2 and 28", len(d.Positions), len(documentAmounts(d)))
	}
}

func FuzzDocumentRequest(f *testing.F) {
	valid := validDocumentBody
	for _, s := range []string{
		valid,
		`{"fundId": "F", "kind": "distribution_notice", "title": "t", "asOf": "2025-01-01", "positions": []}`,
		"", "null", "[]", `"document"`, "{}", `{"positions": null}`, "{\"fundId\": \"FUND_A\",", `{"fundId": "FUND_A" "kind": 1}`,
		valid + " {}",
		valid + " x",
		"[" + valid + "]",
		strings.Replace(valid, `"title"`, `"version": 7, "title"`, 1),
		strings.Replace(valid, `"fundExpenses": "1000.00"`, `"fundExpenses": "1000.00", "carry": "1.00"`, 1),
		strings.Replace(valid, `"100000.00"`, `null`, 1),
		strings.Replace(valid, `"60000.00"`, `"60000.00001"`, 1),
		strings.Replace(valid, `40000.5`, `1e3`, 1),
		strings.Replace(valid, `40000.5`, `true`, 1),
		strings.Replace(valid, `40000.5`, `{"value": 1}`, 1),
		strings.Replace(valid, `"2025-11-30"`, `"2025-02-30"`, 1),
		strings.Replace(valid, `"2025-11-01"`, `20251101`, 1),
		strings.Replace(valid, `"POSITION_2"`, `"POSITION_1"`, 1),
		strings.Replace(valid, `"POSITION_2"`, `"POSITION#2"`, 1),
		strings.Replace(valid, `"4000.00"`, `"4000.01"`, 1),
		strings.Replace(valid, `"2000.00"`, `"-1"`, 1),
		strings.Replace(valid, `"1440000.00"`, `"-1.00"`, 1),
		strings.Replace(valid, `"USD"`, `"usd"`, 1),
		strings.Replace(valid, `"Pending"`, `"Paid"`, 1),
		strings.Replace(valid, `"145000.00"`, `"145000.01"`, 1),
		strings.Replace(valid, `"359999.50"`, `"360000.00"`, 1),
		strings.Replace(valid, `"-1000.00"`, `"1000.00"`, 1),
		strings.Replace(valid, `"2025-10-01"`, `"2025-11-02"`, 1),
		strings.Replace(valid, `"beginningNav": "100000.00", `, ``, 1),
		strings.Replace(valid, `"gain_loss"`, `"investment"`, 1),
		strings.Replace(valid, `"4000.00"}`, `"4000.01"}`, 1),
		strings.Replace(valid, `"unfundedEffect": "none"`, `"unfundedEffect": "reduces"`, 1),
		strings.Replace(valid, `"periodStart"`, `"period"`, 1),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := acceptDocument(body)
		if err != nil {
			// Every refusal must be one the client can act on: a coded
			// error that answers 4xx with something to say.
			var fe *fund.Error
			if !errors.As(err, &fe) {
				t.Fatalf("refused with %T %v, not a *fund.Error\nbody: %q", err, err, body)
			}
			if status, ok := statusOf[fe.Code]; !ok || status < 400 || status > 499 {
				t.Fatalf("refused with code %q, which answers %d, not 4xx: %v\nbody: %q", fe.Code, status, fe, body)
			}
			if fe.Message == "" {
				t.Fatalf("refused without a message: %#v\nbody: %q", fe, body)
			}
			return
		}
		if d.ID != "DOC1" || !fund.ValidID(d.FundID) {
			t.Fatalf("accepted document %q of fund %q\nbody: %q", d.ID, d.FundID, body)
		}
		for i, p := range d.Positions {
			if !fund.ValidID(p.ID) || !fund.ValidID(p.InvestorID) {
				t.Fatalf("accepted positions[%d] with position %q and investor %q\nbody: %q", i, p.ID, p.InvestorID, body)
			}
		}
		for _, p := range d.Positions {
			for _, item := range []struct {
				amount *fund.Money
				lines  []fund.Transaction
			}{{callAmount(p), callLines(p)}, {distributionAmount(p), distributionLines(p)}} {
				var sum fund.Money
				for _, l := range item.lines {
					sum = sum.Add(l.Amount)
				}
				if len(item.lines) > 0 && !sum.Equal(*item.amount) {
					t.Fatalf("accepted %s's typed lines adding up to %s, not %s\nbody: %q", p.ID, sum, item.amount, body)
				}
			}
			if c := p.CapitalAccount; c != nil && (!rollsForward(c, fund.SectionNAV) || !rollsForward(c, fund.SectionCommitment) || d.AsOf.Before(c.PeriodStart)) {
				t.Fatalf("accepted %s's statement, which does not roll forward or ends before it starts\nbody: %q", p.ID, body)
			}
		}
		for name, m := range documentAmounts(d) {
			back, err := fund.ParseMoney(m.String())
			if err != nil || !back.Equal(m) || back.String() != m.String() {
				t.Fatalf("accepted %s = %s, which reads back as %s, %v\nbody: %q", name, m, back, err, body)
			}
		}
	})
}

// cursorKeys is the store's page key a cursor carries: opaque bytes, none
// when empty.
func cursorKeys(spec string) store.PageKey {
	if spec == "" {
		return nil
	}
	return store.PageKey(spec)
}

func FuzzCursor(f *testing.F) {
	key := []byte("test-cursor-key-0123456789")
	good := cursorCodec{key: key}.encode(cursor{Query: "fund-positions:FUND_A", Key: store.PageKey(`{"PK":"FUND#FUND_A","SK":"POSITION#POSITION_1"}`)})
	overview := cursorCodec{key: key}.encode(cursor{Query: "overview:DOC001", Commit: "c1", Version: 3, After: "POSITION_1"})
	for _, s := range []struct {
		token, query string
		keys         string
		commit       string
		version      int
		after        string
		mask         byte
	}{
		{good, "fund-positions:FUND_A", "PK\nFUND#FUND_A\nSK\nPOSITION#POSITION_1", "", 0, "", 1},
		{overview, "overview:DOC001", "", "c1", 3, "POSITION_1", 0x20},
		{good, "fund-positions:FUND_B", "GSI2PK\nINVESTOR#I\nGSI2SK\n", "", 0, "", 0xff},
		{"", "", "", "", 0, "", 2},
		{".", "q", "\n", "", -1, "", 3},
		{"e30.", "q", "a\nb\nc", "", 1 << 40, "", 0x80},
		{"e30." + strings.Repeat("A", 43), "", "", "", 0, "", 4},
		{good + "=", "fund-positions:FUND_A", "", "", 0, "", 1},
		{strings.Replace(good, ".", "..", 1), "fund-positions:FUND_A", "", "", 0, "", 1},
		{strings.Repeat("A", 5000) + "." + strings.Repeat("A", 43), "x", "", "", 0, "", 1},
		{"eyJxIjoieCJ9.AAAA", "x", "<\n>&\u2028", "\"", 0, "\\", 1},
	} {
		f.Add(s.token, s.query, key, s.keys, s.commit, s.version, s.after, s.mask)
	}
	f.Fuzz(func(t *testing.T, token, query string, key []byte, keys, commit string, version int, after string, mask byte) {
		cc := cursorCodec{key: key}
		refused := func(what, tok, q string, cc cursorCodec) {
			t.Helper()
			_, err := cc.decode(tok, q)
			var fe *fund.Error
			if err == nil {
				t.Fatalf("%s: decode(%q, %q) with key %q accepted it", what, tok, q, cc.key)
			}
			if !errors.As(err, &fe) || fe.Code != fund.EINVALID || fe.Field != "cursor" {
				t.Fatalf("%s: decode(%q, %q) = %#v, want EINVALID blaming cursor", what, tok, q, err)
			}
		}

		// Arbitrary text: refused as a cursor, unless it really is one this
		// codec signed for this query.
		if c, err := cc.decode(token, query); err == nil {
			if c.Query != query {
				t.Fatalf("decode(%q, %q) accepted a cursor of query %q", token, query, c.Query)
			}
		} else {
			refused("arbitrary token", token, query, cc)
		}

		// A cursor the codec issued comes back exactly. JSON replaces
		// invalid UTF-8, so strings that travel inside the token as JSON
		// cannot round-trip with any; the server's keys and versions never
		// hold any (IDs, dates, kinds, DynamoDB strings).
		c := cursor{Query: query, Key: cursorKeys(keys), Commit: commit, Version: version, After: after}
		for _, s := range []string{keys, commit, after} {
			if !utf8.ValidString(s) {
				return
			}
		}
		tok := cc.encode(c)
		if len(tok) > maxCursor {
			refused("a token longer than decode's limit", tok, query, cc)
			return
		}
		got, err := cc.decode(tok, query)
		if err != nil {
			t.Fatalf("decode(encode(%#v)) = %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("decode(encode(%#v)) = %#v", c, got)
		}

		// Nobody else's cursor.
		refused("another query", tok, query+"x", cc)
		if token != query {
			refused("another query", tok, token, cc)
		}
		refused("another key", tok, query, cursorCodec{key: append(append([]byte{}, key...), 1)})

		// No altered token.
		if mask == 0 {
			mask = 1
		}
		for i := range len(tok) {
			b := []byte(tok)
			b[i] ^= mask
			refused("a token with one byte changed", string(b), query, cc)
		}
	})
}
