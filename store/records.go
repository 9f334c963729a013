package store

import (
	"context"
	"encoding/json"
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
		prev, prevAt, legacy := storedVersion(stored)
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
		if legacy != nil {
			tx = tx.Put(s.table.Put(legacy).If("attribute_not_exists($)", AttrPK))
		}
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

// Funds returns the funds of ids that exist, by a record or by documents,
// in the order of ids: one BatchGet of their fund items and records
// (consistent). An ID repeated in ids is read once.
func (s *Store) Funds(ctx context.Context, ids []string) ([]fund.Fund, error) {
	ids = uniq(ids)
	if len(ids) == 0 {
		return []fund.Fund{}, nil
	}
	keys := make([]dynamo.Keyed, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, dynamo.Keys{FundPK(id), FundSK}, dynamo.Keys{FundPK(id), RecordSK})
	}
	rows, err := s.batchRows(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("funds: %w", err)
	}
	found := map[string]*fund.Fund{}
	for _, row := range rows {
		id := rowString(row, "FundID")
		f := found[id]
		if f == nil {
			f = &fund.Fund{ID: id}
			found[id] = f
		}
		if rowString(row, "Type") == TypeFundRecord {
			var it fundRecordItem
			if err := it.UnmarshalDynamoItem(row); err != nil {
				return nil, fmt.Errorf("record of fund %s: %w", id, err)
			}
			f.Record = it.record()
		}
	}
	out := []fund.Fund{}
	for _, id := range ids {
		if f := found[id]; f != nil {
			out = append(out, *f)
		}
	}
	return out, nil
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

// InvestorRegistered reports whether investor inv has a record or holds a
// position of a fund, by one Query of its registry partition (GSI1,
// eventually consistent) for one row.
func (s *Store) InvestorRegistered(ctx context.Context, inv string) (bool, error) {
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

// FundInvestors returns a page of the investors holding positions of
// fundID, by investor ID: one Query of the fund's notes.
func (s *Store) FundInvestors(ctx context.Context, fundID string, limit int, start PageKey) ([]string, PageKey, error) {
	q := s.table.Get(AttrPK, FundPK(fundID)).Range(AttrSK, dynamo.BeginsWith, FundInvestorPrefix).Consistent(true)
	items, next, err := queryPage(ctx, q, "", limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("investors of fund %s: %w", fundID, err)
	}
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, items[i].InvestorID)
	}
	return out, next, nil
}

// InvestorFunds returns a page of the funds investor inv holds positions
// of, by fund ID: one Query of its notes in its registry partition.
func (s *Store) InvestorFunds(ctx context.Context, inv string, limit int, start PageKey) ([]string, PageKey, error) {
	q := s.table.Get(AttrGSI1PK, InvestorsGSI1PK(inv)).Index(IndexGSI1).
		Range(AttrGSI1SK, dynamo.BeginsWith, FundInvestorGSI1SK(inv, ""))
	items, next, err := queryPage(ctx, q, IndexGSI1, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("funds of investor %s: %w", inv, err)
	}
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, items[i].FundID)
	}
	return out, next, nil
}

// registry is the sharded GSI1 registry of funds or of investors.
type registry struct {
	shard  func(int) string // the partition key of a shard
	prefix string           // of every sort key: FUND# or INVESTOR#
	id     func(*Item) string
}

var (
	fundRegistry     = registry{shard: FundsShardGSI1PK, prefix: "FUND#", id: func(it *Item) string { return it.FundID }}
	investorRegistry = registry{shard: InvestorsShardGSI1PK, prefix: "INVESTOR#", id: func(it *Item) string { return it.InvestorID }}
)

// registryCursor is where a registry listing resumes: a shard, and the last
// ID listed in it.
type registryCursor struct {
	Shard int    `json:"shard"`
	After string `json:"after,omitempty"`
}

// maxRegistryRequests bounds the Queries of one registry page: a page goes
// through shards, and an entity of many rows (an investor in many funds)
// may fill a request with one ID.
const maxRegistryRequests = RegistryShards + 4

// page lists up to limit IDs, shard by shard and by ID within a shard. Each
// ID is listed once: its rows sort together (its record first), and the
// next request starts after the last of them. A page may hold fewer than
// limit IDs, even none, while next is not nil.
func (r registry) page(ctx context.Context, s *Store, limit int, start PageKey) ([]string, PageKey, error) {
	var cur registryCursor
	if len(start) > 0 {
		if err := json.Unmarshal(start, &cur); err != nil || cur.Shard < 0 || cur.Shard >= RegistryShards {
			return nil, nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
		}
	}
	ids := []string{}
	for range maxRegistryRequests {
		q := s.table.Get(AttrGSI1PK, r.shard(cur.Shard)).Index(IndexGSI1)
		if cur.After != "" {
			// "$" sorts after the "#" that ends an ID in a sort key and
			// before every character of an ID.
			q = q.Range(AttrGSI1SK, dynamo.Greater, r.prefix+cur.After+"$")
		} else {
			q = q.Range(AttrGSI1SK, dynamo.BeginsWith, r.prefix)
		}
		iter := q.SearchLimit(limit - len(ids) + 1).RequestLimit(1).Iter()
		rows, err := collect(ctx, iter)
		if err != nil {
			return nil, nil, err
		}
		for i := range rows {
			id := r.id(&rows[i])
			if id == "" || id == cur.After {
				continue
			}
			if len(ids) == limit {
				return ids, registryKey(cur), nil
			}
			ids, cur.After = append(ids, id), id
		}
		lek, err := iter.LastEvaluatedKey(ctx)
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return nil, nil, err
		}
		if lek == nil {
			if cur.Shard+1 == RegistryShards {
				return ids, nil, nil
			}
			cur = registryCursor{Shard: cur.Shard + 1}
		}
		if len(ids) == limit {
			return ids, registryKey(cur), nil
		}
	}
	return ids, registryKey(cur), nil
}

