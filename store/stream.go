package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// The committed-record stream: what the export reads of the table. A
// parallel Scan (the only Scan in the program) passes every item once and
// yields the immutable records of committed versions, typed, so the export
// knows nothing of keys or stored items:
//
//   - a CommitHead per document: the one version the snapshot shows, and
//     whether the Scan read that version whole (see CommitHead.Complete);
//   - a DocumentVersion per history record of a document;
//   - a VersionCommit per event of a version (its commit instant,
//     exportat.go);
//   - an ActivityVersion per history record of a capital activity;
//   - a VersionItem per position item of a version partition (of any
//     version, committed or not: only the head's commit counts);
//   - a RegisteredPosition per position in a fund's registry.
//
// The latest view is never yielded, so a restatement still being
// materialized cannot mix two versions into a snapshot; it is read only to
// check the heads.

// Record is one record of the stream: a CommitHead, DocumentVersion,
// VersionCommit, ActivityVersion, VersionItem or RegisteredPosition.
type Record interface{ committedRecord() }

// CommitHead is a document's commit head as the Scan read it.
//
// A Scan is not a snapshot across partitions: a version committed while it
// runs can have its head read after its version partition was passed,
// before (or while) that partition was staged. The head does not say how
// many items its version has, but the latest view does, once it is at the
// head's version: materializing version N leaves exactly N's items and
// tombstones, all marked N, and only then marks the head materialized. The
// head sorts first in its partition, so the Scan reads it before the latest
// view's items; if the head is materialized and every latest item read after
// it is at the head's version, no later version had begun to change that
// view, and its live items are the version's items. So a head is Whole when
// it is materialized, every latest item is at its version, and the live
// items name as many positions as the head records; Items then counts the
// version's items of each kind (indexed as fund.ItemKinds).
type CommitHead struct {
	FundID, DocumentID string
	Version            int
	CommitID           string
	// CommittedAt is the instant the version committed (zero when it is
	// not known: read by DocumentRecords, a version without an event).
	CommittedAt time.Time
	Whole       bool
	Items       [4]int // one count per kind of fund.ItemKinds
	// ItemsFrom is the first version whose position items the records
	// hold: 0 from a Scan, which reads every version's; from
	// DocumentRecords, the first committed at or after its since.
	ItemsFrom int
}

// Complete reports whether found items of kind, read by the Scan from the
// head's version partition, are all the version's items of that kind. When
// they may not be, CommitItems reads them again.
func (h *CommitHead) Complete(kind fund.ItemKind, found int) bool {
	i := kindIndex(kind)
	return h.Whole && i >= 0 && found == h.Items[i]
}

// VersionPartition names the partition that holds the head's version, for
// logs and events.
func (h *CommitHead) VersionPartition() string { return VersionPK(h.DocumentID, h.CommitID) }

// DocumentVersion is the history record of one version of a document: it
// may be newer than the head the Scan read (committed since).
type DocumentVersion struct{ fund.DocumentHeader }

// ActivityVersion is the history record of one version's capital activity.
type ActivityVersion struct {
	FundID, DocumentID string
	Version            int
	AsOf               fund.Date
	Currency           string
	CreatedAt          time.Time
	fund.CapitalActivity
}

// VersionItem is a position item of one version partition (a statement
// with its CapitalAccount, a call or a distribution with its stated
// Transactions); CommitID names the version's commit, which counts only if
// a head names it.
type VersionItem struct {
	fund.PositionItem
	CommitID string
}

// RegisteredPosition is a position as its fund's registry records it.
type RegisteredPosition struct{ fund.Registered }

func (CommitHead) committedRecord()         {}
func (DocumentVersion) committedRecord()    {}
func (ActivityVersion) committedRecord()    {}
func (VersionItem) committedRecord()        {}
func (RegisteredPosition) committedRecord() {}

// ScanOptions shape the parallel Scan of Committed.
type ScanOptions struct {
	// Segments is the number of parallel Scan segments (default 4).
	Segments int
	// PageItems caps the items of one Scan request (default
	// DefaultPageItems(Segments); DynamoDB also ends a page at 1 MB).
	PageItems int
	// OnPage, if set, is called after each Scan request has been answered,
	// by the segment's goroutine.
	OnPage func(Page)
}

// Page is one answered Scan request.
type Page struct {
	Segment int
	Items   int    // items of the page, of any type
	LastPK  string // the partition key of its last item
}

// DefaultPageItems is the default ScanOptions.PageItems for a number of
// segments: the pages of all segments then hold about 16,384 items at
// once, decoded (some 1.6 KB each).
func DefaultPageItems(segments int) int { return max(256, 16_384/max(1, segments)) }

