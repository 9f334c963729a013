package store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestAnotherFundsDocumentReadsAsAnUnknownOne reads a document of fund F1
// through every document read of store.View, of the latest versions and
// as known at an instant, as an admin of F2 and as an investor: each
// answer is the not-found of an unknown document, with the same message
// and the same DynamoDB operations; an admin of F1 reads it.
func TestAnotherFundsDocumentReadsAsAnUnknownOne(t *testing.T) {
	e := fundtest.New(t)
	if _, err := e.Store.Restate(ctx, doc("D1", "F1", 100, "POS_1", "POS_2"), nil); err != nil {
		t.Fatal(err)
	}
	now := e.Store.Now()
	reads := map[string]func(r store.View, doc string) error{
		"overview": func(r store.View, doc string) error { _, err := r.Overview(ctx, doc); return err },
		"latest":   func(r store.View, doc string) error { _, err := r.LatestDocument(ctx, doc); return err },
		"versions": func(r store.View, doc string) error {
			_, _, _, err := r.Versions(ctx, doc, 0, fund.Date{}, fund.Date{}, 10, nil)
			return err
		},
		"version 1": func(r store.View, doc string) error { _, err := r.Version(ctx, doc, 1); return err },
		"version 9": func(r store.View, doc string) error { _, err := r.Version(ctx, doc, 9); return err },
		"position": func(r store.View, doc string) error {
			_, _, err := r.DocumentPosition(ctx, doc, "POS_1", "")
			return err
		},
		"item": func(r store.View, doc string) error {
			_, _, err := r.DocumentPosition(ctx, doc, "POS_1", fund.CapitalCall)
			return err
		},
		"capital":  func(r store.View, doc string) error { _, _, err := r.Capital(ctx, doc, 10, nil); return err },
		"document": func(r store.View, doc string) error { _, err := r.Document(ctx, doc); return err },
		"known":    func(r store.View, doc string) error { _, err := r.Known(ctx, doc); return err },
	}
	for name, read := range reads {
		for _, past := range []bool{false, true} {
			as := func(v fund.Viewer) store.View { return e.Store.As(fund.Latest(v)) }
			if past {
				name += ", known at an instant"
				as = func(v fund.Viewer) store.View { return e.Store.As(fund.KnownAt(v, now)) }
			}
			t.Run(name, func(t *testing.T) {
				err := read(as(fund.Viewer{Funds: []string{"F1"}}), "D1")
				if strings.HasPrefix(name, "version 9") {
					if fund.ErrorCode(err) != fund.ENOTFOUND || err.Error() != "not_found: document D1 has no version 9" {
						t.Errorf("the owner's missing version: %v, want its specific not-found", err)
					}
				} else if err != nil {
					t.Errorf("the owner's read: %v", err)
				}
				for _, v := range []fund.Viewer{{Funds: []string{"F2"}}, {Investor: "INV_1"}} {
					r := as(v)
					e.Counter.Reset()
					got := read(r, "D1")
					gotOps := e.Counter.Ops()
					e.Counter.Reset()
					unknown := read(r, "NOSUCH")
					unknownOps := e.Counter.Ops()
					if fund.ErrorCode(got) != fund.ENOTFOUND || got.Error() != "not_found: document D1 not found" {
						t.Errorf("as %+v: %v, want the not-found of an unknown document", v, got)
					}
					if unknown == nil || unknown.Error() != "not_found: document NOSUCH not found" {
						t.Errorf("as %+v, an unknown document: %v", v, unknown)
					}
					if !reflect.DeepEqual(gotOps, unknownOps) {
						t.Errorf("as %+v: another fund's document costs %v, an unknown one %v", v, gotOps, unknownOps)
					}
				}
			})
		}
	}
	t.Run("fund documents", func(t *testing.T) {
		owner := e.Store.As(fund.Latest(fund.Viewer{Funds: []string{"F1"}}))
		if docs, _, err := owner.FundDocuments(ctx, "F1", fund.Date{}, fund.Date{}, "", 10, nil); err != nil || len(docs) != 1 {
			t.Errorf("the owner's list: %v, %v", docs, err)
		}
		e.Counter.Reset()
		_, _, err := e.Store.As(fund.Latest(fund.Viewer{Funds: []string{"F2"}})).FundDocuments(ctx, "F1", fund.Date{}, fund.Date{}, "", 10, nil)
		if err == nil || err.Error() != "not_found: fund F1 not found" || len(e.Counter.Ops()) != 0 {
			t.Errorf("another fund's list: %v after %v, want not found before any read", err, e.Counter.Ops())
		}
	})
}

func TestViewerRules(t *testing.T) {
	cases := []struct {
		name             string
		v                fund.Viewer
		fund, investor   string
		mayFund, mayRead bool
	}{
		{"an admin of every fund reads any fund", fund.Viewer{AllFunds: true}, "F9", "I9", true, true},
		{"an admin of F1 reads F1", fund.Viewer{Funds: []string{"F1"}}, "F1", "I9", true, true},
		{"an admin of F1 does not read F2", fund.Viewer{Funds: []string{"F1"}}, "F2", "I9", false, false},
		{"an investor reads its own positions and no fund", fund.Viewer{Investor: "I1"}, "F1", "I1", false, true},
		{"an investor does not read another's positions", fund.Viewer{Investor: "I1"}, "F1", "I2", false, false},
		{"an investor is never an admin of every fund", fund.Viewer{AllFunds: true, Investor: "I1"}, "F1", "I2", false, false},
		{"nobody reads nothing", fund.Viewer{}, "F1", "I1", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.v.Administers(c.fund); got != c.mayFund {
				t.Errorf("Administers(%s) = %v", c.fund, got)
			}
			if got := c.v.MayReadPosition(c.fund, c.investor); got != c.mayRead {
				t.Errorf("MayReadPosition(%s, %s) = %v", c.fund, c.investor, got)
			}
		})
	}
}
