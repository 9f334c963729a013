package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// Records as known at an instant (docs/knownat.md). Every PUT of a record
// writes, in the transaction that replaces the record, an immutable item of
// the version (RecordVersionSK, in the record's partition) stamped with the
// table's clock (RecordedAt), each version's instant strictly after its
// predecessor's. The record item carries its version's instant too, so the
// record in force at an instant is the record itself (one GetItem) when it
// is old enough, and otherwise found by a binary search over the versions'
// items: at most 1 + ⌈log₂ n⌉ GetItems for a record of n versions.

// recordVersion is what one PUT of a record writes: the record, and the
// immutable item of its version.
type recordVersion struct{ record, history any }

// rawItem is a stored item as DynamoDB returns it.
type rawItem map[string]types.AttributeValue

func (r rawItem) MarshalDynamoItem() (map[string]types.AttributeValue, error) { return r, nil }

// storedVersion reads a stored record (nil: none): its version and the
// instant it counts from.
func storedVersion(stored rawItem) (version int, at time.Time) {
	if stored == nil {
		return 0, time.Time{}
	}
	if n, ok := stored["Version"].(*types.AttributeValueMemberN); ok {
		version, _ = strconv.Atoi(n.Value)
	}
	return version, recordInstant(stored)
}

// recordInstant is the instant a stored record version counts from: its
// RecordedAt.
func recordInstant(row rawItem) time.Time {
	s := rowString(row, "RecordedAt")
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// Reads counts the DynamoDB requests a read as known at an instant makes
// and, when Charge is set, pays for them before they are made: each group
// of requests reserves the most it can make first (a fund's months of
// events, a batch of heads, the searches of the documents restated since),
// so a refused charge makes none of them. The caller gives back Unused
// once the read is over. Safe for concurrent use.
type Reads struct {
	// N is the requests made.
	N int
	// Paid is the requests paid for: the caller starts it at what it paid
	// before the read (the api: the request's token, one).
	Paid int
	// Charge, when not nil, pays for n more requests, or refuses them with
	// an error, which the read returns having made none of them.
	Charge func(n int) error

	mu sync.Mutex
}

// reserve pays for up to n requests about to be made, those of them not
// paid for yet; it returns Charge's refusal.
func (r *Reads) reserve(n int) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if short := r.N + n - r.Paid; short > 0 && r.Charge != nil {
		if err := r.Charge(short); err != nil {
			return err
		}
		r.Paid += short
	}
	return nil
}

// spend pays for n requests (reserve) and counts them as made.
func (r *Reads) spend(n int) error {
	if err := r.reserve(n); err != nil || r == nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.N += n
	return nil
}

// Unused is how many requests were paid for and not made.
func (r *Reads) Unused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.Paid-r.N, 0)
}

// recordAt returns the version of the record at pk in force at at, given
// current, the record as stored now (nil: none): nil when it had no record
// then. It reads nothing when current is old enough; otherwise one Query
// of its instant index and one GetItem of the version it names.
func (s *Store) recordAt(ctx context.Context, pk string, current rawItem, at time.Time, reads *Reads) (rawItem, error) {
	if current == nil || !recordInstant(current).After(at) {
		return current, nil
	}
	return s.indexedRecordAt(ctx, pk, at, reads)
}

// indexedRecordAt reads the entry of the record's instant index at or
// before at (one Query of one item), then the version it names (one
// GetItem): nil when there is none, the record being written later.
func (s *Store) indexedRecordAt(ctx context.Context, pk string, at time.Time, reads *Reads) (rawItem, error) {
	var entry Item
	if err := reads.spend(1); err != nil {
		return nil, err
	}
	err := s.table.Get(AttrPK, pk).Range(AttrSK, dynamo.Between, RecordInstantLowSK, RecordInstantSK(at)).
		Order(dynamo.Descending).Limit(1).Consistent(true).One(ctx, &entry)
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the record of %s at %s: %w", pk, at.UTC().Format(time.RFC3339Nano), err)
	}
	var row map[string]types.AttributeValue
	if err := reads.spend(1); err != nil {
		return nil, err
	}
	if err := s.table.Get(AttrPK, pk).Range(AttrSK, dynamo.Equal, RecordVersionSK(entry.Version)).Consistent(true).One(ctx, &row); err != nil {
		return nil, fmt.Errorf("record version %d of %s: %w", entry.Version, pk, err)
	}
	return row, nil
}

// recordInstantItem is a record version's entry in its instant index.
func recordInstantItem(pk string, version int, at time.Time) Item {
	return Item{PK: pk, SK: RecordInstantSK(at), Type: TypeRecordInstant, Version: version, CommittedAt: at}
}

// records reads the records of pks with consistent BatchGets (one per
// 100), keyed by partition: as stored now, or, as known at the view's
// instant, each as in force then (recordAt); pks without a record (then)
// are absent from the answer.
func (r View) records(ctx context.Context, pks []string) (map[string]rawItem, error) {
	out := map[string]rawItem{}
	if len(pks) == 0 {
		return out, nil
	}
	keys := make([]dynamo.Keyed, 0, len(pks))
	for _, pk := range pks {
		keys = append(keys, dynamo.Keys{pk, RecordSK})
	}
	if err := r.reads.spend((len(keys) + 99) / 100); err != nil {
		return nil, err
	}
	rows, err := r.s.batchRows(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		pk := rowString(row, AttrPK)
		if r.rd.Past {
			if row, err = r.s.recordAt(ctx, pk, row, r.rd.KnownAt, r.reads); err != nil {
				return nil, err
			}
		}
		if row != nil {
			out[pk] = row
		}
	}
	return out, nil
}

func fundRecordOf(row rawItem) (*fund.FundRecord, error) {
	var it fundRecordItem
	if err := it.UnmarshalDynamoItem(row); err != nil {
		return nil, err
	}
	return it.record(), nil
}

func investorRecordOf(row rawItem) (*fund.InvestorRecord, error) {
	var it investorRecordItem
	if err := it.UnmarshalDynamoItem(row); err != nil {
		return nil, err
	}
	return it.record(), nil
}

// RecordNames returns the names the records of funds and investors give
// them, by ID (records: one BatchGet per 100, and as known at the view's
// instant a Query and a GetItem for each record replaced since); an ID
// without a record (then) has none. It names what the caller may already
// read, and asks nothing of the viewer.
func (r View) RecordNames(ctx context.Context, funds, investors []string) (map[string]string, map[string]string, error) {
	fundNames, investorNames := map[string]string{}, map[string]string{}
	pks := make([]string, 0, len(funds)+len(investors))
	for _, f := range uniq(funds) {
		pks = append(pks, FundPK(f))
	}
	for _, inv := range uniq(investors) {
		pks = append(pks, InvestorPK(inv))
	}
	recs, err := r.records(ctx, pks)
	if err != nil {
		return nil, nil, fmt.Errorf("names of funds and investors: %w", err)
	}
	for _, row := range recs {
		switch rowString(row, "Type") {
		case TypeFundRecord, TypeFundRecordVersion:
			fundNames[rowString(row, "FundID")] = rowString(row, "Name")
		case TypeInvestorRecord, TypeInvestorRecordVersion:
			investorNames[rowString(row, "InvestorID")] = rowString(row, "DisplayName")
		}
	}
	return fundNames, investorNames, nil
}
