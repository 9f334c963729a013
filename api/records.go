package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/positions"
	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// The records of funds and investors (fund/records.go). Who may read and
// write which record is the store's View (store/records.go), decided
// before the body is decoded and before the record is read.

// putFund stores the body as the next version of a fund's record.
func (s *server) putFund(c *gin.Context) {
	in := s.params(c)
	id := in.id("fundId")
	in.jsonBody()
	expect := in.ifMatch()
	if !in.ok() {
		return
	}
	if err := s.docs.As(latest(c)).FundVisible(id); err != nil {
		writeError(c, err)
		return
	}
	putRecord(s, c, &wire.FundRequest{}, "/v1/funds/"+id, func(f fund.FundFields) (int, any, error) {
		rec, err := s.docs.PutFundRecord(c.Request.Context(), id, f, expect, principal(c).Subject, time.Now())
		return rec.Version, wire.FundOf(fund.Fund{ID: id, Record: &rec}), err
	})
}

// putRecord decodes a record's body into req, validates it, puts it and
// answers the version put: 201 for a record's first version, 200 after.
func putRecord[F any](s *server, c *gin.Context, req interface{ Fields() (F, error) }, location string, put func(F) (version int, answer any, err error)) {
	if err := wire.DecodeStrict(http.MaxBytesReader(c.Writer, c.Request.Body, s.maxBody), req); err != nil {
		writeError(c, err)
		return
	}
	fields, err := req.Fields()
	if err != nil {
		writeError(c, err)
		return
	}
	version, answer, err := put(fields)
	if err != nil {
		writeError(c, err)
		return
	}
	status := http.StatusOK
	if version == 1 {
		status = http.StatusCreated
	}
	setETag(c, version)
	c.Header("Location", location)
	c.JSON(status, answer)
}

// getFund answers a fund: its record, or its ID alone while it has none;
// with knownAt, its record's version in force then (ENOTFOUND for a fund
// that had neither a record nor a document then).
func (s *server) getFund(c *gin.Context) {
	in := s.params(c)
	id := in.id("fundId")
	b := in.instantBasis()
	if !in.ok() {
		return
	}
	view, settle := s.view(c, b)
	f, err := view.Fund(c.Request.Context(), id)
	settle()
	if err != nil {
		writeChargeError(c, err)
		return
	}
	if f.Record != nil && !b.past {
		setETag(c, f.Record.Version)
	}
	w := wire.FundOf(f)
	w.Basis = s.basisOf(b)
	c.JSON(http.StatusOK, w)
}

// listFunds lists the funds the token may read; with knownAt, those that
// existed then, with their records then.
func (s *server) listFunds(c *gin.Context) {
	in := s.params(c)
	pg := in.page("funds")
	b := in.pin(&pg, in.instantBasis())
	if !in.ok() {
		return
	}
	view, settle := s.view(c, b)
	fs, next, err := view.FundsPage(c.Request.Context(), pg.limit, pg.cursor.Key)
	settle()
	if err != nil {
		writeChargeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.Fund]{Items: wire.FundsOf(fs), Next: pg.next(next), Basis: s.basisOf(b)})
}

// putInvestor stores the body as the next version of an investor's record.
func (s *server) putInvestor(c *gin.Context) {
	in := s.params(c)
	id := in.id("investorId")
	in.jsonBody()
	expect := in.ifMatch()
	if !in.ok() {
		return
	}
	ctx := c.Request.Context()
	if err := s.docs.As(latest(c)).MayWriteInvestor(ctx, id); err != nil {
		writeError(c, err)
		return
	}
	putRecord(s, c, &wire.InvestorRequest{}, "/v1/investors/"+id, func(f fund.InvestorFields) (int, any, error) {
		rec, err := s.docs.PutInvestorRecord(ctx, id, f, expect, principal(c).Subject, time.Now())
		return rec.Version, wire.InvestorOf(fund.Investor{ID: id, Record: &rec}), err
	})
}

// getInvestor answers an investor: its record, or its ID alone while it
// has none; with knownAt, its record's version in force then (ENOTFOUND
// for an investor that had neither a record nor a position then).
func (s *server) getInvestor(c *gin.Context) {
	in := s.params(c)
	id := in.id("investorId")
	b := in.instantBasis()
	if !in.ok() {
		return
	}
	view, settle := s.view(c, b)
	i, err := view.Investor(c.Request.Context(), id)
	settle()
	if err != nil {
		writeChargeError(c, err)
		return
	}
	if i.Record != nil && !b.past {
		setETag(c, i.Record.Version)
	}
	w := wire.InvestorOf(i)
	w.Basis = s.basisOf(b)
	c.JSON(http.StatusOK, w)
}

