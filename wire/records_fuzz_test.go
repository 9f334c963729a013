package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// FuzzRecordRequest decodes fund and investor record bodies as PUT does:
// every refusal is a coded *fund.Error with a message, and every accepted
// record keeps its rules (a name, an ISO currency, a vintage year in range,
// a target size not negative and exact, at most 20 external identifiers).
func FuzzRecordRequest(f *testing.F) {
	for _, s := range []string{
		`{"name":"Fund A","baseCurrency":"USD","vintageYear":2025,"targetSize":"250000000.00","inceptionDate":"2025-02-03","externalIds":{"carta":"FA-1"}}`,
		`{"displayName":"Northwind","investorType":"pension","externalIds":{"crm":"7"}}`,
		`{"name":"A","baseCurrency":"USD","vintageYear":2025.0}`, `{"name":"A","baseCurrency":"USD","vintageYear":-1}`,
		`{"name":"A","baseCurrency":"USD","vintageYear":99999999999}`, `{"name":"A","baseCurrency":"USD","targetSize":1e3}`,
		`{"name":"A","baseCurrency":"USD","externalIds":{"a":"1","a":"2"}}`, `{"name":"A","baseCurrency":"USD","externalIds":{"a":null}}`,
		`{"displayName":"X","investorType":"Pension"}`, `{}`, `null`, `[]`, `{"name":"A"`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fr wire.FundRequest
		if err := wire.DecodeStrict(bytes.NewReader(body), &fr); err != nil {
			actionable(t, err, body)
		} else if r, err := fr.Fields(); err != nil {
			actionable(t, err, body)
		} else {
			if r.Name == "" || fund.CheckTexts("", &r) != nil || len(r.BaseCurrency) != 3 || len(r.ExternalIDs) > fund.MaxExternalIDs ||
				(r.VintageYear != 0 && (r.VintageYear < fund.MinVintageYear || r.VintageYear > fund.MaxVintageYear)) ||
				(r.TargetSize != nil && r.TargetSize.Sign() < 0) {
				t.Fatalf("accepted %+v\nbody: %q", r, body)
			}
			if r.TargetSize != nil {
				if back, err := fund.ParseMoney(r.TargetSize.String()); err != nil || !back.Equal(*r.TargetSize) {
					t.Fatalf("accepted target size %s, which reads back as %s, %v", r.TargetSize, back, err)
				}
			}
		}
		var ir wire.InvestorRequest
		if err := wire.DecodeStrict(bytes.NewReader(body), &ir); err != nil {
			actionable(t, err, body)
		} else if r, err := ir.Fields(); err != nil {
			actionable(t, err, body)
		} else if r.DisplayName == "" || !r.InvestorType.Valid() || len(r.ExternalIDs) > fund.MaxExternalIDs {
			t.Fatalf("accepted %+v\nbody: %q", r, body)
		}
	})
}

// actionable fails t unless err is a coded error of the client's with a
// message.
func actionable(t *testing.T, err error, body []byte) {
	t.Helper()
	var fe *fund.Error
	if !errors.As(err, &fe) || fe.Message == "" || fe.Code != fund.EINVALID {
		t.Fatalf("refused with %T %v\nbody: %q", err, err, body)
	}
}