func registryKey(c registryCursor) PageKey {
	b, _ := json.Marshal(c) // an int and a string always encode
	return b
}

// AllFunds returns a page of the IDs of every fund, of a record or of
// documents, from the funds' registry (GSI1, eventually consistent).
func (s *Store) AllFunds(ctx context.Context, limit int, start PageKey) ([]string, PageKey, error) {
	ids, next, err := fundRegistry.page(ctx, s, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("funds: %w", err)
	}
	return ids, next, nil
}

// AllInvestors returns a page of the IDs of every investor, of a record or
// of positions, from the investors' registry (GSI1, eventually consistent).
func (s *Store) AllInvestors(ctx context.Context, limit int, start PageKey) ([]string, PageKey, error) {
	ids, next, err := investorRegistry.page(ctx, s, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("investors: %w", err)
	}
	return ids, next, nil
}

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

// RecordNames returns the names the records of funds and investors give
// them, by ID, with one consistent BatchGet; an ID without a record has
// none.
func (s *Store) RecordNames(ctx context.Context, funds, investors []string) (map[string]string, map[string]string, error) {
	fundNames, investorNames := map[string]string{}, map[string]string{}
	funds, investors = uniq(funds), uniq(investors)
	keys := make([]dynamo.Keyed, 0, len(funds)+len(investors))
	for _, f := range funds {
		keys = append(keys, dynamo.Keys{FundPK(f), RecordSK})
	}
	for _, inv := range investors {
		keys = append(keys, dynamo.Keys{InvestorPK(inv), RecordSK})
	}
	if len(keys) == 0 {
		return fundNames, investorNames, nil
	}
	rows, err := s.batchRows(ctx, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("names of funds and investors: %w", err)
	}
	for _, row := range rows {
		switch rowString(row, "Type") {
		case TypeFundRecord:
			fundNames[rowString(row, "FundID")] = rowString(row, "Name")
		case TypeInvestorRecord:
			investorNames[rowString(row, "InvestorID")] = rowString(row, "DisplayName")
		}
	}
	return fundNames, investorNames, nil
}

// The records as a viewer sees them: an administrator writes and reads the
// records of the funds it covers and of the investors holding positions of
// them (every investor, for an administrator of every fund); an investor
// reads its own record and those of the funds it holds positions of. What
// the viewer may not see is answered as unknown, decided before the record
// is read.

func investorNotFound(inv string) error {
	return fund.Errorf(fund.ENOTFOUND, "investor %s not found", inv)
}

// MayWriteFund returns ENOTFOUND, as for an unknown fund, unless the viewer
// administers fundID; it reads nothing.
func (r View) MayWriteFund(fundID string) error { return r.FundVisible(fundID) }

// Fund returns fundID as the viewer sees it: ENOTFOUND for a fund that has
// neither a record nor a document, and for one the viewer may not read (an
// administrator's, decided before any read; an investor's, after one
// BatchGet of its note in the fund). As known at the view's instant: fundAt.
func (r View) Fund(ctx context.Context, fundID string) (fund.Fund, error) {
	if r.rd.Past {
		return r.fundAt(ctx, fundID)
	}
	if r.rd.Investor != "" {
		held, err := r.s.HoldsPositionIn(ctx, r.rd.Investor, []string{fundID})
		if err != nil {
			return fund.Fund{}, err
		}
		if len(held) == 0 {
			return fund.Fund{}, fundNotFound(fundID)
		}
	} else if err := r.FundVisible(fundID); err != nil {
		return fund.Fund{}, err
	}
	fs, err := r.s.Funds(ctx, []string{fundID})
	if err != nil {
		return fund.Fund{}, err
	}
	if len(fs) == 0 {
		return fund.Fund{}, fundNotFound(fundID)
	}
	return fs[0], nil
}

