package fund

import (
	"fmt"
	"regexp"
	"sort"
	"time"
)

// Kind is the kind of fund document.
type Kind string

// The document kinds a fund administrator sends.
const (
	KindCapitalCallNotice       Kind = "capital_call_notice"
	KindDistributionNotice      Kind = "distribution_notice"
	KindCapitalAccountStatement Kind = "capital_account_statement"
)

// Kinds lists every document kind.
var Kinds = []Kind{KindCapitalCallNotice, KindDistributionNotice, KindCapitalAccountStatement}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Status is the state of a capital activity, call or distribution: pending
// until it is paid, completed once it is. A call's amount is capital called
// from the moment the notice is sent; it is paid in (contributed) only once
// completed.
type Status string

// Statuses, in the one casing of every enumeration (lower snake_case).
// Unfunded commitments are always active.
const (
	StatusPending   Status = "pending"
	StatusCompleted Status = "completed"
	StatusActive    Status = "active"
)

// DefaultMaxPositions bounds the positions of one document unless the
// server sets another bound. A document's items (a position's call,
// distribution, unfunded commitment and capital account each count one) are
// bounded at ItemsPerPosition times that bound: what a write costs grows
// with its items.
const DefaultMaxPositions = 5000

// ItemsPerPosition is how many items a document holds per position of its
// positions bound, on average: a notice's call or distribution with its
// unfunded commitment, or a statement's capital account with it.
const ItemsPerPosition = 2

var currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)

// DefaultCurrency is assumed when a document names none.
const DefaultCurrency = "USD"

// DocumentFields are what an administrator states of a document as a
// whole. They are declared once, here: the request, every answer that shows
// a version, the stored records and the export's columns take them whole.
type DocumentFields struct {
	FundID   string `json:"fundId" doc:"The fund the document belongs to; the admin token must cover it (403 otherwise). A document never changes fund: restating it under another fund is 409."`
	Kind     Kind   `json:"kind" doc:"What the document is: capital_call_notice, distribution_notice or capital_account_statement."`
	Title    string `json:"title" maxLength:"200" doc:"Required, not empty."`
	AsOf     Date   `json:"asOf" doc:"The date the document reports as of."`
	Currency string `json:"currency,omitempty" doc:"The currency of every amount in the document. Optional: 'USD' when absent or empty."`
}

// Document is one version of a fund document: document-level data and the
// position-level items it reports.
type Document struct {
	ID string
	DocumentFields
	CapitalActivity *CapitalActivity
	Positions       []Position // sorted by ID

	// Voided marks the version that voided the document (Void): it
	// reports no position and no capital activity, and no version follows
	// it. Figures, listings and the export's current datasets leave a
	// voided document out; its earlier versions stay readable.
	Voided bool `json:",omitempty"` // left out when false, so earlier content hashes stay the same

	// Server-owned: never taken from a request.
	Version   int
	CommitID  string
	CreatedAt time.Time
	CreatedBy string // the subject of the token that wrote this version
	// RequestID names the idempotent request that wrote this version, if
	// any: repeating that request returns this version instead of adding one.
	RequestID string
	// RequestOwner is the idempotency record's owner token of that request:
	// the commit holds only while the request still owns its key, so a
	// request that stalled past its lease, and whose repeat took the key
	// over, cannot write the same change a second time.
	RequestOwner string `json:"-"`
}

// Item fields: each entity that carries an amount has the amount and its
// status, and a details struct of the fields only it has (CallDetails, ...).
// A new field of an entity goes into its details struct, and from there
// into the request and every answer (wire embeds these structs), the stored
// item (store.Item embeds the details structs) and the export (a column of
// the same name, which the export checks for).

// CapitalActivity is the document-level capital movement.
type CapitalActivity struct {
	Amount Money  `json:"amount" doc:"The capital moved over the whole fund; may be negative."`
	Status Status `json:"status,omitempty" doc:"'pending' until the capital has moved, then 'completed'; 'pending' when left out."`
	ActivityDetails
}

// ActivityDetails are the fields of a capital activity beside its amount.
type ActivityDetails struct {
	ActivityDate Date   `json:"activityDate,omitzero" doc:"When the capital moves; the document's asOf when left out."`
	Description  string `json:"description,omitempty" maxLength:"200" doc:"Optional."`
}