// listInvestors lists every investor (an administrator of every fund) or
// those of one fund the token covers (fundId); with knownAt, those that
// existed then (of a fund: held a position of it then), with their records
// then.
func (s *server) listInvestors(c *gin.Context) {
	in := s.params(c)
	fundID := in.optionalID("fundId")
	b := in.instantBasis()
	if !in.ok() {
		return
	}
	view := s.docs.As(latest(c))
	if fundID != "" {
		// Another fund is refused before its cursor is read, as an unknown one.
		if err := view.FundVisible(fundID); err != nil {
			writeError(c, err)
			return
		}
	}
	pg := in.page("investors:" + fundID)
	b = in.pin(&pg, b)
	if !in.ok() {
		return
	}
	view, settle := s.view(c, b)
	is, next, err := view.InvestorsPage(c.Request.Context(), fundID, pg.limit, pg.cursor.Key)
	settle()
	if err != nil {
		writeChargeError(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.Page[wire.Investor]{Items: wire.InvestorsOf(is), Next: pg.next(next), Basis: s.basisOf(b)})
}

// instantBasis is basis for a route that takes knownAt but no asOf: its
// answers are not taken at a date, so the basis's asOf is null.
func (p *params) instantBasis() basis {
	b := p.basis()
	b.asOf = fund.Date{}
	return b
}

// basisOf is the basis an answer echoes.
func (s *server) basisOf(b basis) *wire.Basis {
	w := s.wireBasis(b)
	return &w
}

// view is the store as the request's principal sees it on basis b: as
// known at b.knownAt when b is past, the requests that grow with the table
// paid for through the caller's bucket; settle gives back those paid for
// and not made, once the read is over.
func (s *server) view(c *gin.Context, b basis) (v store.View, settle func()) {
	v = s.docs.As(read(c, b))
	if !b.past {
		return v, func() {}
	}
	reads := s.knownAtReads(c)
	return v.Paying(reads), func() { s.settleReads(c, reads) }
}

// knownAtReads is the account of a read as known at an instant with the
// caller's bucket: the request's token (taken when it was verified) pays
// for its first DynamoDB request; each further group of requests is paid
// for before it is made, up to the most it can make (a fund's months of
// events, a batch of heads, the searches of documents restated since), and
// refused with 429 when the bucket is empty (rateLimitedError), having made
// none of them. settleReads gives back what was paid for and not made.
func (s *server) knownAtReads(c *gin.Context) *store.Reads {
	r := &store.Reads{Paid: 1}
	if s.limiter != nil {
		key := principal(c).scope()
		r.Charge = func(n int) error {
			if wait := s.limiter.take(key, n); wait > 0 {
				return &rateLimitedError{wait: wait}
			}
			return nil
		}
	}
	return r
}

// settleReads gives back the requests r paid for and did not make, but
// the request's own token.
func (s *server) settleReads(c *gin.Context, r *store.Reads) {
	if s.limiter != nil {
		s.limiter.refund(principal(c).scope(), min(r.Unused(), r.Paid-1))
	}
}

// registeredNames reads the names of registered positions' funds and
// investors: with b past, the names of the records in force at knownAt.
func (s *server) registeredNames(c *gin.Context, rs []positions.Registered, b basis) (wire.Names, error) {
	funds, investors := make([]string, 0, len(rs)), make([]string, 0, len(rs))
	for _, r := range rs {
		funds, investors = append(funds, r.FundID), append(investors, r.InvestorID)
	}
	return s.namesAt(c, funds, investors, b)
}

// namesAt reads the names the records of funds and investors give them on
// basis b: with b past, the records in force at knownAt, the reads charged.
func (s *server) namesAt(c *gin.Context, funds, investors []string, b basis) (wire.Names, error) {
	view, settle := s.view(c, b)
	f, i, err := view.RecordNames(c.Request.Context(), funds, investors)
	settle()
	return wire.Names{Funds: f, Investors: i}, err
}

// registeredAt keeps the positions of rs registered at or before b's
// knownAt when b is past (store/knownat_registry.go).
func registeredAt(rs []positions.Registered, b basis) []positions.Registered {
	if !b.past {
		return rs
	}
	return slices.DeleteFunc(rs, func(r positions.Registered) bool { return r.RegisteredAt.After(b.knownAt) })
}

// demoFundRecord and demoInvestorRecord are the answers of a PUT of the
// demo's first records (fund.DemoRecords), at version v: the OpenAPI
// document's examples.
func demoFundRecord(v int) wire.Fund {
	funds, _ := fund.DemoRecords()
	f := funds[0]
	return wire.FundOf(fund.Fund{ID: f.ID, Record: &fund.FundRecord{FundFields: f.FundFields, Version: v, UpdatedAt: demoRecordTime, UpdatedBy: "admin-of-fund-a"}})
}

func demoInvestorRecord(v int) wire.Investor {
	_, investors := fund.DemoRecords()
	i := investors[0]
	return wire.InvestorOf(fund.Investor{ID: i.ID, Record: &fund.InvestorRecord{InvestorFields: i.InvestorFields, Version: v, UpdatedAt: demoRecordTime, UpdatedBy: "admin-of-fund-a"}})
}

var demoRecordTime = time.Date(2026, 2, 2, 9, 30, 0, 0, time.UTC)
