package store

import (
	"github.com/fundsvc/fundsvc/fund"

	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"
)

// queryAll runs q to its end, page by page, and returns its items. Each is
// decoded by Item's own decoder into one slice: guregu's All allocates and
// appends every item through reflection, which cost as much as decoding on
// reads of hundreds of items.
func queryAll(ctx context.Context, q *dynamo.Query) ([]Item, error) {
	return collectOf[Item](ctx, q.Iter())
}

// pageRequests bounds the DynamoDB requests one page may take: a filter,
// or the 1 MB cap of a response, may stop a request before it found the
// page's items.
const pageRequests = 3

// queryPage reads one page of at most limit items of q, a Query of the table
// or of index (IndexGSI1, IndexGSI2; "" for the table), resuming at start. It
// returns the items and the key to resume from, which is nil when no item
// follows, so a last page never leads to an empty one. DynamoDB returns a
// LastEvaluatedKey whenever a request stops at its Limit, even on the last
// item, so each page asks for one item more than it holds, and only that
// item proves that another page exists. When a filter leaves fewer than
// that, up to pageRequests requests fill the page; after them the key may
// lead to a page that the filter leaves empty.
func queryPage(ctx context.Context, q *dynamo.Query, index string, limit int, start PageKey) ([]Item, PageKey, error) {
	return queryPageOf[Item](ctx, q, index, limit, start)
}

// paged is what queryPageOf reads a page of: an item that decodes itself
// and gives the key a page ending on it resumes after.
type paged[T any] interface {
	*T
	dynamo.ItemUnmarshaler
	pageKey(index string) PageKey
}

// queryPageOf is queryPage of items of type T: decoded Items, or the
// StoredItems whose answers a reader memoizes (stored.go).
func queryPageOf[T any, P paged[T]](ctx context.Context, q *dynamo.Query, index string, limit int, start PageKey) ([]T, PageKey, error) {
	from, err := paging(start)
	if err != nil {
		return nil, nil, err
	}
	var items []T
	for range pageRequests {
		if from != nil {
			q = q.StartFrom(from)
		}
		// One request, consumed whole, so the LastEvaluatedKey is DynamoDB's
		// own and never needs a DescribeTable to infer.
		iter := q.SearchLimit(limit + 1 - len(items)).RequestLimit(1).Iter()
		got, err := collectOf[T, P](ctx, iter)
		if err != nil {
			return nil, nil, err
		}
		items = append(items, got...)
		if len(items) > limit {
			return items[:limit], P(&items[limit-1]).pageKey(index), nil
		}
		from, err = iter.LastEvaluatedKey(ctx)
		if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
			return nil, nil, err
		}
		if from == nil {
			return items, nil, nil
		}
	}
	return items, pageKeyOf(from), nil
}

// collectOf reads iter to its end and returns its items, each a T.
func collectOf[T any, P paged[T]](ctx context.Context, iter dynamo.PagingIter) ([]T, error) {
	var items []T
	var it T // an Item's UnmarshalDynamoItem clears it first
	for iter.Next(ctx, P(&it)) {
		items = append(items, it)
	}
	return items, iter.Err()
}

// OverviewHistory is how many earlier versions an overview lists (their
// document and capital activity records), which the head carries
// (recent.go); the versions route lists every one.
const OverviewHistory = 20

// Snapshot is one consistent version of a document with its history.
type Snapshot struct {
	Document   fund.Document         // the latest committed version, with its positions
	History    []fund.DocumentHeader // the OverviewHistory latest earlier versions' records (without commit IDs), by asOf then version
	Activities []fund.ActivityRecord // their capital activities, by date then version
	// FromVersion is true when the latest view was being rewritten and the
	// snapshot was read from the committed version's own partition instead.
	FromVersion bool
}

// partition sorts the items of a document partition by role.
type partition struct {
	head, latestDoc, latestActivity *Item
	positions                       []*Item // live and tombstoned
}

func classify(items []Item) partition {
	var p partition
	for i := range items {
		it := &items[i]
		switch {
		case it.SK == HeadSK:
			p.head = it
		case it.SK == DocumentLatestSK:
			p.latestDoc = it
		case it.SK == CapitalActivityLatestSK:
			p.latestActivity = it
		default:
			if _, ok := ItemKindOfType(it.Type); ok {
				p.positions = append(p.positions, it)
			}
		}
	}
	return p
}

