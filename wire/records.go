package wire

import (
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The records of funds and investors: requests are fund's declared fields,
// decoded by the strict decoder; answers add the ID and the server-owned
// version, instant and author. A fund or an investor that documents name
// but that has no record yet is answered with its ID alone.

// FundRequest is the body of PUT /v1/funds/{fundId}: the whole record.
type FundRequest struct {
	fund.FundFields
}

// InvestorRequest is the body of PUT /v1/investors/{investorId}: the whole
// record.
type InvestorRequest struct {
	fund.InvestorFields
}

// Fields is the record the request states, normalized and validated; it
// returns EINVALID naming the first offending field.
func (r *FundRequest) Fields() (fund.FundFields, error) {
	f := r.FundFields
	f.Normalize()
	return f, f.Validate()
}

// Fields is the record the request states, normalized and validated; it
// returns EINVALID naming the first offending field.
func (r *InvestorRequest) Fields() (fund.InvestorFields, error) {
	f := r.InvestorFields
	f.Normalize()
	return f, f.Validate()
}

// Fund is a fund: its ID and, once an administrator has put one, its record.
type Fund struct {
	FundID string `json:"fundId" doc:"The fund."`
	*fund.FundFields
	Version   int       `json:"version,omitempty" doc:"The record's version: 1 for the first record, one more for each replacement; also the ETag. Absent when the fund has no record yet."`
	UpdatedAt time.Time `json:"updatedAt,omitzero" doc:"When this version of the record was put (UTC). Absent when the fund has no record yet."`
	UpdatedBy string    `json:"updatedBy,omitempty" doc:"The subject ('sub' claim) of the token that put this version of the record; 'fundsvc seed' for the demo data. Absent when the fund has no record yet."`
	Basis     *Basis    `json:"basis,omitempty" doc:"What the read answered on (GET /v1/funds/{fundId} only): with knownAt, the record is the version in force then. asOf is null: a record is not taken at a date."`
}

// FundOf renders a fund.
func FundOf(f fund.Fund) Fund {
	w := Fund{FundID: f.ID}
	if r := f.Record; r != nil {
		fields := r.FundFields
		w.FundFields, w.Version, w.UpdatedAt, w.UpdatedBy = &fields, r.Version, r.UpdatedAt, r.UpdatedBy
	}
	return w
}

// FundsOf renders funds.
func FundsOf(fs []fund.Fund) []Fund { return renderAll(fs, FundOf) }

// Investor is an investor: its ID and, once an administrator has put one,
// its record.
type Investor struct {
	InvestorID string `json:"investorId" doc:"The investor."`
	*fund.InvestorFields
	Version   int       `json:"version,omitempty" doc:"The record's version: 1 for the first record, one more for each replacement; also the ETag. Absent when the investor has no record yet."`
	UpdatedAt time.Time `json:"updatedAt,omitzero" doc:"When this version of the record was put (UTC). Absent when the investor has no record yet."`
	UpdatedBy string    `json:"updatedBy,omitempty" doc:"The subject ('sub' claim) of the token that put this version of the record; 'fundsvc seed' for the demo data. Absent when the investor has no record yet."`
	Basis     *Basis    `json:"basis,omitempty" doc:"What the read answered on (GET /v1/investors/{investorId} only): with knownAt, the record is the version in force then. asOf is null: a record is not taken at a date."`
}

// InvestorOf renders an investor.
func InvestorOf(i fund.Investor) Investor {
	w := Investor{InvestorID: i.ID}
	if r := i.Record; r != nil {
		fields := r.InvestorFields
		w.InvestorFields, w.Version, w.UpdatedAt, w.UpdatedBy = &fields, r.Version, r.UpdatedAt, r.UpdatedBy
	}
	return w
}

// InvestorsOf renders investors.
func InvestorsOf(is []fund.Investor) []Investor { return renderAll(is, InvestorOf) }

// Names are the names of the funds and investors an answer names, by ID,
// from their records; an ID without a record has none.
type Names struct {
	Funds     map[string]string // fund ID → name
	Investors map[string]string // investor ID → display name
}
