package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"golang.org/x/sync/errgroup"
)

// pool is a set of documents made for this run only, in a fund and with
// positions of their own, that ingest restates: the dataset's documents
// stay as loaded, so later runs read the same table.
type pool struct {
	specs    []docSpec
	versions []int // committed version of each document, for the raw writes

	// revision numbers every restatement's content, so that each one
	// differs from the last.
	revision atomic.Int64
}

// newPool writes version 1 of n documents of the given number of positions
// through the store. tag makes its IDs unique to the run.
func newPool(ctx context.Context, store *store.Store, tag string, n, positions int) (*pool, error) {
	p := &pool{versions: make([]int, n)}
	p.revision.Store(1)
	for k := range n {
		p.specs = append(p.specs, docSpec{
			id: fmt.Sprintf("W%s_%d_D%02d", tag, positions, k), fundID: fmt.Sprintf("W%s_F%d", tag, positions),
			seq: k, posPrefix: fmt.Sprintf("W%s_%d_P", tag, positions), positions: positions,
		})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for k, s := range p.specs {
		g.Go(func() error {
			if _, err := store.Restate(gctx, makeDocument(s, 1), nil); err != nil {
				return fmt.Errorf("create %s: %w", s.id, err)
			}
			p.versions[k] = 1
			return nil
		})
	}
	return p, g.Wait()
}

// next returns a new revision of document k, with a new title and new
// amounts.
func (p *pool) next(k int) fund.Document {
	d := makeDocument(p.specs[k], int(p.revision.Add(1)))
	d.CreatedBy = "servicebench"
	return d
}

// fresh returns version 1 of a new document like document k: an ID and
// positions that no document named before, so its write claims and
// registers every position.
func (p *pool) fresh(k int) fund.Document {
	n := p.revision.Add(1)
	s := p.specs[k]
	s.id = fmt.Sprintf("%s_N%d", s.id, n)
	s.posPrefix = fmt.Sprintf("%sN%d_", s.posPrefix, n)
	d := makeDocument(s, int(n))
	d.CreatedBy = "servicebench"
	return d
}

// refresh reads every document's committed version, before raw writes
// continue from it.
func (p *pool) refresh(ctx context.Context, r *raw) error {
	for k, s := range p.specs {
		v, err := r.headVersion(ctx, s.id)
		if err != nil {
			return err
		}
		p.versions[k] = v
	}
	return nil
}

// apiIngest writes the documents next makes of the pool's (p.next, a
// restatement, or p.fresh, a first version) with PUT, without If-Match;
// each worker writes only its own documents. Each acknowledged write goes
// into commits (nil for none); status is the answer each expects (201
// for a first version) with the instant its answer was read and
// the version its ETag names.
func apiIngest(svc *service, next func(k int) fund.Document, docs int, status int, commits *commitLog) workload {
	return func(w, conc int, rng *rand.Rand) call {
		d := next(owned(rng, docs, conc, w))
		body, err := requestBody(d)
		return func(ctx context.Context) error {
			if err != nil {
				return err
			}
			version, _, err := svc.expect(ctx, status, http.MethodPut, "/v1/documents/"+d.ID, body)
			if err == nil {
				commits.record(d.ID, version, time.Now())
			}
			return err
		}
	}
}

// rawIngest writes the least the table allows for the same documents
// (raw.least).
func rawIngest(r *raw, next func(k int) fund.Document, docs int) workload {
	return func(w, conc int, rng *rand.Rand) call {
		d := next(owned(rng, docs, conc, w))
		return func(ctx context.Context) error { return r.least(ctx, d) }
	}
}
