package multitest

import "github.com/fundsvc/fundsvc/fund"

// The API's JSON, as a client sees it: only the fields the tests check.
// api/openapi.json is the whole contract.

// Document is the body of PUT /v1/documents/{id} and, with its version, of
// GET /v1/documents/{id}/versions/{n}.
type Document struct {
	FundID    string     `json:"fundId"`
	Kind      string     `json:"kind"`
	Title     string     `json:"title"`
	AsOf      string     `json:"asOf"`
	Currency  string     `json:"currency"`
	Positions []Position `json:"positions"`
	Version   int        `json:"version,omitempty"` // in answers only
}

// Position is one position of a document.
type Position struct {
	PositionID   string        `json:"positionId"`
	InvestorID   string        `json:"investorId"`
	CapitalCall  *CapitalCall  `json:"capitalCall,omitempty"`
	Distribution *Distribution `json:"distribution,omitempty"`
}

// CapitalCall is a position's capital call.
type CapitalCall struct {
	Amount  fund.Money `json:"amount"`
	Status  string     `json:"status,omitempty"`
	DueDate string     `json:"dueDate,omitempty"`
}

// Distribution is a position's distribution.
type Distribution struct {
	Amount fund.Money `json:"amount"`
	Status string     `json:"status,omitempty"`
	Date   string     `json:"date,omitempty"`
}

// Page is the envelope of every paginated list.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// Registered is a position in a fund's or an investor's listing.
type Registered struct {
	PositionID string `json:"positionId"`
	FundID     string `json:"fundId"`
	InvestorID string `json:"investorId"`
	Currency   string `json:"currency"`
}

// Item is one position item, as the position routes and the overview
// return it.
type Item struct {
	Type            string     `json:"type"`
	DocumentID      string     `json:"documentId"`
	DocumentVersion int        `json:"documentVersion"`
	FundID          string     `json:"fundId"`
	InvestorID      string     `json:"investorId"`
	PositionID      string     `json:"positionId"`
	Amount          fund.Money `json:"amount"`
}

// Overview is the first page of GET /v1/documents/{id}.
type Overview struct {
	DocumentID string `json:"documentId"`
	Version    int    `json:"version"`
	Positions  map[string]struct {
		InvestorID    string `json:"investorId"`
		CapitalCalls  []Item `json:"capitalCalls"`
		Distributions []Item `json:"distributions"`
	} `json:"positions"`
	Next string `json:"next"`
}

// Source names a document version a summary counted.
type Source struct {
	DocumentID string `json:"documentId"`
	Version    int    `json:"version"`
}

// ByStatus is an amount split by status; the tests read its total.
type ByStatus struct {
	Total fund.Money `json:"total"`
}

// Summary is GET /v1/positions/{id}/summary, and one position of an
// investor summary.
type Summary struct {
	PositionID  string   `json:"positionId"`
	FundID      string   `json:"fundId"`
	InvestorID  string   `json:"investorId"`
	Currency    string   `json:"currency"`
	PaidIn      ByStatus `json:"paidIn"`
	Distributed struct {
		Gross ByStatus `json:"gross"`
	} `json:"distributed"`
	Documents []Source `json:"documents"`
}

// InvestorSummary is GET /v1/investors/{id}/summary.
type InvestorSummary struct {
	InvestorID string    `json:"investorId"`
	Positions  []Summary `json:"positions"`
	Totals     []struct {
		Currency  string   `json:"currency"`
		PaidIn    ByStatus `json:"paidIn"`
		Positions int      `json:"positions"`
	} `json:"totals"`
}

// Cashflows is GET /v1/positions/{id}/cashflows.
type Cashflows struct {
	PositionID string `json:"positionId"`
	FundID     string `json:"fundId"`
	InvestorID string `json:"investorId"`
	Cashflows  []struct {
		Type       string     `json:"type"` // contribution or distribution
		DocumentID string     `json:"documentId"`
		Version    int        `json:"version"`
		Amount     fund.Money `json:"amount"`
	} `json:"cashflows"`
}
