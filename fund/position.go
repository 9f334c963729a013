package fund

import "time"

// Registered is a position as its fund registers it: one fund plus one
// investor, listed once the first committed document names it, with the
// currency of that document and the time it was written.
type Registered struct {
	PositionID string
	FundID     string
	InvestorID string
	Currency   string
	CreatedAt  time.Time
}