// consistent reports whether the latest-view items read show exactly the
// head's version: the head was materialized, every live item carries its
// version and no tombstone is newer. Any write of a later version is seen as
// a mismatch, so a mixed read is never accepted.
func (p *partition) consistent() bool {
	h := p.head
	if h == nil || !h.Materialized {
		return false
	}
	for _, it := range []*Item{p.latestDoc, p.latestActivity} {
		if it != nil && it.Version != h.Version {
			return false
		}
	}
	for _, it := range p.positions {
		if (!it.Tombstone && it.Version != h.Version) || it.Version > h.Version {
			return false
		}
	}
	return true
}

func (p *partition) livePositions() []fund.PositionItem {
	out := make([]fund.PositionItem, 0, len(p.positions))
	for _, it := range p.positions {
		if !it.Tombstone {
			out = append(out, it.PositionItem())
		}
	}
	return out
}

func notFound(doc string) error { return fund.Errorf(fund.ENOTFOUND, "document %s not found", doc) }

// Overview returns the latest version of a document with the records of
// its OverviewHistory latest earlier versions, read with one Query of the
// latest view (SK < HistoryStart, followed page by page for documents
// larger than one response): the head it reads first carries those
// records (recent.go), so the Query reads no history record and costs
// the same however often the document was restated. If that read catches
// the latest view mid-rewrite, the committed version is read from its own
// partition instead. As known at the view's instant: overviewAt. It
// returns ENOTFOUND for an unknown document and for one of a fund the
// viewer does not cover.
func (r View) Overview(ctx context.Context, doc string) (Snapshot, error) {
	if r.rd.Past {
		return r.overviewAt(ctx, doc)
	}
	if err := r.authorize(ctx, doc); err != nil {
		return Snapshot{}, err
	}
	s := r.s
	items, err := queryAll(ctx, s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Less, HistoryStart).Consistent(true))
	if err != nil {
		return Snapshot{}, fmt.Errorf("overview of document %s: %w", doc, err)
	}
	p := classify(items)
	if p.head == nil || p.latestDoc == nil {
		return Snapshot{}, notFound(doc)
	}
	snap := Snapshot{}
	if err := s.earlierVersions(ctx, doc, p.head, p.head.Version, &snap); err != nil {
		return Snapshot{}, err
	}
	if p.consistent() {
		snap.Document = assemble(p.latestDoc.Header(), p.latestActivity, p.livePositions())
	} else {
		d, err := s.readVersion(ctx, doc, p.head.CommitID)
		if err != nil {
			return Snapshot{}, err
		}
		snap.Document, snap.FromVersion = d, true
	}
	if err := r.visible(doc, snap.Document.FundID, nil); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// earlierVersions sets the snapshot's records of the OverviewHistory
// versions below version below (the head's, or the one known at an
// instant, knownat.go): from the head's recent versions when they hold
// them all; otherwise from one Query of each prefix of the history
// records, OverviewHistory of them at most.
func (s *Store) earlierVersions(ctx context.Context, doc string, head *Item, below int, snap *Snapshot) error {
	oldest := below - OverviewHistory
	recent, err := decodeRecent(head.Recent)
	if err != nil {
		return fmt.Errorf("document %s: the head's recent versions: %w", doc, err)
	}
	var history []fund.DocumentHeader
	var activities []fund.ActivityRecord
	for i := range recent {
		r := &recent[i]
		if r.Version >= below || r.Version < oldest {
			continue
		}
		history = append(history, r.header(doc))
		if r.Activity != nil {
			activities = append(activities, fund.ActivityRecord{CapitalActivity: *r.Activity, Version: r.Version})
		}
	}
	// The recent versions hold every version wanted, or the versions
	// below the head's are read from their records.
	if below == head.Version || len(history) == below-max(oldest, 1) {
		snap.History, snap.Activities = history, activities
	} else {
		docs, err := s.versionRecords(ctx, doc, DocumentVersionPrefix, max(oldest, 1), below-1)
		if err != nil {
			return err
		}
		activities, err := s.versionRecords(ctx, doc, ActivityVersionPrefix, max(oldest, 1), below-1)
		if err != nil {
			return err
		}
		for _, h := range docs {
			h.CommitID = "" // as the recent versions hold it: no answer shows it
			snap.History = append(snap.History, h.Header())
		}
		for _, a := range activities {
			snap.Activities = append(snap.Activities, a.Activity())
		}
	}
	// By date then version, which the answers keep.
	slices.SortFunc(snap.History, func(a, b fund.DocumentHeader) int {
		return cmp.Or(a.AsOf.Compare(b.AsOf), cmp.Compare(a.Version, b.Version))
	})
	slices.SortFunc(snap.Activities, func(a, b fund.ActivityRecord) int {
		return cmp.Or(a.ActivityDate.Compare(b.ActivityDate), cmp.Compare(a.Version, b.Version))
	})
	return nil
}

