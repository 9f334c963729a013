package wire

import (
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// Basis is what a read answered on: the date its figures are taken at and
// the instant its documents are known at (docs/knownat.md). Every read
// route's answer carries it, so a client can ask the same question again
// later, as known at the same instant, and get the same answer.
type Basis struct {
	AsOf    *fund.Date `json:"asOf" doc:"The date the figures are taken at: each document counts at its latest version dated on or before it. null: every document counts whatever its date (no asOf asked, and no knownAt)."`
	KnownAt time.Time  `json:"knownAt" doc:"The instant the documents are known at (UTC, RFC 3339): each counts at its latest version committed at or before it, and a document first committed later does not exist. The request's knownAt; without one, the instant the read began, by the server's clock corrected to DynamoDB's: sending it back as knownAt asks the same question again."`
	Settled bool       `json:"settled" doc:"Whether knownAt is older than the settle margin (FUNDSVC_FEED_SETTLE, 5 minutes by default), so that every version committed at or before it is known and the answer can no longer change. A read without knownAt is never settled."`
}