// Position holds what a document reports for one position (one fund plus one
// investor): any of a capital call, a distribution, an unfunded commitment
// and a capital account statement.
type Position struct {
	ID                 string                  `json:"positionId" doc:"The position: one fund plus one investor. A position ID belongs to one investor for good."`
	InvestorID         string                  `json:"investorId" doc:"The investor the position belongs to; fixed when the position is first registered in the fund."`
	CapitalCall        *CapitalCallItem        `json:"capitalCall,omitempty" doc:"The position's capital call in this document."`
	Distribution       *DistributionItem       `json:"distribution,omitempty" doc:"The position's distribution in this document."`
	UnfundedCommitment *UnfundedCommitmentItem `json:"unfundedCommitment,omitempty" doc:"The position's unfunded commitment as this document reports it."`
	CapitalAccount     *CapitalAccount         `json:"capitalAccount,omitempty" doc:"The position's capital account statement for the period ending on the document's asOf (ILPA Reporting Template v2.0, A.1 and A.2)."`
}

// CapitalCallItem is a position's capital call.
type CapitalCallItem struct {
	Amount Money  `json:"amount" doc:"The capital called from the position."`
	Status Status `json:"status,omitempty" doc:"pending until the investor has paid, then completed; pending when left out. Only a completed call is paid in."`
	CallDetails
	// Transactions classify the amount by ILPA transaction type; nil when
	// the call states none (see CallTransactions).
	Transactions []Transaction `json:"transactions,omitempty" doc:"The amount classified by ILPA Performance Template transaction type; the lines add up to the amount. Left out, the line items map onto the types."`
}

// CallDetails are the fields of a capital call beside its amount: its due
// date and its line items (lines.go).
type CallDetails struct {
	DueDate Date `json:"dueDate,omitzero" doc:"When the call is due; the document's asOf when left out."`
	CallLines
}

// DistributionItem is a position's gross distribution.
type DistributionItem struct {
	Amount Money  `json:"amount" doc:"The gross distribution to the position."`
	Status Status `json:"status,omitempty" doc:"pending until paid, then completed; pending when left out. Only a completed distribution counts as distributed."`
	DistributionDetails
	Transactions []Transaction `json:"transactions,omitempty" doc:"The amount classified by ILPA Performance Template transaction type; the lines add up to the amount. Left out, the line items map onto the types."`
}

// DistributionDetails are the fields of a distribution beside its amount.
type DistributionDetails struct {
	PaymentDate Date `json:"paymentDate,omitzero" doc:"When the distribution is paid; the document's asOf when left out."`
	DistributionLines
}

// UnfundedCommitmentItem is what a position still owes, and optionally the
// total commitment it is measured against.
type UnfundedCommitmentItem struct {
	Amount Money  `json:"amount" doc:"The commitment the position has yet to contribute."`
	Status Status `json:"status,omitempty" doc:"Always active."`
	UnfundedDetails
}

// UnfundedDetails are the fields of an unfunded commitment beside its amount.
type UnfundedDetails struct {
	UnfundedLines
}

// Normalize fills defaults; Validate expects it done. Positions keep the
// caller's order, so errors can name them by their index in the request;
// SortPositions orders them once they are valid.
func (d *Document) Normalize() {
	if d.Currency == "" {
		d.Currency = DefaultCurrency
	}
	if a := d.CapitalActivity; a != nil {
		if a.Status == "" {
			a.Status = StatusPending
		}
		if a.ActivityDate.IsZero() {
			a.ActivityDate = d.AsOf
		}
	}
	for i := range d.Positions {
		p := &d.Positions[i]
		if c := p.CapitalCall; c != nil {
			if c.Status == "" {
				c.Status = StatusPending
			}
			normalizeTransactions(c.Transactions)
		}
		if x := p.Distribution; x != nil {
			if x.Status == "" {
				x.Status = StatusPending
			}
			normalizeTransactions(x.Transactions)
		}
		if p.UnfundedCommitment != nil && p.UnfundedCommitment.Status == "" {
			p.UnfundedCommitment.Status = StatusActive
		}
	}
}

// SortPositions orders positions by ID, the order of their keys.
func (d *Document) SortPositions() {
	sort.Slice(d.Positions, func(i, j int) bool { return d.Positions[i].ID < d.Positions[j].ID })
}

