package multitest

import (
	"context"
	"fmt"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSustainedMixedLoad runs writers and readers on every instance for a
// bounded time: restatements of a pool of documents (some with If-Match,
// some repeated with an Idempotency-Key on another instance) and reads of
// every route. No answer may be a 5xx; afterwards every acknowledged write
// reads back at its version with its content, no version of a document was
// acknowledged to two different writes, and no read saw a document older
// than a version acknowledged before the read was sent.
func TestSustainedMixedLoad(t *testing.T) {
	const (
		duration = 20 * time.Second
		writers  = 3
		readers  = 3
	)
	funds := []string{"LFUND_A", "LFUND_B"}
	ctx, cancel := context.WithTimeout(context.Background(), duration+time.Minute)
	defer cancel()
	c := Start(t, Options{Instances: 3})
	admin := c.Client(c.AdminToken(t, funds...))
	portals := map[string]*Client{}
	for i := range 3 {
		inv := fmt.Sprintf("LINV_%d", i)
		portals[inv] = c.Client(c.InvestorToken(t, inv))
	}
	type poolDoc struct {
		id, fund string
		top      atomic.Int64 // highest version acknowledged
	}
	var pool []*poolDoc
	for i := range 6 {
		pool = append(pool, &poolDoc{id: fmt.Sprintf("LDOC_%d", i), fund: funds[i%len(funds)]})
	}
	positionOf := func(fundID string, k int) fund.Position {
		return fund.Position{ID: fmt.Sprintf("%s_P%d", fundID, k), InvestorID: fmt.Sprintf("LINV_%d", k%3)}
	}
	seq := atomic.Int64{}
	newVersion := func(rng *rand.Rand, d *poolDoc) wire.DocumentVersion {
		doc := document(d.fund, fmt.Sprintf("write %d", seq.Add(1)), "2026-06-01")
		for k := range 5 {
			if k == 0 || rng.IntN(2) == 0 { // never empty, so every position read finds something
				pos := positionOf(d.fund, k)
				pos.CapitalCall = callOf(1 + rng.IntN(100000))
				doc.Positions = append(doc.Positions, pos)
			}
		}
		return doc
	}
	var p problems
	var mu sync.Mutex
	acked := map[string]map[int]wire.DocumentVersion{}
	statuses := map[string]map[int]int{} // kind of request → status → count
	count := func(kind string, resp Response, err error, want ...int) {
		mu.Lock()
		defer mu.Unlock()
		if statuses[kind] == nil {
			statuses[kind] = map[int]int{}
		}
		statuses[kind][resp.Status]++
		switch {
		case err != nil:
			p.add("no answer", "%s: %v", kind, err)
		case resp.Status >= 500:
			p.add("5xx", "%s: %s", kind, resp)
		case resp.Status == http.StatusTooManyRequests:
			// A rate limit is a refusal, not a failure.
		default:
			for _, w := range want {
				if resp.Status == w {
					return
				}
			}
			p.add(fmt.Sprintf("%s answered %d", kind, resp.Status), "%s", resp)
		}
	}
	ack := func(d *poolDoc, v int, doc wire.DocumentVersion) {
		mu.Lock()
		defer mu.Unlock()
		if prev, dup := acked[d.id][v]; dup && prev.Title != doc.Title {
			p.add("version acknowledged twice", "%s v%d acknowledged to %q and to %q", d.id, v, prev.Title, doc.Title)
		}
		doc.Version = v
		acked[d.id][v] = doc
		for {
			top := d.top.Load()
			if int64(v) <= top || d.top.CompareAndSwap(top, int64(v)) {
				break
			}
		}
	}
	// Every document exists before the load, so every read has something
	// to find.
	for _, d := range pool {
		acked[d.id] = map[int]wire.DocumentVersion{}
		doc := newVersion(rand.New(rand.NewPCG(1, 2)), d)
		resp, err := admin.PutDocument(ctx, d.id, doc)
		if err != nil || resp.Status != http.StatusCreated {
			t.Fatalf("create %s: %v %s", d.id, err, resp)
		}
		ack(d, resp.Version(), doc)
	}

	seed := uint64(time.Now().UnixNano())
	deadline := time.Now().Add(duration)
	var requests atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				d := pool[rng.IntN(len(pool))]
				doc := newVersion(rng, d)
				switch x := rng.IntN(8); {
				case x == 0: // If-Match with the last version this writer knows of
					known := int(d.top.Load())
					h := http.Header{"If-Match": {`"` + strconv.Itoa(known) + `"`}}
					resp, err := admin.Do(ctx, http.MethodPut, "/v1/documents/"+d.id, RequestOf(doc), h)
					requests.Add(1)
					count("PUT with If-Match", resp, err, http.StatusOK, http.StatusPreconditionFailed)
					if err == nil && acknowledged(resp.Status) {
						if resp.Version() != known+1 {
							p.add("If-Match not honored", "%s: If-Match %d acknowledged as v%d", d.id, known, resp.Version())
						}
						ack(d, resp.Version(), doc)
					}
				case x == 1: // the same write twice, with one Idempotency-Key, on two instances
					h := http.Header{"Idempotency-Key": {fmt.Sprintf("load-%d-%d", w, seq.Add(1))}}
					first, err := admin.Do(ctx, http.MethodPut, "/v1/documents/"+d.id, RequestOf(doc), h)
					requests.Add(1)
					count("PUT with Idempotency-Key", first, err, http.StatusOK)
					if err != nil || !acknowledged(first.Status) {
						continue
					}
					ack(d, first.Version(), doc)
					again, err := admin.Do(ctx, http.MethodPut, "/v1/documents/"+d.id, RequestOf(doc), h)
					requests.Add(1)
					count("PUT replayed by Idempotency-Key", again, err, http.StatusOK)
					if err == nil && acknowledged(again.Status) && (again.Version() != first.Version() || string(again.Body) != string(first.Body)) {
						p.add("replay differs from the first answer", "%s: first v%d, replay v%d on instance %d", d.id, first.Version(), again.Version(), again.Instance)
					}
				default:
					resp, err := admin.PutDocument(ctx, d.id, doc)
					requests.Add(1)
					count("PUT", resp, err, http.StatusOK)
					if err == nil && acknowledged(resp.Status) {
						ack(d, resp.Version(), doc)
					}
				}
			}
		}()
	}
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(100+r)))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				d := pool[rng.IntN(len(pool))]
				pos := positionOf(d.fund, 0) // in every version
				inv := pos.InvestorID
				var kind, path string
				cl := admin
				switch rng.IntN(9) {
				case 0:
					before := int(d.top.Load())
					var o wire.Overview
					resp, err := admin.GetJSON(ctx, "/v1/documents/"+d.id, &o)
					requests.Add(1)
					count("GET overview", resp, err, http.StatusOK)
					if err == nil && resp.Status == http.StatusOK && o.Version < before {
						p.add("stale read", "%s: overview at v%d after v%d was acknowledged", d.id, o.Version, before)
					}
					continue
				case 1:
					kind, path = "GET versions", "/v1/documents/"+d.id+"/versions"
				case 2:
					kind, path = "GET version", fmt.Sprintf("/v1/documents/%s/versions/%d", d.id, 1+rng.IntN(int(d.top.Load())))
				case 3:
					kind, path = "GET position", "/v1/positions/"+pos.ID
				case 4:
					kind, path = "GET position summary", "/v1/positions/"+pos.ID+"/summary"
				case 5:
					kind, path, cl = "GET position cash flows as investor", "/v1/positions/"+pos.ID+"/cashflows", portals[inv]
				case 6:
					kind, path = "GET fund documents", "/v1/funds/"+d.fund+"/documents"
				case 7:
					kind, path, cl = "GET investor positions as investor", "/v1/investors/"+inv+"/positions", portals[inv]
				default:
					kind, path, cl = "GET investor summary as investor", "/v1/investors/"+inv+"/summary", portals[inv]
				}
				resp, err := cl.Do(ctx, http.MethodGet, path, nil, nil)
				requests.Add(1)
				count(kind, resp, err, http.StatusOK)
			}
		}()
	}
	wg.Wait()
	p.report(t, "during the load")

	// Every acknowledged write, read back at its version.
	verified := 0
	type job struct {
		doc string
		v   int
	}
	var jobs []job
	for doc, vs := range acked {
		for v := range vs {
			jobs = append(jobs, job{doc, v})
		}
	}
	parallel(6, jobs, func(j job) {
		var got wire.DocumentVersion
		if get(ctx, &p, admin, "admin", fmt.Sprintf("/v1/documents/%s/versions/%d", j.doc, j.v), http.StatusOK, &got) {
			if diff := sameContent(acked[j.doc][j.v], got); diff != "" {
				p.add("acknowledged version reads back different", "%s v%d: %s", j.doc, j.v, diff)
				return
			}
			mu.Lock()
			verified++
			mu.Unlock()
		}
	})
	for _, d := range pool {
		var head struct {
			Version int `json:"version"`
		}
		if get(ctx, &p, admin, "admin", "/v1/documents/"+d.id+"/versions/latest", http.StatusOK, &head) && head.Version != int(d.top.Load()) {
			p.add("latest version is not the last acknowledged", "%s at v%d, highest acknowledged v%d", d.id, head.Version, d.top.Load())
		}
	}
	p.report(t, "after the load")

	var fiveXX, refusals int
	for _, byStatus := range statuses {
		for s, n := range byStatus {
			if s >= 500 {
				fiveXX += n
			}
			if s >= 400 && s < 500 {
				refusals += n
			}
		}
	}
	t.Logf("sustained load (seed %d): %d requests in %s by %d writers and %d readers on 3 instances: %d versions acknowledged and %d verified, %d 4xx, %d 5xx; statuses %v",
		seed, requests.Load(), duration, writers, readers, len(jobs), verified, refusals, fiveXX, statuses)
}