func (o *ScanOptions) defaults() {
	if o.Segments <= 0 {
		o.Segments = 4
	}
	if o.PageItems <= 0 {
		o.PageItems = DefaultPageItems(o.Segments)
	}
}

// ScanPlan is the Scan request each segment of Committed starts with (a
// segment's later requests add ExclusiveStartKey): strongly consistent,
// every attribute, at most PageItems items. A benchmark's raw baseline
// makes the same requests.
func (s *Store) ScanPlan(opts ScanOptions) []*dynamodb.ScanInput {
	opts.defaults()
	out := make([]*dynamodb.ScanInput, opts.Segments)
	for seg := range out {
		out[seg] = &dynamodb.ScanInput{
			TableName: aws.String(s.name), ConsistentRead: aws.Bool(true),
			Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(int32(opts.Segments)),
			Limit: aws.Int32(int32(opts.PageItems)),
		}
	}
	return out
}

// Committed reads the whole table with a parallel Scan and calls yield for
// each committed record (see Record). Segments run in their own
// goroutines, and yield is called by all of them at once; an error from
// yield stops the Scan and is returned.
func (s *Store) Committed(ctx context.Context, opts ScanOptions, yield func(Record) error) error {
	opts.defaults()
	g, gctx := errgroup.WithContext(ctx)
	for seg := range opts.Segments {
		g.Go(func() error { return s.scanSegment(gctx, seg, &opts, yield) })
	}
	return g.Wait()
}

// scanSegment reads one segment, a request of at most opts.PageItems items
// at a time. The next page is requested while this one is decoded and
// yielded (at most one page ahead), so the segment waits on DynamoDB and
// works on its items at the same time, as a raw Scan only waits.
func (s *Store) scanSegment(ctx context.Context, seg int, opts *ScanOptions, yield func(Record) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan scanPage, 1)
	fetched := make(chan error, 1)
	go func() { fetched <- s.fetchSegment(ctx, seg, opts, pages) }()

	var head *headCheck // the document partition being read, if it has a head
	for p := range pages {
		for _, raw := range p.items {
			pk, _ := raw[AttrPK].(*types.AttributeValueMemberS)
			// A partition's items are read together, in sort key order; a
			// head's check ends with its partition.
			if head != nil && (pk == nil || pk.Value != head.pk) {
				if err := yield(head.result()); err != nil {
					return err
				}
				head = nil
			}
			if !streamed(raw) {
				continue
			}
			var item Item
			if err := dynamo.UnmarshalItem(raw, &item); err != nil {
				return fmt.Errorf("store: decode item %v / %v: %w", raw[AttrPK], raw[AttrSK], err)
			}
			rec, check, err := committedRecord(&item)
			if err != nil {
				return err
			}
			switch {
			case check != nil:
				head = check
			case head != nil:
				head.see(&item)
			}
			if rec == nil {
				continue
			}
			if err := yield(rec); err != nil {
				return err
			}
		}
		if opts.OnPage != nil {
			opts.OnPage(p.Page)
		}
	}
	if err := <-fetched; err != nil {
		return err
	}
	if head != nil {
		return yield(head.result())
	}
	return nil
}

// scanPage is one answered Scan request with its items, raw: the table
// holds records that are not entities (idempotency records store Status as
// a number), and only streamed types are decoded.
type scanPage struct {
	Page
	items []dynamo.Item
}

// fetchSegment sends segment seg's pages to out, in order, and closes it.
func (s *Store) fetchSegment(ctx context.Context, seg int, opts *ScanOptions, out chan<- scanPage) error {
	defer close(out)
	var from dynamo.PagingKey
	for {
		// Strongly consistent: a head that committed before the Scan read
		// it is seen with every record its commit wrote. With SearchLimit,
		// the iterator makes one request; the loop goes on from where it
		// stopped.
		scan := s.table.Scan().Segment(seg, opts.Segments).Consistent(true).SearchLimit(opts.PageItems)
		if from != nil {
			scan = scan.StartFrom(from)
		}
		it := scan.Iter()
		p := scanPage{Page: Page{Segment: seg}}
		for {
			var raw dynamo.Item
			if !it.Next(ctx, &raw) {
				break
			}
			p.items = append(p.items, raw)
			if pk, _ := raw[AttrPK].(*types.AttributeValueMemberS); pk != nil {
				p.LastPK = pk.Value
			}
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("store: scan segment %d of %d: %w", seg, opts.Segments, err)
		}
		p.Items = len(p.items)
		select {
		case out <- p:
		case <-ctx.Done():
			return ctx.Err()
		}
		var err error
		if from, err = it.LastEvaluatedKey(ctx); err != nil {
			return fmt.Errorf("store: scan segment %d of %d: %w", seg, opts.Segments, err)
		}
		if from == nil {
			return nil
		}
	}
}

