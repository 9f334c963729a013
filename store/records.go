package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// Records of funds and investors (fund/records.go). A fund's record is the
// item FUND#<fund>/RECORD beside the fund item its documents write; an
// investor's is INVESTOR#<inv>/RECORD; and a note FUND#<fund>/INVESTOR#<inv>,
// written with the position claims a committed document confirms, says
// that the investor holds a position of the fund, which is what lets an
// investor read the fund, a fund's administrator read the investor, and a
// fund's investors be listed with one Query. Records, fund items and notes
// carry GSI1 keys in the sharded registries of funds and of investors
// (keys.go), so that every fund and every investor, of a record or only of
// documents, is listed without a Scan.

// fundRecordItem is a fund's record as stored.
type fundRecordItem struct {
	PK, SK          string
	GSI1PK, GSI1SK  string
	Type            string
	FundID          string
	fund.FundFields `dynamo:",omitempty"`
	Version         int
	UpdatedAt       time.Time
	UpdatedBy       string
	// RecordedAt is the instant the version was written by the table's
	// clock (knownat_records.go); zero on a version written before it was
	// kept, which counts from UpdatedAt.
	RecordedAt time.Time `dynamo:",omitempty"`
}

// investorRecordItem is an investor's record as stored.
type investorRecordItem struct {
	PK, SK              string
	GSI1PK, GSI1SK      string
	Type                string
	InvestorID          string
	fund.InvestorFields `dynamo:",omitempty"`
	Version             int
	UpdatedAt           time.Time
	UpdatedBy           string
	RecordedAt          time.Time `dynamo:",omitempty"` // as fundRecordItem's
}

var (
	fundRecordCodec     = newStructCodec(reflect.TypeFor[fundRecordItem]())
	investorRecordCodec = newStructCodec(reflect.TypeFor[investorRecordItem]())
)

func (it fundRecordItem) MarshalDynamoItem() (map[string]types.AttributeValue, error) {
	return fundRecordCodec.encode(reflect.ValueOf(&it).Elem()), nil
}

func (it *fundRecordItem) UnmarshalDynamoItem(av map[string]types.AttributeValue) error {
	*it = fundRecordItem{}
	return fundRecordCodec.decode(av, reflect.ValueOf(it).Elem())
}

func (it investorRecordItem) MarshalDynamoItem() (map[string]types.AttributeValue, error) {
	return investorRecordCodec.encode(reflect.ValueOf(&it).Elem()), nil
}

func (it *investorRecordItem) UnmarshalDynamoItem(av map[string]types.AttributeValue) error {
	*it = investorRecordItem{}
	return investorRecordCodec.decode(av, reflect.ValueOf(it).Elem())
}

func (it *fundRecordItem) record() *fund.FundRecord {
	return &fund.FundRecord{FundFields: it.FundFields, Version: it.Version, UpdatedAt: it.UpdatedAt, UpdatedBy: it.UpdatedBy}
}

func (it *investorRecordItem) record() *fund.InvestorRecord {
	return &fund.InvestorRecord{InvestorFields: it.InvestorFields, Version: it.Version, UpdatedAt: it.UpdatedAt, UpdatedBy: it.UpdatedBy}
}

// putAttempts bounds the retries of a record write without If-Match that
// lost a race: each retry reads the version the winner wrote.
const putAttempts = 5

