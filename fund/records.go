package fund

import (
	"slices"
	"sort"
	"time"
)

// Records: what an administrator states of a fund or an investor beside its
// documents (names, currency, vintage, investor type, the identifiers other
// systems know it by). Documents may name a fund or an investor that has no
// record: the fund or investor then exists by its ID alone. The fields are
// declared once, here: the request, the answers, the stored items and the
// export's columns take the structs whole.

// FundFields are what an administrator states of a fund.
type FundFields struct {
	Name          string      `json:"name" maxLength:"200" doc:"The fund's name as portals show it: not empty, no control characters."`
	LegalName     string      `json:"legalName,omitempty" maxLength:"200" doc:"The fund's legal name (the partnership's), when it differs from 'name'."`
	BaseCurrency  string      `json:"baseCurrency" doc:"The fund's base currency, an ISO 4217 code such as USD. Documents of the fund state their own currency."`
	VintageYear   int         `json:"vintageYear,omitempty" doc:"The fund's vintage year (its first capital call or close, as the fund reports it), 1900 to 2100."`
	TargetSize    *Money      `json:"targetSize,omitempty" doc:"The fund's target size in its base currency; not negative."`
	InceptionDate Date        `json:"inceptionDate,omitzero" doc:"The fund's inception date."`
	ExternalIDs   ExternalIDs `json:"externalIds,omitempty" maxLength:"200" doc:"The fund's identifiers in other systems (an LP aggregator's, a fund administrator's, a data vendor's), by system: at most 20, each system 1 to 64 characters of letters, digits and _ . : - (starting with a letter or digit), each identifier not empty."`
}

// InvestorFields are what an administrator states of an investor.
type InvestorFields struct {
	DisplayName  string       `json:"displayName" maxLength:"200" doc:"The investor's name as portals show it: not empty, no control characters."`
	InvestorType InvestorType `json:"investorType" doc:"What kind of investor it is: pension, endowment, foundation, insurance, sovereign_wealth, fund_of_funds, family_office, individual or other."`
	ExternalIDs  ExternalIDs  `json:"externalIds,omitempty" maxLength:"200" doc:"The investor's identifiers in other systems (an LP aggregator's, a custodian's, a CRM's), by system: at most 20, each system 1 to 64 characters of letters, digits and _ . : - (starting with a letter or digit), each identifier not empty."`
}

// ExternalIDs are an entity's identifiers in other systems, by system, as
// LP aggregators keep them (downstream IDs).
type ExternalIDs map[string]string

// Limits of a record.
const (
	MaxExternalIDs = 20
	MinVintageYear = 1900
	MaxVintageYear = 2100
)

// externalSystemPattern is the rule of an external system's name: an ID's,
// so that it is safe in any key or column it may become.
var externalSystemPattern = idPattern

// InvestorType is what kind of investor an investor is.
type InvestorType string

// The investor types, in the one casing of every enumeration.
const (
	InvestorPension         InvestorType = "pension"
	InvestorEndowment       InvestorType = "endowment"
	InvestorFoundation      InvestorType = "foundation"
	InvestorInsurance       InvestorType = "insurance"
	InvestorSovereignWealth InvestorType = "sovereign_wealth"
	InvestorFundOfFunds     InvestorType = "fund_of_funds"
	InvestorFamilyOffice    InvestorType = "family_office"
	InvestorIndividual      InvestorType = "individual"
	InvestorOther           InvestorType = "other"
)

// InvestorTypes lists every investor type.
var InvestorTypes = []InvestorType{InvestorPension, InvestorEndowment, InvestorFoundation, InvestorInsurance,
	InvestorSovereignWealth, InvestorFundOfFunds, InvestorFamilyOffice, InvestorIndividual, InvestorOther}

// Valid reports whether t is a known investor type.
func (t InvestorType) Valid() bool { return slices.Contains(InvestorTypes, t) }

// UnmarshalText reads a known investor type; anything else is EINVALID.
func (t *InvestorType) UnmarshalText(b []byte) error {
	v := InvestorType(b)
	if !v.Valid() {
		return Errorf(EINVALID, "must be one of %v, got %s", InvestorTypes, quoteShort(string(b)))
	}
	*t = v
	return nil
}

// FundRecord is a fund's record as stored: what an administrator stated,
// and the server-owned version, instant and author of that statement.
type FundRecord struct {
	FundFields
	Version   int // 1 for the first record, one more for each replacement
	UpdatedAt time.Time
	UpdatedBy string // the subject of the token that put this version
}

// InvestorRecord is an investor's record as stored (see FundRecord).
type InvestorRecord struct {
	InvestorFields
	Version   int
	UpdatedAt time.Time
	UpdatedBy string
}

// Fund is a fund as the service knows it: by its ID, which documents name,
// and by its record once an administrator has put one.
type Fund struct {
	ID     string
	Record *FundRecord // nil until an administrator puts one
}

// Investor is an investor as the service knows it (see Fund).
type Investor struct {
	ID     string
	Record *InvestorRecord // nil until an administrator puts one
}

// Validate checks every rule of a fund record; it returns EINVALID naming
// the first offending field.
func (f *FundFields) Validate() error {
	if f.Name == "" {
		return Invalid("name", "is required")
	}
	if !currencyPattern.MatchString(f.BaseCurrency) {
		return Invalid("baseCurrency", "must be an ISO 4217 code such as USD, got %s", quoteShort(f.BaseCurrency))
	}
	if f.VintageYear != 0 && (f.VintageYear < MinVintageYear || f.VintageYear > MaxVintageYear) {
		return Invalid("vintageYear", "must be a year from %d to %d, got %d", MinVintageYear, MaxVintageYear, f.VintageYear)
	}
	if f.TargetSize != nil && f.TargetSize.Sign() < 0 {
		return Invalid("targetSize", "must not be negative, got %s", f.TargetSize)
	}
	if err := f.ExternalIDs.validate("externalIds"); err != nil {
		return err
	}
	return CheckTexts("", f)
}

// Validate checks every rule of an investor record; it returns EINVALID
// naming the first offending field.
func (i *InvestorFields) Validate() error {
	if i.DisplayName == "" {
		return Invalid("displayName", "is required")
	}
	if !i.InvestorType.Valid() {
		return Invalid("investorType", "must be one of %v, got %s", InvestorTypes, quoteShort(string(i.InvestorType)))
	}
	if err := i.ExternalIDs.validate("externalIds"); err != nil {
		return err
	}
	return CheckTexts("", i)
}

func (ids ExternalIDs) validate(field string) error {
	if len(ids) > MaxExternalIDs {
		return Invalid(field, "holds at most %d identifiers, got %d", MaxExternalIDs, len(ids))
	}
	for _, system := range ids.Systems() {
		if !externalSystemPattern.MatchString(system) {
			return Invalid(field, "system %s is not a valid name: 1 to 64 characters, letters, digits and _ . : - only, starting with a letter or digit", quoteShort(system))
		}
		if ids[system] == "" {
			return Invalid(field+"."+system, "must not be empty")
		}
	}
	return nil
}

// Systems lists the systems ids names, sorted.
func (ids ExternalIDs) Systems() []string {
	out := make([]string, 0, len(ids))
	for s := range ids {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Normalize drops an empty map, so that "no identifiers" is one value.
func (f *FundFields) Normalize() {
	if len(f.ExternalIDs) == 0 {
		f.ExternalIDs = nil
	}
}

// Normalize drops an empty map, so that "no identifiers" is one value.
func (i *InvestorFields) Normalize() {
	if len(i.ExternalIDs) == 0 {
		i.ExternalIDs = nil
	}
}
