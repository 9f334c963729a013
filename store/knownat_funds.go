package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// Funds and investors as known at an instant (docs/knownat.md). Who may
// read what is decided as for the live read, before any read of the past;
// then a fund exists at at if its record had a version by then or a
// document of it was committed by then, and an investor if its record had
// a version by then or a position of it was registered by then.

// fundHadDocumentAt reports whether a document of fundID was committed at
// or before at: the feed's start (one GetItem; an instant before it is
// before any commit), then the fund's event feed (GSI2, by UTC month),
// read from at's month back to the start's, one Query of one event per
// month, those months paid for before the first is read.
func (s *Store) fundHadDocumentAt(ctx context.Context, fundID string, at time.Time, reads *Reads) (bool, error) {
	if err := reads.spend(1); err != nil {
		return false, err
	}
	start, ok, err := s.eventsStart(ctx)
	if err != nil || !ok || start.After(at) {
		return false, err
	}
	if err := reads.reserve(monthsFrom(start, at)); err != nil {
		return false, err
	}
	for m := utcMonth(at); !m.Before(utcMonth(start)); m = m.AddDate(0, -1, 0) {
		var rows []Item
		if err := reads.spend(1); err != nil {
			return false, err
		}
		err := s.table.Get(AttrGSI2PK, FundEventsGSI2PK(fundID, m)).Index(IndexGSI2).
			Range(AttrGSI2SK, dynamo.Less, EventsAfterSK(at)).Project(AttrPK).SearchLimit(1).RequestLimit(1).All(ctx, &rows)
		if err != nil {
			return false, fmt.Errorf("events of fund %s: %w", fundID, err)
		}
		if len(rows) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// monthsFrom is the number of UTC months from a's to b's, both counted (0
// when b is before a).
func monthsFrom(a, b time.Time) int {
	ya, ma, _ := a.UTC().Date()
	yb, mb, _ := b.UTC().Date()
	return max(0, (yb-ya)*12+int(mb-ma)+1)
}

// fundsAt returns the funds of ids that existed at the view's instant,
// with their records then, in the order of ids.
func (r View) fundsAt(ctx context.Context, ids []string) ([]fund.Fund, error) {
	ids = uniq(ids)
	pks := make([]string, 0, len(ids))
	for _, id := range ids {
		pks = append(pks, FundPK(id))
	}
	recs, err := r.records(ctx, pks)
	if err != nil {
		return nil, fmt.Errorf("funds: %w", err)
	}
	out := []fund.Fund{}
	for _, id := range ids {
		f := fund.Fund{ID: id}
		if row := recs[FundPK(id)]; row != nil {
			if f.Record, err = fundRecordOf(row); err != nil {
				return nil, fmt.Errorf("record of fund %s: %w", id, err)
			}
		} else {
			ok, err := r.s.fundHadDocumentAt(ctx, id, r.rd.KnownAt, r.reads)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// investorsAt returns the investors of ids that existed at the view's
// instant, with their records then, in the order of ids. registered, when
// not nil, says which held a position then (read once for a fund's
// investors); otherwise each without a record then has its registry rows
// read.
func (r View) investorsAt(ctx context.Context, ids []string, registered map[string]bool) ([]fund.Investor, error) {
	ids = uniq(ids)
	pks := make([]string, 0, len(ids))
	for _, id := range ids {
		pks = append(pks, InvestorPK(id))
	}
	recs, err := r.records(ctx, pks)
	if err != nil {
		return nil, fmt.Errorf("investors: %w", err)
	}
	out := []fund.Investor{}
	for _, id := range ids {
		i := fund.Investor{ID: id}
		if row := recs[InvestorPK(id)]; row != nil {
			if i.Record, err = investorRecordOf(row); err != nil {
				return nil, fmt.Errorf("record of investor %s: %w", id, err)
			}
		} else if registered != nil {
			if !registered[id] {
				continue
			}
		} else {
			held, err := r.s.fundsHeldAt(ctx, id, r.rd.KnownAt, r.reads)
			if err != nil {
				return nil, err
			}
			if len(held) == 0 {
				continue
			}
		}
		out = append(out, i)
	}
	return out, nil
}

// MaxKnownAtFundDocuments is the most documents a fund's listing as known
// at an instant reads: it reads every document of the fund (the listing's
// order is that of the documents' dates then, which the index does not
// hold), so beyond it the listing is refused (EINVALID on knownAt).
const MaxKnownAtFundDocuments = 1000

// fundDocumentsPageAt lists a fund's documents as known at the view's
// instant, at, with asOf between from and to (either may be zero),
// optionally of one kind, by asOf then document ID, as FundDocuments
// lists the latest ones: each
// document first committed by at, at its version known then, but a
// document voided then, which the listing leaves out. It reads the fund's
// documents (one Query of its index per 1 MB), the documents voided after
// at (the fund's event feed after at: one Query per UTC month and 1 MB),
// their heads (one BatchGet per 100), and for each document restated or
// voided after at, VersionAt's search and its version's record (at most
// 2 + ⌈log₂ n⌉ GetItems for n versions). ENOTFOUND for a fund the viewer
// does not cover (before any read), and for a fund that had no document at
// at.
func (r View) fundDocumentsPageAt(ctx context.Context, fundID string, from, to fund.Date, kind fund.Kind, limit int, start PageKey) ([]fund.DocumentHeader, PageKey, error) {
	at, reads := r.rd.KnownAt, r.reads
	if err := r.FundVisible(fundID); err != nil {
		return nil, nil, err
	}
	if before, err := r.s.BeforeFeed(ctx, at, reads); err != nil || before {
		// Nothing was committed then: an unknown fund, as below.
		if err == nil && start == nil {
			err = fundNotFound(fundID)
		}
		return []fund.DocumentHeader{}, nil, err
	}
	var after string
	if len(start) > 0 {
		var k map[string]string
		if err := json.Unmarshal(start, &k); err != nil || k[AttrSK] == "" {
			return nil, nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
		}
		after = k[AttrSK]
	}
	all, err := r.s.fundDocumentsAt(ctx, fundID, at, reads)
	if err != nil {
		return nil, nil, err
	}
	lo, hi := FundDocumentRange(from, to)
	out := []fund.DocumentHeader{}
	for _, h := range all {
		sk := FundDocumentSK(h.AsOf, h.ID)
		if sk <= after || sk < lo || sk > hi || (kind != "" && h.Kind != kind) {
			continue
		}
		if len(out) == limit {
			b, _ := json.Marshal(map[string]string{AttrPK: FundPK(fundID), AttrSK: FundDocumentSK(out[limit-1].AsOf, out[limit-1].ID)})
			return out, b, nil
		}
		out = append(out, h)
	}
	if len(out) == 0 && start == nil {
		// As FundDocuments: an empty first page of a fund that had no
		// document then is an unknown fund.
		ok, err := r.s.fundHadDocumentAt(ctx, fundID, at, reads)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, fundNotFound(fundID)
		}
	}
	return out, nil, nil
}

// fundDocumentsAt returns every document of fundID known at at and not
// voided then, at its version then, by asOf then ID (see fundDocumentsPageAt).
func (s *Store) fundDocumentsAt(ctx context.Context, fundID string, at time.Time, reads *Reads) ([]fund.DocumentHeader, error) {
	lo, hi := FundDocumentRange(fund.Date{}, fund.Date{})
	index, err := s.queryCounted(ctx, s.table.Get(AttrPK, FundPK(fundID)).Range(AttrSK, dynamo.Between, lo, hi).Consistent(true), reads)
	if err != nil {
		return nil, fmt.Errorf("documents of fund %s: %w", fundID, err)
	}
	listed := map[string]*Item{}
	var ids []string
	for i := range index {
		listed[index[i].DocumentID] = &index[i]
		ids = append(ids, index[i].DocumentID)
	}
	// A document voided after at left the index, but was known at at.
	now := s.Now()
	if err := reads.reserve(monthsFrom(at, now)); err != nil {
		return nil, err
	}
	for m := utcMonth(at); !m.After(now); m = m.AddDate(0, 1, 0) {
		q := s.table.Get(AttrGSI2PK, FundEventsGSI2PK(fundID, m)).Index(IndexGSI2).
			Range(AttrGSI2SK, dynamo.GreaterOrEqual, EventsAfterSK(at)).
			Filter("$ = ?", "EventType", string(fund.EventDocumentVoided)).Project(AttrPK, AttrSK, AttrGSI2PK, AttrGSI2SK, "DocumentID")
		voids, err := s.queryCounted(ctx, q, reads)
		if err != nil {
			return nil, fmt.Errorf("events of fund %s: %w", fundID, err)
		}
		for i := range voids {
			ids = append(ids, voids[i].DocumentID)
		}
	}
	ids = uniq(ids)
	if len(ids) > MaxKnownAtFundDocuments {
		return nil, fund.Invalid("knownAt", "fund %s has more than %d documents, the most a listing as known at an instant reads", fundID, MaxKnownAtFundDocuments)
	}
	keys := make([]dynamo.Keyed, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, dynamo.Keys{DocPK(id), HeadSK})
	}
	var heads []Item
	if len(keys) > 0 {
		if err := reads.spend((len(keys) + 99) / 100); err != nil {
			return nil, err
		}
		if err := s.table.Batch(AttrPK, AttrSK).Get(keys...).Consistent(true).All(ctx, &heads); err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return nil, fmt.Errorf("heads of fund %s's documents: %w", fundID, err)
		}
	}
	// The documents restated or voided after at are searched, their
	// searches paid for before the first.
	searches := 0
	for i := range heads {
		if heads[i].CommittedAt.After(at) {
			searches += 2 + ceilLog2(heads[i].Version)
		}
	}
	if err := reads.reserve(searches); err != nil {
		return nil, err
	}
	out := []fund.DocumentHeader{}
	for i := range heads {
		h := &heads[i]
		if !h.CommittedAt.After(at) {
			if ix := listed[h.DocumentID]; ix != nil && !h.Voided {
				out = append(out, ix.Header())
			}
			continue
		}
		if err := reads.spend(2 + ceilLog2(h.Version)); err != nil {
			return nil, err
		}
		ref, _, err := s.recordAtFrom(ctx, h, at)
		if fund.ErrorCode(err) == fund.ENOTFOUND {
			continue // first committed after at
		}
		if err != nil {
			return nil, err
		}
		if ref.Voided {
			continue
		}
		rec, err := s.versionRecord(ctx, h.DocumentID, ref.Version)
		if err != nil {
			return nil, fmt.Errorf("document %s version %d: %w", h.DocumentID, ref.Version, err)
		}
		if rec == nil {
			return nil, fmt.Errorf("document %s version %d: no history record", h.DocumentID, ref.Version)
		}
		out = append(out, rec.Header())
	}
	slices.SortFunc(out, func(a, b fund.DocumentHeader) int {
		return cmp.Or(cmp.Compare(a.AsOf.String(), b.AsOf.String()), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// ceilLog2 is ⌈log₂ n⌉ for n ≥ 1, and 0 below.
func ceilLog2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}