// readVersion reads one version whole from its immutable partition.
func (s *Store) readVersion(ctx context.Context, doc, commitID string) (fund.Document, error) {
	items, err := queryAll(ctx, s.table.Get(AttrPK, VersionPK(doc, commitID)).Consistent(true))
	if err != nil {
		return fund.Document{}, fmt.Errorf("read document %s commit %s: %w", doc, commitID, err)
	}
	var header, activity *Item
	var positions []fund.PositionItem
	for i := range items {
		switch it := &items[i]; it.SK {
		case VersionDocumentSK:
			header = it
		case VersionCapitalActivitySK:
			activity = it
		default:
			positions = append(positions, it.PositionItem())
		}
	}
	if header == nil {
		return fund.Document{}, fmt.Errorf("document %s commit %s: version partition has no header", doc, commitID)
	}
	return assemble(header.Header(), activity, positions), nil
}

// PositionsAfter returns the items of up to limit positions of a committed
// version whose IDs sort after the given one, read from the version's
// immutable partition (positionsAfter), and whether more positions follow.
// It serves the later pages of an overview, so a client paging through a
// document sees one version throughout. It returns ENOTFOUND when what it
// read is of a fund the viewer does not cover.
func (r View) PositionsAfter(ctx context.Context, doc, commitID, after string, limit int) ([]fund.PositionItem, bool, error) {
	var items []fund.PositionItem
	_, more, err := r.s.positionsAfter(ctx, doc, commitID, after, limit, func(it *Item) {
		items = append(items, it.PositionItem())
	})
	if err == nil && len(items) > 0 {
		err = r.visible(doc, items[0].FundID, nil)
	}
	if err != nil {
		return nil, false, err
	}
	return items, more, nil
}

// positionsAfter passes each item of up to limit positions of a committed
// version whose IDs sort after after (from the first when after is "") to
// each, with one Query of the version's immutable partition. It returns
// the last position read (after, when none) and whether more positions
// follow.
func (s *Store) positionsAfter(ctx context.Context, doc, commitID, after string, limit int, each func(*Item)) (last string, more bool, err error) {
	q := s.table.Get(AttrPK, VersionPK(doc, commitID)).Consistent(true)
	if after == "" {
		q = q.Range(AttrSK, dynamo.BeginsWith, strings.TrimSuffix(VersionPositionPrefix(""), "#"))
	} else {
		// '$' sorts right after '#', and below every character an ID may hold.
		q = q.Range(AttrSK, dynamo.Greater, strings.TrimSuffix(VersionPositionPrefix(after), "#")+"$")
	}
	it := q.Iter()
	var rec Item
	seen := map[string]bool{}
	last = after
	for it.Next(ctx, &rec) {
		if !seen[rec.PositionID] && len(seen) == limit {
			more = true
			break
		}
		seen[rec.PositionID] = true
		last = max(last, rec.PositionID)
		each(&rec)
		rec = Item{}
	}
	if err := it.Err(); err != nil {
		return "", false, fmt.Errorf("positions of document %s commit %s: %w", doc, commitID, err)
	}
	return last, more, nil
}