// putRecord writes the next version of the record at pk: it reads the
// stored version (one consistent GetItem), checks ifMatch against it
// (nil: any, AnyVersion: a record must exist), and puts item(version+1,
// at) on the condition that the version is still the one read, in one
// transaction with the version's immutable item (knownat_records.go),
// which keeps every version readable as known at an instant. at is the
// table's clock, strictly after the stored version's instant. A record
// stored before versions were kept has its version's item written too,
// counting from its UpdatedAt. Without ifMatch a lost race is retried, so
// writers are serialized and no version is lost; with it, the loser gets
// EPRECONDITION.
func (s *Store) putRecord(ctx context.Context, what, id, pk string, ifMatch *int, item func(version int, at time.Time) recordVersion) (int, error) {
	for range putAttempts {
		var stored map[string]types.AttributeValue
		err := s.table.Get(AttrPK, pk).Range(AttrSK, dynamo.Equal, RecordSK).Consistent(true).One(ctx, &stored)
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return 0, fmt.Errorf("%s %s: %w", what, id, err)
		}
		prev, prevAt := storedVersion(stored)
		if ifMatch != nil {
			switch {
			case *ifMatch == AnyVersion && prev == 0:
				return 0, fund.Errorf(fund.EPRECONDITION, "If-Match: * but %s %s has no record", what, id)
			case *ifMatch != AnyVersion && *ifMatch != prev:
				return 0, fund.Errorf(fund.EPRECONDITION, "If-Match names version %d, but the record of %s %s is at version %d", *ifMatch, what, id, prev)
			}
		}
		at := s.Now().UTC()
		if prev > 0 && !at.After(prevAt) {
			// A version's instant follows its predecessor's even when this
			// process's clock lags, so versions are known in version order.
			at = prevAt.Add(time.Millisecond)
		}
		// A record's instant is at or after the feed's start too, the
		// floor of reads as known at an instant (BeforeFeed).
		if err := s.recordEventsStart(ctx, at); err != nil {
			return 0, err
		}
		rec := item(prev+1, at)
		put := s.table.Put(rec.record)
		if prev == 0 {
			put = put.If("attribute_not_exists($)", AttrPK)
		} else {
			put = put.If("$ = ?", "Version", prev)
		}
		tx := s.db.WriteTx().Put(put).Put(s.table.Put(rec.history).If("attribute_not_exists($)", AttrPK)).
			Put(s.table.Put(recordInstantItem(pk, prev+1, at)))
		err = tx.Run(ctx)
		switch {
		case err == nil:
			return prev + 1, nil
		case !dynamo.IsCondCheckFailed(err):
			return 0, fmt.Errorf("put the record of %s %s: %w", what, id, err)
		case ifMatch != nil:
			return 0, fund.Errorf(fund.EPRECONDITION, "another writer replaced the record of %s %s first; read it again", what, id)
		}
	}
	return 0, fund.Errorf(fund.ECONFLICT, "too many writers raced for the record of %s %s; retry", what, id)
}

// PutFundRecord stores f as the next version of fundID's record, written
// at now by subject by (see putRecord for ifMatch).
func (s *Store) PutFundRecord(ctx context.Context, fundID string, f fund.FundFields, ifMatch *int, by string, now time.Time) (fund.FundRecord, error) {
	var it fundRecordItem
	v, err := s.putRecord(ctx, "fund", fundID, FundPK(fundID), ifMatch, func(version int, at time.Time) recordVersion {
		it = fundRecordItem{PK: FundPK(fundID), SK: RecordSK, GSI1PK: FundsGSI1PK(fundID), GSI1SK: FundRecordGSI1SK(fundID),
			Type: TypeFundRecord, FundID: fundID, FundFields: f, Version: version, UpdatedAt: now.UTC(), UpdatedBy: by, RecordedAt: at}
		h := it
		h.SK, h.GSI1PK, h.GSI1SK, h.Type = RecordVersionSK(version), "", "", TypeFundRecordVersion
		return recordVersion{record: it, history: h}
	})
	if err != nil {
		return fund.FundRecord{}, err
	}
	it.Version = v
	return *it.record(), nil
}

// PutInvestorRecord stores f as the next version of inv's record (see
// PutFundRecord).
func (s *Store) PutInvestorRecord(ctx context.Context, inv string, f fund.InvestorFields, ifMatch *int, by string, now time.Time) (fund.InvestorRecord, error) {
	var it investorRecordItem
	v, err := s.putRecord(ctx, "investor", inv, InvestorPK(inv), ifMatch, func(version int, at time.Time) recordVersion {
		it = investorRecordItem{PK: InvestorPK(inv), SK: RecordSK, GSI1PK: InvestorsGSI1PK(inv), GSI1SK: InvestorRecordGSI1SK(inv),
			Type: TypeInvestorRecord, InvestorID: inv, InvestorFields: f, Version: version, UpdatedAt: now.UTC(), UpdatedBy: by, RecordedAt: at}
		h := it
		h.SK, h.GSI1PK, h.GSI1SK, h.Type = RecordVersionSK(version), "", "", TypeInvestorRecordVersion
		return recordVersion{record: it, history: h}
	})
	if err != nil {
		return fund.InvestorRecord{}, err
	}
	it.Version = v
	return *it.record(), nil
}

