package imports

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
)

// threeCalls is a file of three one-position capital call notices.
const threeCalls = `documentId,fundId,kind,title,asOf,positionId,investorId,capitalCall.amount
CALL_A,FUND_C,capital_call_notice,Call A,2026-01-15,P1,I1,100.00
CALL_B,FUND_C,capital_call_notice,Call B,2026-01-15,P1,I1,200.00
CALL_C,FUND_C,capital_call_notice,Call C,2026-01-15,P1,I1,300.00
`

// TestCommitReportsEachDocumentInFileOrder: each document is written once
// and reported, in file order, from what its write answered: version 1 is
// created, a later version restated, unchanged as such, an error refused
// without stopping the documents after it.
func TestCommitReportsEachDocumentInFileOrder(t *testing.T) {
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
		{"a refused document does not stop the next ones",
			map[string]func() (int, bool, error){"CALL_A": ok(3, true), "CALL_B": fails(&fund.Error{Code: fund.ECONFLICT, Field: "positions", Message: "another investor"}), "CALL_C": ok(2, false)},
			[]Outcome{{Result: Unchanged, Version: 3}, {Result: Refused}, {Result: Restated, Version: 2}},
			Summary{Unchanged: 1, Refused: 1, Restated: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var written []string
			write := func(_ context.Context, d fund.Document) (int, bool, error) {
				mu.Lock()
				written = append(written, d.ID+":"+d.Positions[0].CapitalCall.Amount.String())
				mu.Unlock()
				return tc.answers[d.ID]()
			}
			var got []Outcome
			var order []int
			sum, err := Commit(context.Background(), file, write, func(i int, o Outcome) { order = append(order, i); got = append(got, o) })
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(written)
			if want := []string{"CALL_A:100.00", "CALL_B:200.00", "CALL_C:300.00"}; !slices.Equal(written, want) {
				t.Errorf("written %v, want %v", written, want)
			}
			if !slices.Equal(order, []int{0, 1, 2}) {
				t.Errorf("done called for %v, want 0, 1, 2", order)
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

// TestCommitWritesCommitParallelDocumentsAtATime: with every write held,
// exactly CommitParallel are in flight; released last to first, the
// documents are still reported in file order, each once.
func TestCommitWritesCommitParallelDocumentsAtATime(t *testing.T) {
	const n = 3 * CommitParallel
	var csv strings.Builder
	csv.WriteString("documentId,fundId,kind,title,asOf,positionId,investorId,capitalCall.amount\n")
	for i := range n {
		fmt.Fprintf(&csv, "CALL_%02d,FUND_C,capital_call_notice,Call,2026-01-15,P%d,I1,1.00\n", i, i)
	}
	file, err := Read(t.Context(), strings.NewReader(csv.String()), FormatCSV, Limits{})
	if err != nil || len(file.Errors) > 0 {
		t.Fatalf("read: %v %v", err, file.Errors)
	}
	started := make(chan string, n)
	release := map[string]chan struct{}{}
	for _, d := range file.Documents {
		release[d.ID] = make(chan struct{})
	}
	write := func(_ context.Context, d fund.Document) (int, bool, error) {
		started <- d.ID
		<-release[d.ID]
		return 1, false, nil
	}
	var order []int
	finished := make(chan Summary)
	go func() {
		sum, _ := Commit(t.Context(), file, write, func(i int, o Outcome) { order = append(order, i) })
		finished <- sum
	}()
	// Hold every write; release the latest started of each full batch, so
	// later documents finish before earlier ones.
	for done := 0; done < n; {
		var batch []string
		for len(batch) < CommitParallel && done+len(batch) < n {
			batch = append(batch, <-started)
		}
		select {
		case id := <-started:
			t.Fatalf("%s started while %d writes were in flight", id, len(batch))
		default:
		}
		for _, id := range slices.Backward(batch) {
			close(release[id])
		}
		done += len(batch)
	}
	if sum := <-finished; sum.Created != n {
		t.Errorf("summary %+v, want %d created", sum, n)
	}
	if want := slices.Collect(func(yield func(int) bool) {
		for i := range n {
			yield(i)
		}
	}); !slices.Equal(order, want) {
		t.Errorf("done called for %v, want %v", order, want)
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