// streamedTypes are the entities the stream decodes.
var streamedTypes = map[string]bool{
	TypeHead: true, TypeDocument: true, TypeCapitalActivity: true, TypePosition: true, TypeEvent: true,
	TypeCapitalAccount: true, TypeCapitalCall: true, TypeDistribution: true, TypeUnfundedCommitment: true,
}

// streamed reports whether a raw item is of a streamed type.
func streamed(raw dynamo.Item) bool {
	t, ok := raw["Type"].(*types.AttributeValueMemberS)
	return ok && streamedTypes[t.Value]
}

// committedRecord turns a stored item into the record it is, or starts the
// check of a head (which is yielded once its partition has been read).
// Only immutable records are yielded: history records, events and the
// items of version partitions.
func committedRecord(it *Item) (Record, *headCheck, error) {
	switch {
	case it.Type == TypeHead && it.SK == HeadSK:
		return nil, &headCheck{pk: it.PK, head: CommitHead{FundID: it.FundID, DocumentID: it.DocumentID,
			Version: it.Version, CommitID: it.CommitID, CommittedAt: it.CommittedAt.UTC()},
			materialized: it.Materialized, positions: it.PositionCount}, nil

	case isEventItem(it):
		return versionCommit(it), nil, nil

	case it.Type == TypeDocument && strings.HasPrefix(it.PK, DocPK("")) && it.SK != DocumentLatestSK:
		return DocumentVersion{it.Header()}, nil, nil

	case it.Type == TypeCapitalActivity && strings.HasPrefix(it.PK, DocPK("")) && it.SK != CapitalActivityLatestSK:
		a, err := activityVersion(it)
		return a, nil, err

	case it.Type == TypePosition && strings.HasPrefix(it.PK, FundPK("")):
		return RegisteredPosition{registered(it)}, nil, nil
	}
	_, commitID, inVersion := ParseVersionPK(it.PK)
	if _, isPosition := ItemKindOfType(it.Type); !inVersion || !isPosition {
		return nil, nil, nil // a latest-view item (see headCheck) or no record at all
	}
	if it.Amount == nil {
		return nil, nil, itemError(it, errors.New("amount is missing"))
	}
	return VersionItem{PositionItem: it.PositionItem(), CommitID: commitID}, nil, nil
}

// activityVersion is a stored capital activity of one version (a history
// record, or the item of a version partition: both carry the version's
// fund, date, currency and instant) as a record.
func activityVersion(it *Item) (Record, error) {
	if it.Amount == nil {
		return nil, itemError(it, errors.New("amount is missing"))
	}
	return ActivityVersion{FundID: it.FundID, DocumentID: it.DocumentID, Version: it.Version, AsOf: it.AsOf,
		Currency: it.Currency, CreatedAt: it.CreatedAt, CapitalActivity: it.Activity().CapitalActivity}, nil
}

func itemError(it *Item, err error) error {
	return fmt.Errorf("store: item %s / %s: %w", it.PK, it.SK, err)
}

// headCheck follows the latest view of a head's partition, read after the
// head (see CommitHead).
type headCheck struct {
	pk           string
	head         CommitHead
	materialized bool
	positions    int                 // as the head records
	seen         map[string]struct{} // positions named by live latest items
	behind       bool                // a latest item is not at the head's version
}

// see counts one item of the head's partition.
func (c *headCheck) see(it *Item) {
	kind, isPosition := ItemKindOfType(it.Type)
	if !isPosition || it.PK != DocPK(it.DocumentID) || it.SK != PositionItemSK(kind, it.PositionID) {
		return // history records, the latest document and activity
	}
	if it.Version != c.head.Version {
		c.behind = true
	}
	if it.Tombstone {
		return
	}
	c.head.Items[kindIndex(kind)]++
	// The latest view is sorted by kind, then position: a position's
	// items are not next to each other.
	if c.seen == nil {
		c.seen = map[string]struct{}{}
	}
	c.seen[it.PositionID] = struct{}{}
}

func (c *headCheck) result() CommitHead {
	h := c.head
	h.Whole = c.materialized && !c.behind && len(c.seen) == c.positions
	return h
}

// kindIndex numbers the position-level kinds, in the order of
// fund.ItemKinds; -1 for any other.
func kindIndex(k fund.ItemKind) int {
	for i, kk := range fund.ItemKinds {
		if kk == k {
			return i
		}
	}
	return -1
}

