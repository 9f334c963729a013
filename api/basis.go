package api

import (
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// basis is what a read is taken on (wire.Basis, docs/knownat.md): the date
// figures are taken at, and the instant the documents are known at.
type basis struct {
	// asOf is the date; zero: every document whatever its date.
	asOf fund.Date
	// knownAt is the request's knownAt (or the one its cursor pins), or,
	// when past is false, the instant the read began.
	knownAt time.Time
	// past says the read is as known at knownAt: each document at its
	// version committed then. Otherwise the read is of the latest versions,
	// and knownAt only names when it began.
	past bool
	// asked says the request gave asOf (a later page: its first page did).
	// An answer states its asOf only then (statedAsOf), so that a read with
	// knownAt, whose asOf defaults to knownAt's date, answers the same keys
	// as the live read it replays; basis.asOf states the date applied.
	asked bool
}

// statedAsOf is the asOf an answer states: the date asked for, zero when
// none was.
func (b basis) statedAsOf() fund.Date {
	if b.asked {
		return b.asOf
	}
	return fund.Date{}
}

// basis reads asOf and knownAt. With knownAt alone, asOf is knownAt's date
// (UTC). A cursor pins the basis of its first page (page.pin), so the
// pages after it are read as known at the same instant.
func (p *params) basis() basis {
	b := basis{asOf: p.date("asOf")}
	if p.err != nil {
		return b
	}
	b.asked = !b.asOf.IsZero()
	at, given := p.instant("knownAt")
	if p.err != nil {
		return b
	}
	if given {
		b.knownAt, b.past = at, true
		if b.asOf.IsZero() {
			b.asOf = fund.DateOf(at)
		}
	} else {
		b.knownAt = p.s.docs.ReadInstant().UTC()
	}
	return b
}

// valuationBasis is basis for a route that values on a date: asOf is
// knownAt's date when absent, today's for a read of the latest versions.
func (p *params) valuationBasis() basis {
	b := p.basis()
	if p.err == nil && b.asOf.IsZero() {
		b.asOf = fund.DateOf(b.knownAt)
	}
	return b
}

// instant reads the query parameter name, an RFC 3339 instant not later
// than the server's clock.
func (p *params) instant(name string) (time.Time, bool) {
	v := p.c.Query(name)
	if p.err != nil || v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		p.fail(fund.Invalid(name, "must be an RFC 3339 instant with its offset, such as 2026-10-01T00:00:00Z, got %q", v))
		return time.Time{}, false
	}
	if now := p.s.docs.ReadInstant(); t.After(now) {
		p.fail(fund.Invalid(name, "is in the future (the server's clock reads %s): what will be known then is not known yet", now.UTC().Format(time.RFC3339Nano)))
		return time.Time{}, false
	}
	return t.UTC(), true
}

// wire is the basis as answers echo it: settled once knownAt is older than
// the settle margin.
func (s *server) wireBasis(b basis) wire.Basis {
	w := wire.Basis{KnownAt: b.knownAt, Settled: b.past && !b.knownAt.After(s.docs.SettledUntil())}
	if !b.asOf.IsZero() {
		d := b.asOf
		w.AsOf = &d
	}
	return w
}

// pin reads a paginated route's basis with b as read from the request:
// the first page's is b, and its cursor pins it; a later page's is the one
// its cursor pinned, as known at the first page's instant (a knownAt or
// asOf given with the cursor must be the pinned one's).
func (p *params) pin(pg *page, b basis) basis {
	if p.err != nil {
		return b
	}
	if c := pg.cursor.Basis; c != nil {
		if b.past && !b.knownAt.Equal(c.KnownAt) {
			p.fail(fund.Invalid("knownAt", "differs from the knownAt the cursor was issued with (%s): send the cursor alone", c.KnownAt.Format(time.RFC3339Nano)))
			return b
		}
		if p.c.Query("asOf") != "" && b.asOf != c.AsOf {
			p.fail(fund.Invalid("asOf", "differs from the asOf the cursor was issued with: send the cursor alone"))
			return b
		}
		b = basis{asOf: c.AsOf, knownAt: c.KnownAt, past: true, asked: c.Asked}
	}
	pg.basis = &pinnedBasis{AsOf: b.asOf, KnownAt: b.knownAt, Asked: b.asked}
	return b
}
