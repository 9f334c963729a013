package main

import (
	"encoding/json"

	"github.com/fundsvc/fundsvc/fund"
)

// The request body of PUT /v1/documents/{id}, as a client writes it
// (see the API's documentRequest). Amounts are JSON strings.

type documentWire struct {
	FundID          string         `json:"fundId"`
	Kind            fund.Kind      `json:"kind"`
	Title           string         `json:"title"`
	AsOf            string         `json:"asOf"`
	Currency        string         `json:"currency"`
	CapitalActivity activityWire   `json:"capitalActivity"`
	Positions       []positionWire `json:"positions"`
}

type activityWire struct {
	Amount      fund.Money  `json:"amount"`
	Status      fund.Status `json:"status"`
	Date        string      `json:"date"`
	Description string      `json:"description"`
}

type positionWire struct {
	PositionID         string       `json:"positionId"`
	InvestorID         string       `json:"investorId"`
	CapitalCall        callWire     `json:"capitalCall"`
	Distribution       distWire     `json:"distribution"`
	UnfundedCommitment unfundedWire `json:"unfundedCommitment"`
}

type callWire struct {
	Amount        fund.Money  `json:"amount"`
	Status        fund.Status `json:"status"`
	DueDate       string      `json:"dueDate"`
	Investment    *fund.Money `json:"investment,omitempty"`
	ManagementFee *fund.Money `json:"managementFee,omitempty"`
	FundExpenses  *fund.Money `json:"fundExpenses,omitempty"`
}

type distWire struct {
	Amount          fund.Money  `json:"amount"`
	Status          fund.Status `json:"status"`
	Date            string      `json:"date"`
	ReturnOfCapital *fund.Money `json:"returnOfCapital,omitempty"`
	RealizedGain    *fund.Money `json:"realizedGain,omitempty"`
	Income          *fund.Money `json:"income,omitempty"`
	Recallable      *fund.Money `json:"recallable,omitempty"`
	Withholding     *fund.Money `json:"withholding,omitempty"`
}

type unfundedWire struct {
	Amount     fund.Money  `json:"amount"`
	Commitment *fund.Money `json:"commitment,omitempty"`
	Status     fund.Status `json:"status"`
}

// requestBody is the JSON a client sends to store d. Documents from
// makeDocument have a capital activity and all three items per position.
func requestBody(d fund.Document) ([]byte, error) {
	a := d.CapitalActivity
	w := documentWire{
		FundID: d.FundID, Kind: d.Kind, Title: d.Title, AsOf: d.AsOf.String(), Currency: d.Currency,
		CapitalActivity: activityWire{Amount: a.Amount, Status: a.Status, Date: a.Date.String(), Description: a.Description},
		Positions:       make([]positionWire, 0, len(d.Positions)),
	}
	for _, p := range d.Positions {
		c, x, u := p.CapitalCall, p.Distribution, p.UnfundedCommitment
		w.Positions = append(w.Positions, positionWire{
			PositionID: p.ID, InvestorID: p.InvestorID,
			CapitalCall: callWire{Amount: c.Amount, Status: c.Status, DueDate: c.DueDate.String(),
				Investment: c.Investment, ManagementFee: c.ManagementFee, FundExpenses: c.FundExpenses},
			Distribution: distWire{Amount: x.Amount, Status: x.Status, Date: x.Date.String(),
				ReturnOfCapital: x.ReturnOfCapital, RealizedGain: x.RealizedGain, Income: x.Income,
				Recallable: x.Recallable, Withholding: x.Withholding},
			UnfundedCommitment: unfundedWire{Amount: u.Amount, Commitment: u.Commitment, Status: u.Status},
		})
	}
	return json.Marshal(w)
}

// titleOf reads the title of a document version's response.
func titleOf(body []byte) (string, error) {
	var v struct {
		Title string `json:"title"`
	}
	err := json.Unmarshal(body, &v)
	return v.Title, err
}
