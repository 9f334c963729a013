package api

import (
	"github.com/fundsvc/fundsvc/wire"

	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The overview as encoding/json wrote it, before appendOverview: the
// reference the appender must match byte for byte.

// positionGroup is one position's items in an overview.
type positionGroup struct {
	InvestorID          string              `json:"investorId"`
	CapitalCalls        []wire.PositionItem `json:"capitalCalls"`
	Distributions       []wire.PositionItem `json:"distributions"`
	UnfundedCommitments []wire.PositionItem `json:"unfundedCommitments"`
}

// groupItems groups a page of items by position, and returns the last
// position's ID, where the next page starts.
func groupItems(items []fund.PositionItem) (map[string]*positionGroup, string) {
	out := map[string]*positionGroup{}
	last := ""
	for _, it := range items {
		g := out[it.PositionID]
		if g == nil {
			g = &positionGroup{InvestorID: it.InvestorID, CapitalCalls: []wire.PositionItem{}, Distributions: []wire.PositionItem{}, UnfundedCommitments: []wire.PositionItem{}}
			out[it.PositionID] = g
		}
		if it.PositionID > last {
			last = it.PositionID
		}
		w := wire.ItemOf(it)
		switch it.Kind {
		case fund.CapitalCall:
			g.CapitalCalls = append(g.CapitalCalls, w)
		case fund.Distribution:
			g.Distributions = append(g.Distributions, w)
		default:
			g.UnfundedCommitments = append(g.UnfundedCommitments, w)
		}
	}
	return out, last
}

type overviewResponse struct {
	DocumentID string `json:"documentId"`
	Version    int    `json:"version"`
	// Documents and capital activities come with the first page only.
	Documents         *wire.OverviewDocuments   `json:"documents,omitempty"`
	CapitalActivities *wire.CapitalActivities   `json:"capitalActivities,omitempty"`
	Positions         map[string]*positionGroup `json:"positions"`
	Next              string                    `json:"next,omitempty"`
}

// wireTestData makes random values for the appenders, with strings that
// need escaping (HTML characters, quotes, control characters, non-ASCII,
// invalid UTF-8, U+2028) now and then.
type wireTestData struct{ rng *rand.Rand }

func (d wireTestData) str() string {
	plain := []string{"DOC001", "FUND_A", "INVESTOR_1", "USD", "Q3 2025 statement", "fundsvc seed", ""}
	odd := []string{"A&B <fund>", `say "hi"\`, "tab\tnew\nline\x01", "Zürich €", "bad \xff byte", "line\u2028sep", "</script>"}
	if d.rng.IntN(5) == 0 {
		return odd[d.rng.IntN(len(odd))]
	}
	return plain[d.rng.IntN(len(plain))]
}

func (d wireTestData) money() fund.Money {
	s := fmt.Sprintf("%d", d.rng.Int64N(2_000_000_000)-1_000_000_000)
	if n := d.rng.IntN(5); n > 0 {
		s += "." + fmt.Sprintf("%04d", d.rng.IntN(10000))[:n]
	}
	return fund.MustMoney(s)
}

func (d wireTestData) optMoney() *fund.Money {
	if d.rng.IntN(2) == 0 {
		return nil
	}
	m := d.money()
	return &m
}

func (d wireTestData) date() fund.Date {
	if d.rng.IntN(6) == 0 {
		return fund.Date{}
	}
	return fund.MustDate(time.Date(2020+d.rng.IntN(8), time.Month(1+d.rng.IntN(12)), 1+d.rng.IntN(28), 0, 0, 0, 0, time.UTC).Format("2006-01-02"))
}

func (d wireTestData) item(pos string) fund.PositionItem {
	return fund.PositionItem{
		Kind:              fund.ItemKinds[d.rng.IntN(len(fund.ItemKinds))],
		DocumentID:        d.str(),
		DocumentVersion:   d.rng.IntN(5),
		FundID:            d.str(),
		InvestorID:        d.str(),
		PositionID:        pos,
		AsOf:              d.date(),
		Currency:          d.str(),
		Amount:            d.money(),
		Status:            fund.Status(d.str()),
		Date:              d.date(),
		CallLines:         fund.CallLines{Investment: d.optMoney(), ManagementFee: d.optMoney(), FundExpenses: d.optMoney()},
		DistributionLines: fund.DistributionLines{ReturnOfCapital: d.optMoney(), RealizedGain: d.optMoney(), Income: d.optMoney(), Recallable: d.optMoney(), Withholding: d.optMoney()},
		UnfundedLines:     fund.UnfundedLines{Commitment: d.optMoney()},
	}
}

// items makes up to 12 items of a few positions, in no particular order.
func (d wireTestData) items() []fund.PositionItem {
	positions := []string{"P1", "P2", "P10", "A&B", "Zürich"}
	out := make([]fund.PositionItem, d.rng.IntN(13))
	for i := range out {
		out[i] = d.item(positions[d.rng.IntN(len(positions))])
	}
	return out
}

func (d wireTestData) header() wire.DocumentHeader {
	zone := []*time.Location{time.UTC, time.FixedZone("", -5*3600)}[d.rng.IntN(2)]
	return wire.HeaderOf(fund.DocumentHeader{ID: d.str(), FundID: d.str(), Kind: fund.Kind(d.str()), Title: d.str(), AsOf: d.date(),
		Currency: d.str(), PositionCount: d.rng.IntN(1000), Version: d.rng.IntN(4),
		CreatedAt: time.Unix(1_700_000_000+d.rng.Int64N(1e8), d.rng.Int64N(3)*int64(d.rng.IntN(1e9))).In(zone), CreatedBy: d.str()},
		[]string{"", "Active", "Historical"}[d.rng.IntN(3)])
}

func (d wireTestData) activity() *wire.CapitalActivity {
	return wire.ActivityOf(fund.CapitalActivity{Amount: d.money(), Status: fund.Status(d.str()), Date: d.date(), Description: d.str()}, d.rng.IntN(3))
}

func (d wireTestData) next() string { return []string{"", "eyJxIjoiYSJ9.c2ln", "a<b"}[d.rng.IntN(3)] }

func TestAppendersMatchEncodingJSON(t *testing.T) {
	d := wireTestData{rand.New(rand.NewPCG(3, 4))}
	same := func(what string, got []byte, want any) {
		t.Helper()
		w, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("%s:\nappender      %s\nencoding/json %s", what, got, w)
		}
	}
	for range 2000 {
		items, next := d.items(), d.next()
		same("item page", appendPage(nil, items, appendItem, next), wire.Page[wire.PositionItem]{Items: wire.ItemsOf(items), Next: next})

		headers := make([]wire.DocumentHeader, d.rng.IntN(4))
		for i := range headers {
			headers[i] = d.header()
		}
		same("header page", appendPage(nil, headers, appendHeader, next), wire.Page[wire.DocumentHeader]{Items: append([]wire.DocumentHeader{}, headers...), Next: next})

		o := overview{DocumentID: d.str(), Version: d.rng.IntN(9), Items: items, Next: next}
		if d.rng.IntN(3) > 0 {
			o.Documents = &wire.OverviewDocuments{Latest: d.header(), Historical: append([]wire.DocumentHeader{}, headers...)}
			o.CapitalActivities = &wire.CapitalActivities{Historical: []wire.CapitalActivity{}}
			if d.rng.IntN(3) > 0 {
				o.CapitalActivities.Latest = d.activity()
			}
			for range d.rng.IntN(3) {
				o.CapitalActivities.Historical = append(o.CapitalActivities.Historical, *d.activity())
			}
		}
		groups, last := groupItems(items)
		same("overview", appendOverview(nil, &o), overviewResponse{DocumentID: o.DocumentID, Version: o.Version,
			Documents: o.Documents, CapitalActivities: o.CapitalActivities, Positions: groups, Next: o.Next})
		if got := lastPosition(items); got != last {
			t.Fatalf("lastPosition = %q, want %q", got, last)
		}
	}
}