// DocumentPosition returns the version read and one position's items in
// it: of the latest version, one BatchGetItem of the commit head and the
// position's exact keys, one per item kind; kind, when not empty, keeps
// the item of that kind only, read by its exact key with one GetItem. As
// known at the view's instant it reads the version known then
// (documentPositionAt). It returns ENOTFOUND for an unknown document, for
// one of a fund the viewer does not cover, and for a position (or an item
// of kind) a visible document does not report.
func (r View) DocumentPosition(ctx context.Context, doc, pos string, kind fund.ItemKind) (int, []fund.PositionItem, error) {
	switch {
	case r.rd.Past:
		return r.documentPositionAt(ctx, doc, pos, kind)
	case kind != "":
		it, err := r.positionItemByKey(ctx, doc, kind, pos)
		if err != nil {
			return 0, nil, err
		}
		return it.DocumentVersion, []fund.PositionItem{it}, nil
	}
	if err := r.authorize(ctx, doc); err != nil {
		return 0, nil, err
	}
	keys := []dynamo.Keyed{dynamo.Keys{DocPK(doc), HeadSK}}
	for _, k := range fund.ItemKinds {
		keys = append(keys, dynamo.Keys{DocPK(doc), PositionItemSK(k, pos)})
	}
	var items []Item
	err := r.s.table.Batch(AttrPK, AttrSK).Get(keys...).Consistent(true).All(ctx, &items)
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		return 0, nil, fmt.Errorf("position %s of document %s: %w", pos, doc, err)
	}
	p := classify(items)
	if p.head == nil {
		return 0, nil, r.detailed(ctx, doc, notFound(doc))
	}
	var out []fund.PositionItem
	if p.consistent() {
		out = p.livePositions()
	} else if out, err = r.s.VersionPosition(ctx, doc, p.head.CommitID, pos); err != nil {
		return 0, nil, err
	}
	if len(out) == 0 {
		return 0, nil, r.detailed(ctx, doc, fund.Errorf(fund.ENOTFOUND, "position %s not found in document %s", pos, doc))
	}
	fund.SortItems(out)
	if err := r.visible(doc, out[0].FundID, nil); err != nil {
		return 0, nil, err
	}
	return p.head.Version, out, nil
}

// positionItemByKey reads one latest-view item by its exact key with one
// GetItem. It returns ENOTFOUND for an unknown document, for one of a fund
// the viewer does not cover, and for an item a visible document does not
// report.
func (r View) positionItemByKey(ctx context.Context, doc string, k fund.ItemKind, pos string) (fund.PositionItem, error) {
	if err := r.authorize(ctx, doc); err != nil {
		return fund.PositionItem{}, err
	}
	var it Item
	err := r.s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Equal, PositionItemSK(k, pos)).Consistent(true).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) || (err == nil && it.Tombstone) {
		return fund.PositionItem{}, r.detailed(ctx, doc, fund.Errorf(fund.ENOTFOUND, "no %s for position %s in document %s", k.Type(), pos, doc))
	}
	if err != nil {
		return fund.PositionItem{}, fmt.Errorf("%s of position %s in document %s: %w", k.Type(), pos, doc, err)
	}
	if err := r.visible(doc, it.FundID, nil); err != nil {
		return fund.PositionItem{}, err
	}
	return it.PositionItem(), nil
}

// DocumentStatements returns one page of the capital account statements of
// a document's latest view, by position, with one Query of the sort keys
// that begin with CAPITAL_ACCOUNT#, reading at most limit items and resuming
// at start; the key to resume from is nil at the end. Statements the latest
// version withdrew are left out, so a page may hold fewer than limit. An
// unknown document, or one without statements, has none.
func (s *Store) DocumentStatements(ctx context.Context, doc string, limit int, start PageKey) ([]fund.PositionItem, PageKey, error) {
	q := s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.BeginsWith, StatementPrefix).Consistent(true)
	items, next, err := queryPage(ctx, q, "", limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("statements of document %s: %w", doc, err)
	}
	out := make([]fund.PositionItem, 0, len(items))
	for i := range items {
		if items[i].IsPositionItem() {
			out = append(out, items[i].PositionItem())
		}
	}
	return out, next, nil
}

// DocumentFund returns the fund a document belongs to, read from its commit
// head with one GetItem: what a route needs to authorize the caller before
// any read that grows with the document. It returns ENOTFOUND for an
// unknown document.
func (s *Store) DocumentFund(ctx context.Context, doc string) (string, error) {
	h, err := s.head(ctx, doc)
	if err != nil {
		return "", err
	}
	if h == nil {
		return "", notFound(doc)
	}
	return h.FundID, nil
}

