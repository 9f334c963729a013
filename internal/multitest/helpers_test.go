package multitest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// problems collects what a check found wrong, from many goroutines, by
// kind, and reports it once: every kind with its count and first examples.
type problems struct {
	mu    sync.Mutex
	kinds map[string][]string
	n     int
}

// add records one problem of a kind, such as "registry row of a refused
// write".
func (p *problems) add(kind, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kinds == nil {
		p.kinds = map[string][]string{}
	}
	p.kinds[kind] = append(p.kinds[kind], fmt.Sprintf(format, args...))
	p.n++
}

// report fails t with the problems found under the heading what, if any,
// and forgets them.
func (p *problems) report(t *testing.T, what string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return
	}
	const shown = 4
	var b strings.Builder
	for _, kind := range keys(p.kinds) {
		list := slices.Clone(p.kinds[kind])
		sort.Strings(list)
		fmt.Fprintf(&b, "\n  %s: %d, such as", kind, len(list))
		for _, s := range list[:min(shown, len(list))] {
			fmt.Fprintf(&b, "\n    %s", s)
		}
	}
	t.Errorf("%s: %d problems of %d kinds:%s", what, p.n, len(p.kinds), b.String())
	p.kinds, p.n = nil, 0
}

// parallel runs f for every element of jobs on n goroutines.
func parallel[T any](n int, jobs []T, f func(T)) {
	ch := make(chan T)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				f(j)
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

// money is an exact amount, for amounts the tests make up.
func money(units int) fund.Money { return fund.MustMoney(fmt.Sprintf("%d.00", units)) }

// callOf is a capital call of units.
func callOf(units int) *fund.CapitalCallItem {
	return &fund.CapitalCallItem{Amount: money(units)}
}

// document is a capital call notice of fundID in USD, as a test sends it
// (PutDocument) and reads it back.
func document(fundID, title, asOf string, positions ...fund.Position) wire.DocumentVersion {
	return wire.DocumentVersion{DocumentHeader: wire.DocumentHeader{DocumentFields: fund.DocumentFields{FundID: fundID, Kind: fund.KindCapitalCallNotice,
		Title: title, AsOf: fund.MustDate(asOf), Currency: "USD"}},
		Positions: append([]fund.Position{}, positions...)}
}

func acknowledged(status int) bool { return status == http.StatusOK || status == http.StatusCreated }

// get reads path into v and adds a problem unless the answer is want.
// It reports whether the answer was 200 (v is then filled).
func get(ctx context.Context, p *problems, cl *Client, who, path string, want int, v any) bool {
	resp, err := cl.GetJSON(ctx, path, v)
	if err != nil {
		p.add("no answer", "%s GET %s: %v", who, path, err)
		return false
	}
	if resp.Status != want {
		p.add(fmt.Sprintf("GET answered %d, want %d", resp.Status, want), "%s GET %s: %s", who, path, resp)
		return false
	}
	return resp.Status == http.StatusOK
}

// keys returns the sorted keys of a set.
func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
