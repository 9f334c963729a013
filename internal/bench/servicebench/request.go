package main

import (
	"encoding/json"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// requestBody is the JSON a client sends to store d: the API's own request
// type (wire.DocumentRequest), so the bench cannot drift from it.
func requestBody(d fund.Document) ([]byte, error) {
	ps := make([]wire.Position, 0, len(d.Positions))
	for _, p := range d.Positions {
		ps = append(ps, wire.PositionOf(p))
	}
	req := wire.DocumentRequest{
		FundID: d.FundID, Kind: string(d.Kind), Title: d.Title, AsOf: d.AsOf.String(), Currency: d.Currency,
		Positions: wire.PositionsOf(ps...),
	}
	if a := d.CapitalActivity; a != nil {
		req.CapitalActivity = &wire.CapitalActivityInput{
			Amount: wire.AmountOf(a.Amount), Status: string(a.Status), Date: a.Date.String(), Description: a.Description,
		}
	}
	return json.Marshal(req)
}

// titleOf reads the title of a document version's response
// (wire.DocumentVersion), from its header alone.
func titleOf(body []byte) (string, error) {
	var h wire.DocumentHeader
	err := json.Unmarshal(body, &h)
	return h.Title, err
}
