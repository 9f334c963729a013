package fund

import "time"

// Registered is a position as its fund registers it: one fund plus one
// investor, listed once the first committed document names it, with the
// currency of that document and the time it was written.
type Registered struct {
	PositionID   string    `json:"positionId" doc:"The position."`
	FundID       string    `json:"fundId" doc:"The position's fund."`
	InvestorID   string    `json:"investorId" doc:"The position's investor."`
	Currency     string    `json:"currency" doc:"The currency of the document that first registered the position."`
	RegisteredAt time.Time `json:"registeredAt" doc:"When the first document that reported the position was written."`
}