// FundsPage returns a page of the funds the viewer may read, with their
// records: for an administrator of every fund, every fund, from the
// registry; for an administrator of some funds, those of them that exist,
// by ID; for an investor, the funds it holds positions of, by ID. Then one
// BatchGet of the page's funds. A page may hold fewer than limit funds
// while next is not nil. As known at the view's instant: fundsPageAt.
func (r View) FundsPage(ctx context.Context, limit int, start PageKey) ([]fund.Fund, PageKey, error) {
	if r.rd.Past {
		return r.fundsPageAt(ctx, limit, start)
	}
	var ids []string
	var next PageKey
	var err error
	switch {
	case r.rd.Investor != "":
		ids, next, err = r.s.InvestorFunds(ctx, r.rd.Investor, limit, start)
	case r.rd.AllFunds:
		ids, next, err = r.s.AllFunds(ctx, limit, start)
	default:
		ids, next, err = listPage(r.rd.Funds, limit, start)
	}
	if err != nil {
		return nil, nil, err
	}
	fs, err := r.s.Funds(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	return fs, next, nil
}

// listPage pages through a token's own list of IDs, sorted: the page key is
// the last ID listed.
func listPage(all []string, limit int, start PageKey) ([]string, PageKey, error) {
	sorted := slices.Sorted(slices.Values(uniq(all)))
	var after string
	if len(start) > 0 {
		if err := json.Unmarshal(start, &after); err != nil || after == "" {
			return nil, nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
		}
	}
	i, _ := slices.BinarySearch(sorted, after)
	if i < len(sorted) && sorted[i] == after {
		i++
	}
	sorted = sorted[i:]
	if len(sorted) <= limit {
		return sorted, nil, nil
	}
	b, _ := json.Marshal(sorted[limit-1])
	return sorted[:limit], b, nil
}

// mayReadInvestor returns ENOTFOUND unless the viewer may read inv's
// record: an investor its own, an administrator of every fund any, an
// administrator of some funds those holding positions of them (one
// BatchGet of the investor's notes in them).
func (r View) mayReadInvestor(ctx context.Context, inv string) error {
	switch {
	case r.rd.Investor != "":
		if inv != r.rd.Investor {
			return investorNotFound(inv)
		}
	case !r.rd.AllFunds:
		held, err := r.s.HoldsPositionIn(ctx, inv, r.rd.Funds)
		if err != nil {
			return err
		}
		if len(held) == 0 {
			return investorNotFound(inv)
		}
	}
	return nil
}

// MayWriteInvestor returns ENOTFOUND unless the viewer, an administrator,
// may write inv's record: an administrator of every fund any investor's,
// an administrator of some funds those of the investors holding positions
// of them.
func (r View) MayWriteInvestor(ctx context.Context, inv string) error {
	if r.rd.Investor != "" {
		return &fund.Error{Code: fund.EFORBIDDEN, Message: "investor tokens may not write records"}
	}
	return r.mayReadInvestor(ctx, inv)
}

// Investor returns inv as the viewer sees it: ENOTFOUND for an investor
// that has neither a record nor a position, and for one the viewer may not
// read (decided before its record is read). As known at the view's
// instant: investorAt.
func (r View) Investor(ctx context.Context, inv string) (fund.Investor, error) {
	if r.rd.Past {
		return r.investorAt(ctx, inv)
	}
	if err := r.mayReadInvestor(ctx, inv); err != nil {
		return fund.Investor{}, err
	}
	is, err := r.s.Investors(ctx, []string{inv}, false)
	if err != nil {
		return fund.Investor{}, err
	}
	if len(is) > 0 {
		return is[0], nil
	}
	// No record: the investor is known from its positions. An administrator
	// of some funds has seen its note; the others ask the registry.
	if r.rd.AllFunds || r.rd.Investor != "" {
		ok, err := r.s.InvestorRegistered(ctx, inv)
		if err != nil {
			return fund.Investor{}, err
		}
		if !ok {
			return fund.Investor{}, investorNotFound(inv)
		}
	}
	return fund.Investor{ID: inv}, nil
}

// InvestorsPage returns a page of investors with their records: with
// fundID, those holding positions of it (the viewer must administer it:
// ENOTFOUND otherwise, and for a fund that does not exist); without, every
// investor, for an administrator of every fund (EINVALID on fundId for any
// other viewer). As known at the view's instant: investorsPageAt.
func (r View) InvestorsPage(ctx context.Context, fundID string, limit int, start PageKey) ([]fund.Investor, PageKey, error) {
	if r.rd.Past {
		return r.investorsPageAt(ctx, fundID, limit, start)
	}
	var ids []string
	var next PageKey
	var err error
	switch {
	case fundID != "":
		if err := r.FundVisible(fundID); err != nil {
			return nil, nil, err
		}
		ids, next, err = r.s.FundInvestors(ctx, fundID, limit, start)
		if err == nil && len(ids) == 0 && start == nil {
			var fs []fund.Fund
			if fs, err = r.s.Funds(ctx, []string{fundID}); err == nil && len(fs) == 0 {
				err = fundNotFound(fundID)
			}
		}
	case r.rd.AllFunds && r.rd.Investor == "":
		ids, next, err = r.s.AllInvestors(ctx, limit, start)
	default:
		err = fund.Invalid("fundId", "is required: your token does not cover every fund, so name one of its funds")
	}
	if err != nil {
		return nil, nil, err
	}
	is, err := r.s.Investors(ctx, ids, true)
	if err != nil {
		return nil, nil, err
	}
	return is, next, nil
}
