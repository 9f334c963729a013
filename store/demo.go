package store

import (
	"context"
	"fmt"

	"github.com/fundsvc/fundsvc/fund"
)

// SeedDemo loads the demo dataset unless its documents already exist, so it
// can run on every start. It returns how many versions it wrote.
func (s *Store) SeedDemo(ctx context.Context) (int, error) {
	written := 0
	seen := map[string]int{}
	for _, d := range fund.DemoVersions() {
		if _, err := s.LatestDocument(ctx, d.ID); err == nil && seen[d.ID] == 0 {
			continue // seeded before
		} else if err != nil && fund.ErrorCode(err) != fund.ENOTFOUND {
			return written, err
		}
		expect := seen[d.ID]
		d.CreatedBy = "fundsvc seed"
		if _, err := s.Restate(ctx, d, &expect); err != nil {
			return written, fmt.Errorf("seed %s: %w", d.ID, err)
		}
		seen[d.ID]++
		written++
	}
	return written, nil
}
