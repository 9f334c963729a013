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
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// problems collects what a check found wrong, from many goroutines, and
// reports it once: every problem counted, the first ones shown.
type problems struct {
	mu   sync.Mutex
	list []string
}

func (p *problems) add(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.list)
}

// report fails t with the problems found under the heading what, if any.
func (p *problems) report(t *testing.T, what string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.list) == 0 {
		return
	}
	const shown = 25
	list := slices.Clone(p.list)
	sort.Strings(list)
	more := ""
	if len(list) > shown {
		more = fmt.Sprintf("\n  … and %d more", len(list)-shown)
		list = list[:shown]
	}
	t.Errorf("%s: %d problems:\n  %s%s", what, len(p.list), strings.Join(list, "\n  "), more)
	p.list = nil
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

func acknowledged(status int) bool { return status == http.StatusOK || status == http.StatusCreated }

// get reads path into v and adds a problem unless the answer is want.
// It reports whether the answer was 200 (v is then filled).
func get(ctx context.Context, p *problems, cl *Client, who, path string, want int, v any) bool {
	resp, err := cl.GetJSON(ctx, path, v)
	if err != nil {
		p.add("%s GET %s: %v", who, path, err)
		return false
	}
	if resp.Status != want {
		p.add("%s GET %s: want %d, got %s", who, path, want, resp)
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