// Validate checks every rule a document must satisfy before it is stored.
// It returns EINVALID naming the first offending field.
func (d *Document) Validate(maxPositions int) error {
	if err := CheckID("documentId", d.ID); err != nil {
		return err
	}
	if err := CheckID("fundId", d.FundID); err != nil {
		return err
	}
	if !d.Kind.Valid() {
		return Invalid("kind", "must be one of %v", Kinds)
	}
	if d.Title == "" {
		return Invalid("title", "is required")
	}
	if err := CheckTexts("", &d.DocumentFields); err != nil {
		return err
	}
	if d.AsOf.IsZero() {
		return Invalid("asOf", "is required (YYYY-MM-DD)")
	}
	if !currencyPattern.MatchString(d.Currency) {
		return Invalid("currency", "must be an ISO 4217 code such as USD")
	}
	if a := d.CapitalActivity; a != nil {
		if err := checkStatus("capitalActivity.status", a.Status, StatusPending, StatusCompleted); err != nil {
			return err
		}
		if err := CheckTexts("capitalActivity", a); err != nil {
			return err
		}
	}
	if len(d.Positions) > maxPositions {
		return Invalid("positions", "a document holds at most %d positions, got %d", maxPositions, len(d.Positions))
	}
	seen := make(map[string]int, len(d.Positions))
	items := 0
	for i := range d.Positions {
		field := fmt.Sprintf("positions[%d]", i)
		if err := d.Positions[i].validate(field, d.AsOf); err != nil {
			return err
		}
		if items += d.Positions[i].items(); items > ItemsPerPosition*maxPositions {
			return Invalid("positions", "a document holds at most %d items (%d a position of its %d), reached at %s", ItemsPerPosition*maxPositions, ItemsPerPosition, maxPositions, field)
		}
		if first, dup := seen[d.Positions[i].ID]; dup {
			return Invalid(field+".positionId", "position %s appears more than once (first at positions[%d])", d.Positions[i].ID, first)
		}
		seen[d.Positions[i].ID] = i
	}
	return nil
}

// items is how many items p holds: one for each of its call, distribution,
// unfunded commitment and capital account present.
func (p *Position) items() int {
	n := 0
	for _, present := range []bool{p.CapitalCall != nil, p.Distribution != nil, p.UnfundedCommitment != nil, p.CapitalAccount != nil} {
		if present {
			n++
		}
	}
	return n
}

func (p *Position) validate(field string, asOf Date) error {
	if err := CheckID(field+".positionId", p.ID); err != nil {
		return err
	}
	if err := CheckID(field+".investorId", p.InvestorID); err != nil {
		return err
	}
	if p.CapitalCall == nil && p.Distribution == nil && p.UnfundedCommitment == nil && p.CapitalAccount == nil {
		return Invalid(field, "needs at least one of capitalCall, distribution, unfundedCommitment, capitalAccount")
	}
	if err := CheckTexts(field, p); err != nil {
		return err
	}
	if c := p.CapitalCall; c != nil {
		f := field + ".capitalCall"
		if err := checkStatus(f+".status", c.Status, StatusPending, StatusCompleted); err != nil {
			return err
		}
		if err := checkLines(f, c.Amount, &c.CallLines); err != nil {
			return err
		}
		if err := checkTransactions(f, OnCall, c.Amount, c.Transactions); err != nil {
			return err
		}
	}
	if x := p.Distribution; x != nil {
		f := field + ".distribution"
		if err := checkStatus(f+".status", x.Status, StatusPending, StatusCompleted); err != nil {
			return err
		}
		if err := checkLines(f, x.Amount, &x.DistributionLines); err != nil {
			return err
		}
		if err := checkTransactions(f, OnDistribution, x.Amount, x.Transactions); err != nil {
			return err
		}
	}
	if u := p.UnfundedCommitment; u != nil {
		f := field + ".unfundedCommitment"
		if err := checkStatus(f+".status", u.Status, StatusActive); err != nil {
			return err
		}
		if err := checkLines(f, u.Amount, &u.UnfundedLines); err != nil {
			return err
		}
	}
	if c := p.CapitalAccount; c != nil {
		if err := c.Validate(field+".capitalAccount", asOf); err != nil {
			return err
		}
	}
	return nil
}

// checkParts enforces a non-negative amount and, when any line item is
// given, that the given line items add up to it exactly.
func checkParts(field string, amount Money, parts map[string]*Money) error {
	if amount.Sign() < 0 {
		return Invalid(field+".amount", "must not be negative, got %s", amount)
	}
	var sum Money
	given := false
	for name, m := range parts {
		if m != nil && m.Sign() < 0 {
			return Invalid(field+"."+name, "must not be negative, got %s", m)
		}
		if m != nil {
			sum, given = sum.Add(*m), true
		}
	}
	if given && !sum.Equal(amount) {
		names := make([]string, 0, len(parts))
		for n := range parts {
			names = append(names, n)
		}
		sort.Strings(names)
		return Invalid(field, "line items %v add up to %s, not the amount %s", names, sum, amount)
	}
	return nil
}

func checkStatus(field string, s Status, allowed ...Status) error {
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	return Invalid(field, "must be one of %v, got %q", allowed, s)
}

// PositionByID returns the document's position with the given ID.
func (d *Document) PositionByID(id string) (Position, bool) {
	i := sort.Search(len(d.Positions), func(i int) bool { return d.Positions[i].ID >= id })
	if i < len(d.Positions) && d.Positions[i].ID == id {
		return d.Positions[i], true
	}
	return Position{}, false
}
