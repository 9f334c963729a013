package fund

import (
	"slices"
	"time"
)

// Viewer is who reads: an administrator of some funds (or of every fund),
// or an investor. It is the one access rule of every read: data a viewer
// may not read is answered exactly as data that does not exist, with the
// same error and at the same cost.
type Viewer struct {
	AllFunds bool     // an administrator of every fund
	Funds    []string // the funds an administrator covers
	Investor string   // an investor, who sees its own positions and no document
}

// Administers reports whether v administers fundID, and so may write and
// read its documents, records and positions.
func (v Viewer) Administers(fundID string) bool {
	return v.Investor == "" && (v.AllFunds || slices.Contains(v.Funds, fundID))
}

// MayReadPosition reports whether v may see a position of fundID held by
// investorID: an investor its own, an administrator those of its funds.
func (v Viewer) MayReadPosition(fundID, investorID string) bool {
	if v.Investor != "" {
		return investorID == v.Investor
	}
	return v.Administers(fundID)
}

// SeesSomeFunds reports whether v, an administrator of some funds only,
// may see only some of an investor's positions.
func (v Viewer) SeesSomeFunds() bool { return v.Investor == "" && !v.AllFunds }

// Read is how one read sees the data: who reads, and whether from the
// latest versions or as known at an instant. Every read of documents and
// positions takes one, so a read gains a dimension in one place.
type Read struct {
	Viewer
	// KnownAt is the instant the read is as known at, when Past;
	// otherwise the read is of the latest versions.
	KnownAt time.Time
	Past    bool
}

// Latest is the read of the latest versions by v.
func Latest(v Viewer) Read { return Read{Viewer: v} }

// KnownAt is the read by v as known at at (any instant, the zero one too:
// before anything).
func KnownAt(v Viewer, at time.Time) Read { return Read{Viewer: v, KnownAt: at, Past: true} }

// Operator is the read of the latest versions of every fund, by the
// service itself (the export, the command line, the tests).
var Operator = Latest(Viewer{AllFunds: true})