// indexPageKey is the key that resumes a Query of index ("" for the table)
// after it, an item the Query returned: a page can then end on any item,
// not only where a DynamoDB response ended.
func indexPageKey(it *Item, index string) PageKey {
	key := dynamo.PagingKey{AttrPK: &types.AttributeValueMemberS{Value: it.PK}, AttrSK: &types.AttributeValueMemberS{Value: it.SK}}
	switch index {
	case IndexGSI1:
		key[AttrGSI1PK], key[AttrGSI1SK] = &types.AttributeValueMemberS{Value: it.GSI1PK}, &types.AttributeValueMemberS{Value: it.GSI1SK}
	case IndexGSI2:
		key[AttrGSI2PK], key[AttrGSI2SK] = &types.AttributeValueMemberS{Value: it.GSI2PK}, &types.AttributeValueMemberS{Value: it.GSI2SK}
	}
	return pageKeyOf(key)
}

// pageKey is indexPageKey of the item (paged).
func (it *Item) pageKey(index string) PageKey { return indexPageKey(it, index) }

// version returns version n of a document whole, positions included: one
// GetItem finds the version's record, one Query reads its partition. It
// returns ENOTFOUND if the document or the version does not exist.
func (s *Store) version(ctx context.Context, doc string, n int) (fund.Document, error) {
	rec, err := s.versionRecord(ctx, doc, n)
	if err != nil {
		return fund.Document{}, fmt.Errorf("version %d of document %s: %w", n, doc, err)
	}
	if rec == nil {
		return fund.Document{}, fund.Errorf(fund.ENOTFOUND, "document %s has no version %d", doc, n)
	}
	return s.readVersion(ctx, doc, rec.CommitID)
}

// versionRecord reads the history record of version n of a document with
// one GetItem; nil when there is none under that key.
func (s *Store) versionRecord(ctx context.Context, doc string, n int) (*Item, error) {
	var it Item
	err := s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Equal, DocumentVersionSK(n)).Consistent(true).One(ctx, &it)
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// PositionAsOf returns what a document reported for one position in its
// latest version dated on or before asOf among the versions below before
// (each item names its version): one Query of the document's history
// records newest first from version before-1, a few at a time, until one
// dated on or before asOf, then one Query of the chosen version's
// partition. It serves the rare reads that must look past a restatement
// that moved a document's as-of date after asOf. A document with no such
// version, or whose version did not report the position, returns no items.
func (s *Store) PositionAsOf(ctx context.Context, doc, pos string, asOf fund.Date, before int) ([]fund.PositionItem, error) {
	if before <= 1 {
		return nil, nil // no version before the first
	}
	chosen, err := s.latestDatedBy(ctx, doc, asOf, before)
	if err != nil || chosen == nil {
		return nil, err
	}
	return s.VersionPosition(ctx, doc, chosen.CommitID, pos)
}

// asOfSearch is how many history records a request of latestDatedBy reads
// at most: a restatement that moved the as-of date is usually a version or
// two back.
const asOfSearch = 8

// latestDatedBy reads a document's version-ordered history records newest
// first from version before-1 until one dated on or before asOf, which it
// returns (nil if none).
func (s *Store) latestDatedBy(ctx context.Context, doc string, asOf fund.Date, before int) (*Item, error) {
	if before <= 1 {
		return nil, nil
	}
	lo, hi := VersionRange(DocumentVersionPrefix, 1, before-1)
	it := s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Between, lo, hi).Order(dynamo.Descending).
		Filter("$ <= ?", "AsOf", asOf.String()).SearchLimit(asOfSearch).Consistent(true).Iter()
	var rec Item
	if it.Next(ctx, &rec) {
		return &rec, nil
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("history of document %s to %s: %w", doc, asOf, err)
	}
	return nil, nil
}

// VersionPosition returns one position's items in one committed version
// of a document (none when the version does not report it), with one
// Query of the version's immutable partition on the prefix POS#<pos>#.
func (s *Store) VersionPosition(ctx context.Context, doc, commitID, pos string) ([]fund.PositionItem, error) {
	items, err := queryAll(ctx, s.table.Get(AttrPK, VersionPK(doc, commitID)).
		Range(AttrSK, dynamo.BeginsWith, VersionPositionPrefix(pos)).Consistent(true))
	if err != nil {
		return nil, fmt.Errorf("position %s of document %s commit %s: %w", pos, doc, commitID, err)
	}
	out := make([]fund.PositionItem, 0, len(items))
	for i := range items {
		out = append(out, items[i].PositionItem())
	}
	return out, nil
}
