package imports

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// threeCalls is a file of three one-position capital call notices.
const threeCalls = `documentId,fundId,kind,title,asOf,positionId,investorId,capitalCall.amount
CALL_A,FUND_C,capital_call_notice,Call A,2026-01-15,P1,I1,100.00
CALL_B,FUND_C,capital_call_notice,Call B,2026-01-15,P1,I1,200.00
CALL_C,FUND_C,capital_call_notice,Call C,2026-01-15,P1,I1,300.00
`

// TestCommitReportsEachDocument: each document is written once and
// reported under its index in the file from what its write answered:
// version 1 is created, a later version restated, unchanged as such, an
// error refused without stopping the other documents. The writes run
// side by side (all three are in flight at once), the reports one at a
// time.
func TestCommitReportsEachDocument(t *testing.T) {
	file, err := Read(t.Context(), strings.NewReader(threeCalls), FormatCSV, Limits{})
	if err != nil || len(file.Errors) > 0 {
		t.Fatalf("read: %v %v", err, file.Errors)
	}
	for _, tc := range []struct {
		name    string
		answers map[string]func() (int, bool, error)
		want    []Outcome
		sum     Summary
	}{
		{"a first import creates every document",
			map[string]func() (int, bool, error){"CALL_A": ok(1, false), "CALL_B": ok(1, false), "CALL_C": ok(1, false)},
			[]Outcome{{Result: Created, Version: 1}, {Result: Created, Version: 1}, {Result: Created, Version: 1}},
			Summary{Created: 3}},
		{"a refused document does not stop the others",
			map[string]func() (int, bool, error){"CALL_A": ok(3, true), "CALL_B": fails(&fund.Error{Code: fund.ECONFLICT, Field: "positions", Message: "another investor"}), "CALL_C": ok(2, false)},
			[]Outcome{{Result: Unchanged, Version: 3}, {Result: Refused}, {Result: Restated, Version: 2}},
			Summary{Unchanged: 1, Refused: 1, Restated: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			written := map[string]string{}
			all := make(chan struct{})
			write := func(_ context.Context, d fund.Document) (int, bool, error) {
				mu.Lock()
				written[d.ID] = d.Positions[0].CapitalCall.Amount.String()
				if len(written) == len(file.Documents) {
					close(all)
				}
				mu.Unlock()
				select { // every write waits until all are in flight
				case <-all:
				case <-time.After(10 * time.Second):
					return 0, false, fmt.Errorf("%s: the other writes never started", d.ID)
				}
				return tc.answers[d.ID]()
			}
			got := make([]Outcome, len(file.Documents))
			var reporting atomic.Bool
			sum, err := Commit(context.Background(), file, write, func(i int, o Outcome) {
				if !reporting.CompareAndSwap(false, true) {
					t.Error("done called while another call runs")
				}
				got[i] = o
				reporting.Store(false)
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"CALL_A": "100.00", "CALL_B": "200.00", "CALL_C": "300.00"}; !maps.Equal(written, want) {
				t.Errorf("written %v, want %v", written, want)
			}
			if sum != tc.sum {
				t.Errorf("summary %+v, want %+v", sum, tc.sum)
			}
			for i, o := range got {
				if o.Result != tc.want[i].Result || o.Version != tc.want[i].Version || (o.Err != nil) != (o.Result == Refused) {
					t.Errorf("document %d: %+v, want %+v", i, o, tc.want[i])
				}
				if o.Err != nil && (fund.ErrorCode(o.Err) != fund.ECONFLICT || !strings.Contains(o.Err.Error(), file.Documents[i].ID)) {
					t.Errorf("document %d: the refusal %v lost its code or does not name the document", i, o.Err)
				}
			}
		})
	}
}

// TestCommitOfAFileWithProblemsWritesNothing: a file with any problem is
// refused whole, before the first write.
func TestCommitOfAFileWithProblemsWritesNothing(t *testing.T) {
	bad := strings.Replace(threeCalls, "300.00", "three hundred", 1)
	file, err := Read(t.Context(), strings.NewReader(bad), FormatCSV, Limits{})
	if err != nil || len(file.Errors) == 0 {
		t.Fatalf("read: %v, %d problems; want a problem", err, len(file.Errors))
	}
	calls := 0
	_, err = Commit(context.Background(), file, func(context.Context, fund.Document) (int, bool, error) { calls++; return 1, false, nil }, nil)
	if fund.ErrorCode(err) != fund.EINVALID || calls != 0 {
		t.Fatalf("Commit: %v after %d writes; want EINVALID and none", err, calls)
	}
}

func ok(version int, unchanged bool) func() (int, bool, error) {
	return func() (int, bool, error) { return version, unchanged, nil }
}

func fails(err error) func() (int, bool, error) {
	return func() (int, bool, error) { return 0, false, err }
}