// DocumentRecords reads one document at its latest committed version, and
// the versions before it committed at or after since, and returns the
// records a Scan yields of them, as a Scan that read them whole would: its
// head (Whole, with the latest version's items counted; ItemsFrom, the
// first version whose items are returned), every history record, the
// commits (VersionCommit, from their events) of the latest version, of the
// versions committed at or after since and of the one before them, the
// latest version's capital activity, if any, and the position items of
// every version from ItemsFrom on. An incremental export reads a changed
// document so: the versions committed before since are in the snapshot it
// starts from.
//
// Three strongly consistent Queries (more only if a partition pages), and
// one more for each version before the latest committed at or after
// since; never a Scan. First the document's history records, the latest
// of which is the head's version (a commit writes its history record in
// the transaction that moves the head); then its events newest first,
// down to the first below the latest committed before since; then the
// partitions of the versions from ItemsFrom on, immutable once committed.
// It returns ENOTFOUND if the document has no committed version.
func (s *Store) DocumentRecords(ctx context.Context, doc string, since time.Time) ([]Record, error) {
	history, err := s.versionRecords(ctx, doc, DocumentVersionPrefix, 1, MaxVersion)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if len(history) == 0 {
		return nil, notFound(doc)
	}
	recs := make([]Record, 0, len(history)+1)
	latest := &history[0]
	commitOf := make(map[int]string, len(history))
	for i := range history {
		rec, _, err := committedRecord(&history[i])
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		commitOf[history[i].Version] = history[i].CommitID
		if history[i].Version > latest.Version {
			latest = &history[i]
		}
	}
	head := latest.Header()
	h := CommitHead{FundID: head.FundID, DocumentID: doc, Version: head.Version, CommitID: head.CommitID, Whole: true, ItemsFrom: 1}
	commits, err := s.commitsSince(ctx, doc, head.Version, since)
	if err != nil {
		return nil, err
	}
	for _, c := range commits {
		recs = append(recs, c)
		if c.Version == head.Version {
			h.CommittedAt = c.CommittedAt
		}
		if c.CommittedAt.Before(since) && c.Version < head.Version {
			h.ItemsFrom = c.Version + 1
		}
	}
	for v := h.ItemsFrom; v <= head.Version; v++ {
		commitID, ok := commitOf[v]
		if !ok {
			return nil, fmt.Errorf("store: document %s has no history record of version %d", doc, v)
		}
		items, err := queryAll(ctx, s.table.Get(AttrPK, VersionPK(doc, commitID)).Consistent(true))
		if err != nil {
			return nil, fmt.Errorf("store: version %d of document %s: %w", v, doc, err)
		}
		for i := range items {
			switch it := &items[i]; it.SK {
			case VersionDocumentSK:
			case VersionCapitalActivitySK:
				if v != head.Version {
					continue // the history records hold it
				}
				a, err := activityVersion(it)
				if err != nil {
					return nil, err
				}
				recs = append(recs, a)
			default:
				rec, _, err := committedRecord(it)
				if err != nil {
					return nil, err
				}
				item, ok := rec.(VersionItem)
				if !ok {
					return nil, fmt.Errorf("store: version %d of document %s: %s is not a position item", v, doc, it.SK)
				}
				if v == head.Version {
					h.Items[kindIndex(item.Kind)]++
				}
				recs = append(recs, item)
			}
		}
	}
	return append(recs, h), nil
}

// FindPosition reads what the table holds of a position that committed
// documents report but whose registry item the Scan did not find: the
// registry item was written after the Scan passed its place (registry items
// are written after the commit), or not yet, if the writer died between its
// commit and its registry write. It reads the registry item, then the
// position's claim, one strongly consistent GetItem each, and returns the
// first that belongs to the fund and investor and says when the position
// was registered; found is false if neither does. read is called with the
// key of each item read (for events).
func (s *Store) FindPosition(ctx context.Context, fundID, positionID, investorID string, read func(key string)) (p RegisteredPosition, found bool, err error) {
	for _, key := range [][2]string{
		{FundPK(fundID), FundPositionSK(positionID)},
		{PositionClaimPK(positionID), PositionClaimSK},
	} {
		var it Item
		err := s.table.Get(AttrPK, key[0]).Range(AttrSK, dynamo.Equal, key[1]).Consistent(true).One(ctx, &it)
		if errors.Is(err, dynamo.ErrNotFound) {
			continue
		}
		if err != nil {
			return p, false, fmt.Errorf("store: read position %s of fund %s: %w", positionID, fundID, err)
		}
		if read != nil {
			read(key[0] + " / " + key[1])
		}
		if it.FundID == fundID && it.InvestorID == investorID && !it.CreatedAt.IsZero() {
			return RegisteredPosition{fund.Registered{FundID: fundID, PositionID: positionID, InvestorID: investorID,
				Currency: it.Currency, RegisteredAt: it.CreatedAt}}, true, nil
		}
	}
	return p, false, nil
}