// Investors returns the investors of ids that have a record, in the order
// of ids, with one consistent BatchGet; the others are returned by ID
// alone when known is true, left out otherwise.
func (s *Store) Investors(ctx context.Context, ids []string, known bool) ([]fund.Investor, error) {
	ids = uniq(ids)
	if len(ids) == 0 {
		return []fund.Investor{}, nil
	}
	keys := make([]dynamo.Keyed, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, dynamo.Keys{InvestorPK(id), RecordSK})
	}
	rows, err := s.batchRows(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("investors: %w", err)
	}
	records := map[string]*fund.InvestorRecord{}
	for _, row := range rows {
		var it investorRecordItem
		if err := it.UnmarshalDynamoItem(row); err != nil {
			return nil, fmt.Errorf("record of investor %s: %w", rowString(row, "InvestorID"), err)
		}
		records[it.InvestorID] = it.record()
	}
	out := []fund.Investor{}
	for _, id := range ids {
		if r := records[id]; r != nil || known {
			out = append(out, fund.Investor{ID: id, Record: r})
		}
	}
	return out, nil
}

// investorRegistered reports whether investor inv has a record or holds a
// position of a fund, by one Query of its registry partition (GSI1,
// eventually consistent) for one row.
func (s *Store) investorRegistered(ctx context.Context, inv string) (bool, error) {
	var rows []Item
	err := s.table.Get(AttrGSI1PK, InvestorsGSI1PK(inv)).Index(IndexGSI1).
		Range(AttrGSI1SK, dynamo.BeginsWith, InvestorRecordGSI1SK(inv)).SearchLimit(1).RequestLimit(1).All(ctx, &rows)
	if err != nil {
		return false, fmt.Errorf("investor %s: %w", inv, err)
	}
	return len(rows) > 0, nil
}

// HoldsPositionIn reports, with one consistent BatchGet, which of funds
// investor inv holds a position of.
func (s *Store) HoldsPositionIn(ctx context.Context, inv string, funds []string) ([]string, error) {
	funds = uniq(funds)
	if len(funds) == 0 {
		return nil, nil
	}
	keys := make([]dynamo.Keyed, 0, len(funds))
	for _, f := range funds {
		keys = append(keys, dynamo.Keys{FundPK(f), FundInvestorSK(inv)})
	}
	rows, err := s.batchRows(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("funds of investor %s: %w", inv, err)
	}
	var out []string
	for _, row := range rows {
		out = append(out, rowString(row, "FundID"))
	}
	slices.Sort(out)
	return out, nil
}

var (
	fundRegistry     = registry{shard: FundsShardGSI1PK, prefix: "FUND#", id: func(it *Item) string { return it.FundID }}
	investorRegistry = registry{shard: InvestorsShardGSI1PK, prefix: "INVESTOR#", id: func(it *Item) string { return it.InvestorID }}
)

// batchRows reads keys with consistent BatchGets, as raw items.
func (s *Store) batchRows(ctx context.Context, keys []dynamo.Keyed) ([]map[string]types.AttributeValue, error) {
	var rows []map[string]types.AttributeValue
	err := s.table.Batch(AttrPK, AttrSK).Get(keys...).Consistent(true).All(ctx, &rows)
	if errors.Is(err, dynamo.ErrNotFound) {
		err = nil
	}
	return rows, err
}

// rowString is a string attribute of a raw item, "" when absent.
func rowString(row map[string]types.AttributeValue, name string) string {
	s, _ := row[name].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// uniq returns ids without repeats, in their first order.
func uniq(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// The records as a viewer sees them: an administrator writes and reads the
// records of the funds it covers and of the investors holding positions of
// them (every investor, for an administrator of every fund); an investor
// reads its own record and those of the funds it holds positions of. What
// the viewer may not see is answered as unknown, decided before the record
// is read.
