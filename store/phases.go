package store

import (
	"context"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Phase is one step of a document write (docs/commit-protocol.md). Each
// write counts, per phase, its wall time and the DynamoDB requests it sent
// and the items they wrote or read, so that where a write's time goes is
// on /metrics (fundsvc_write_phase_*) and in make bench's report, and the
// next regression names its phase.
type Phase string

// The phases of a write, in order. Confirm and materialize run side by side.
const (
	PhaseRead        Phase = "read"        // the head and the version it replaces
	PhaseClaim       Phase = "claim"       // the new positions' claims (claims.go)
	PhaseStage       Phase = "stage"       // the version partition and the ledger entries
	PhaseCommit      Phase = "commit"      // the flip
	PhaseConfirm     Phase = "confirm"     // the registry rows of the positions claimed
	PhaseMaterialize Phase = "materialize" // the latest view, read and written
	PhaseFinish      Phase = "finish"      // the head marked materialized
)

// PhaseTotals is what the writes of this process have spent in one phase.
type PhaseTotals struct {
	Seconds  float64 // wall time, summed over writes
	Requests int     // DynamoDB requests sent, each counted once however often retried
	Items    int     // the items those requests wrote, or read
}

// Add returns t + o.
func (t PhaseTotals) Add(o PhaseTotals) PhaseTotals {
	return PhaseTotals{Seconds: t.Seconds + o.Seconds, Requests: t.Requests + o.Requests, Items: t.Items + o.Items}
}

// Sub returns t - o: what was spent between an earlier reading, o, and t.
func (t PhaseTotals) Sub(o PhaseTotals) PhaseTotals {
	return PhaseTotals{Seconds: t.Seconds - o.Seconds, Requests: t.Requests - o.Requests, Items: t.Items - o.Items}
}

// WritePhases is the totals of every phase so far, for a store on a client
// NewDB made (empty otherwise).
func (s *Store) WritePhases() map[Phase]PhaseTotals {
	if mc, ok := s.db.Client().(meteredClient); ok {
		mc.meter.mu.Lock()
		defer mc.meter.mu.Unlock()
		return maps.Clone(mc.meter.phases)
	}
	return map[Phase]PhaseTotals{}
}

type phaseKey struct{}

// enter tags ctx with phase p, so the meter counts its requests there, and
// returns the function that ends the phase and adds its wall time.
func (s *Store) enter(ctx context.Context, p Phase) (context.Context, func()) {
	mc, ok := s.db.Client().(meteredClient)
	if !ok {
		return ctx, func() {}
	}
	start := time.Now()
	return context.WithValue(ctx, phaseKey{}, p), func() {
		mc.meter.addPhase(p, PhaseTotals{Seconds: time.Since(start).Seconds()})
	}
}

func (m *meter) addPhase(p Phase, t PhaseTotals) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.phases == nil {
		m.phases = map[Phase]PhaseTotals{}
	}
	m.phases[p] = m.phases[p].Add(t)
}

// countPhase adds one request of a tagged context to its phase: the items
// its input writes, or its output read.
func (m *meter) countPhase(ctx context.Context, in, out any) {
	p, ok := ctx.Value(phaseKey{}).(Phase)
	if !ok {
		return
	}
	n := 0
	switch v := in.(type) {
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range v.RequestItems {
			n += len(reqs)
		}
	case *dynamodb.TransactWriteItemsInput:
		n = len(v.TransactItems)
	case *dynamodb.PutItemInput, *dynamodb.UpdateItemInput, *dynamodb.DeleteItemInput:
		n = 1
	}
	switch v := out.(type) {
	case *dynamodb.GetItemOutput:
		if v.Item != nil {
			n = 1
		}
	case *dynamodb.QueryOutput:
		n = int(v.Count)
	case *dynamodb.BatchGetItemOutput:
		for _, items := range v.Responses {
			n += len(items)
		}
	}
	m.addPhase(p, PhaseTotals{Requests: 1, Items: n})
}
