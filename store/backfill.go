package store

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// The change index's backfill (`fundsvc changes backfill`): heads committed
// before the change index existed carry no GSI1 keys, so ChangedSince does
// not see them. The backfill finds them with a Scan (the table has no other
// list of every document, and this runs once per table) and gives each the
// keys of its commit, from the instant it was created. It is the only Scan
// besides the export's (architecture_test.go names both).

// BackfillProgress is where a backfill stands.
type BackfillProgress struct {
	// Resume is where the Scan goes on from: pass it to BackfillChanges to
	// continue an interrupted run. Empty once the whole table was read.
	Resume string
	// Heads counts the commit heads read, Indexed those the run gave
	// change-index keys, Kept those that had keys already (a commit's own,
	// or an earlier run's).
	Heads, Indexed, Kept int
	// Events counts the events the run wrote for committed versions that
	// had none (versions committed before the event feed existed).
	Events int
	// Moved counts the history records of the earlier layout the run moved
	// under the version-ordered keys (see backfillHistory), Documents the
	// documents whose head it then marked HistoryByVersion.
	Moved, Documents int
	// Ledger counts the position ledger's entries the run put (ledger.go):
	// one per position a document reported in any version, put again on
	// every run, which changes nothing.
	Ledger int
	// Instants counts the documents whose head the run marked
	// InstantIndexed, once it had put their versions' entries in the
	// instant index (see backfillInstants), Records the funds' and
	// investors' records it marked so (see backfillRecordInstants).
	Instants, Records int
}

// BackfillOptions say where a backfill starts and whom it tells.
type BackfillOptions struct {
	// Resume is a BackfillProgress.Resume of an earlier run; empty: the
	// start of the table.
	Resume string
	// PageItems is the items one Scan request reads (default 1000).
	PageItems int
	// Progress, when not nil, is called after every page.
	Progress func(BackfillProgress)
}

// BackfillChanges sets the change-index keys on every commit head that
// lacks them, from the head's creation instant (a head written since the
// index existed carries the keys of its own commit), writes the event of
// every committed version that has none (see backfillEvents), moves
// the history records of the earlier layout (see backfillHistory) and puts
// the position ledger's entries of every version (see backfillLedger). It reads the table
// with a strongly consistent Scan of the heads, a page at a time. When it
// stops early (an error, ctx done), the progress it returns says where to
// resume.
//
// It is idempotent: each head is updated on condition that it still lacks
// the keys and still names the commit read, so keys a commit wrote, in this
// process or any other, are never overwritten; a head that moved on is read
// again and indexed by its new commit if that did not index it. Running it
// again, or again from an older resume point, changes nothing already done.
// It returns EINVALID for a resume point no run printed.
func (s *Store) BackfillChanges(ctx context.Context, opts BackfillOptions) (BackfillProgress, error) {
	p := BackfillProgress{Resume: opts.Resume}
	from, err := backfillStart(opts.Resume)
	if err != nil {
		return p, err
	}
	if err := s.recordChangeShards(ctx); err != nil {
		return p, err
	}
	for {
		scan := s.table.Scan().Filter("$ = ? OR $ = ?", AttrSK, HeadSK, AttrSK, RecordSK).Consistent(true).
			Project(AttrPK, AttrSK, AttrGSI1PK, "'Type'", "DocumentID", "CommitID", "CreatedAt", "CommittedAt", "Version", "HistoryByVersion", "InstantIndexed").SearchLimit(cmp.Or(max(opts.PageItems, 0), 1000))
		if from != nil {
			scan = scan.StartFrom(from)
		}
		it := scan.Iter()
		var head Item
		for it.Next(ctx, &head) {
			if head.Type == TypeFundRecord || head.Type == TypeInvestorRecord {
				indexedNow, err := s.backfillRecordInstants(ctx, head)
				if indexedNow {
					p.Records++
				}
				if err != nil {
					return p, err
				}
			}
			if head.Type == TypeHead {
				p.Heads++
				indexed, err := s.indexHead(ctx, head)
				if err != nil {
					return p, err
				}
				if indexed {
					p.Indexed++
				} else {
					p.Kept++
				}
				n, err := s.backfillEvents(ctx, head)
				p.Events += n
				if err != nil {
					return p, err
				}
				moved, marked, err := s.backfillHistory(ctx, head)
				p.Moved += moved
				if marked {
					p.Documents++
				}
				if err != nil {
					return p, err
				}
				entries, err := s.backfillLedger(ctx, head)
				p.Ledger += entries
				if err != nil {
					return p, err
				}
				indexedNow, err := s.backfillInstants(ctx, head)
				if indexedNow {
					p.Instants++
				}
				if err != nil {
					return p, err
				}
			}
			head = Item{}
		}
		if err := it.Err(); err != nil {
			return p, fmt.Errorf("store: scan for heads to index: %w", err)
		}
		if from, err = it.LastEvaluatedKey(ctx); err != nil {
			return p, fmt.Errorf("store: scan for heads to index: %w", err)
		}
		p.Resume = ""
		if from != nil {
			p.Resume = base64.RawURLEncoding.EncodeToString(pageKeyOf(from))
		}
		if opts.Progress != nil {
			opts.Progress(p)
		}
		if from == nil {
			return p, nil
		}
	}
}

// backfillStart decodes a resume point; empty is the start of the table.
func backfillStart(resume string) (dynamo.PagingKey, error) {
	if resume == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(resume)
	if err != nil {
		return nil, fund.Invalid("resume", "is not a resume point a backfill printed")
	}
	k, err := paging(b)
	if err != nil {
		return nil, fund.Invalid("resume", "is not a resume point a backfill printed")
	}
	return k, nil
}

// maxIndexAttempts bounds how often indexHead reads a head again that
// commits keep moving.
const maxIndexAttempts = 10

// indexHead gives a head read by the backfill the change-index keys of its
// commit, unless it has keys. It reports whether it wrote them.
func (s *Store) indexHead(ctx context.Context, h Item) (bool, error) {
	for range maxIndexAttempts {
		if h.GSI1PK != "" {
			return false, nil
		}
		at := h.CommittedAt
		if at.IsZero() {
			at = h.CreatedAt
		}
		if at.IsZero() {
			return false, fmt.Errorf("store: head of document %s has no creation instant to index it by", h.DocumentID)
		}
		pk, sk := s.changeKeys(h.DocumentID, at)
		stamp, _ := at.UTC().MarshalText() // as the item codec stores instants
		_, err := s.db.Client().UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:        aws.String(s.name),
			Key:              itemKey(h.PK, HeadSK),
			UpdateExpression: aws.String("SET #pk = :pk, #sk = :sk, #at = :at"),
			// Only the commit read, and only while no commit gave it keys:
			// a commit rewrites the whole head, its keys included.
			ConditionExpression:      aws.String("attribute_not_exists(#pk) AND #c = :c"),
			ExpressionAttributeNames: exprNames{"#pk": AttrGSI1PK, "#sk": AttrGSI1SK, "#at": "CommittedAt", "#c": "CommitID"},
			ExpressionAttributeValues: exprValues{":pk": attrS(pk), ":sk": attrS(sk), ":at": attrS(string(stamp)),
				":c": attrS(h.CommitID)},
		})
		if err == nil {
			return true, nil
		}
		if !dynamo.IsCondCheckFailed(err) {
			return false, fmt.Errorf("store: index the head of document %s: %w", h.DocumentID, err)
		}
		// Another commit (or another backfill) got there first.
		var now Item
		err = s.table.Get(AttrPK, h.PK).Range(AttrSK, dynamo.Equal, HeadSK).Consistent(true).One(ctx, &now)
		if errors.Is(err, dynamo.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("store: read the head of document %s again: %w", h.DocumentID, err)
		}
		h = now
	}
	return false, fund.Errorf(fund.ECONFLICT, "the head of document %s kept changing while it was indexed; run the backfill again", h.DocumentID)
}

// backfillEvents writes the event of each of the head's document's
// versions up to the head's that has none (committed before the event
// feed existed), as its commit would have: what it changed against the
// version before it, at its commit instant. Only the latest version's
// instant is recorded (the head's); an earlier version's is its creation
// instant, moved past its predecessor's as commits move it. Each event is
// put on condition that its version has none, so a commit's own event or
// an earlier run's is never replaced; the feed's recorded start is
// lowered to the first instant written. It returns how many it wrote.
func (s *Store) backfillEvents(ctx context.Context, h Item) (int, error) {
	if h.Version < 1 {
		return 0, nil
	}
	var have []eventItem
	if err := s.table.Get(AttrPK, EventPK(h.DocumentID)).Range(AttrSK, dynamo.Between, EventSK(1), EventSK(h.Version)).
		Project(AttrSK).Consistent(true).All(ctx, &have); err != nil {
		return 0, fmt.Errorf("store: read the events of document %s: %w", h.DocumentID, err)
	}
	if len(have) >= h.Version {
		return 0, nil
	}
	has := make(map[string]bool, len(have))
	for _, e := range have {
		has[e.SK] = true
	}
	written := 0
	var prev *fund.Document
	var at time.Time
	for n := 1; n <= h.Version; n++ {
		d, err := s.Version(ctx, h.DocumentID, n)
		if err != nil {
			return written, fmt.Errorf("store: backfill the events of document %s: %w", h.DocumentID, err)
		}
		at = later(d.CreatedAt, at.Add(time.Millisecond))
		if n == h.Version && !h.CommittedAt.IsZero() {
			at = h.CommittedAt
		}
		if !has[EventSK(n)] {
			c := changesOf(prev, &d)
			t, err := touchedOf(&d, prev, &c, s.partBytes())
			if err != nil {
				return written, err
			}
			if parts := t.partItems(&d); len(parts) > 0 {
				puts := make([]any, len(parts))
				for i, p := range parts {
					puts[i] = p
				}
				if err := s.batchPut(ctx, puts); err != nil {
					return written, fmt.Errorf("store: write the event of document %s version %d: %w", h.DocumentID, n, err)
				}
			}
			ev := s.newEventItem(&d, at, t)
			if err := s.lowerEventsStart(ctx, at); err != nil {
				return written, err
			}
			err = s.table.Put(ev).If("attribute_not_exists($)", AttrPK).Run(ctx)
			switch {
			case err == nil:
				written++
			case !dynamo.IsCondCheckFailed(err): // refused: another run wrote it
				return written, fmt.Errorf("store: write the event of document %s version %d: %w", h.DocumentID, n, err)
			}
		}
		prev = &d
	}
	return written, nil
}

// backfillInstants puts the instant index's entry (VersionInstantSK) of
// every version of h's document, from the versions' events (which
// backfillEvents wrote first), and marks the head InstantIndexed, on
// condition that it still names the version read: a commit in between
// wrote its own entry, and the run reads the head again and goes on. An
// entry is put whole from its event, so putting it again changes nothing.
// It reports whether it marked the head (false for one that had the mark).
func (s *Store) backfillInstants(ctx context.Context, h Item) (bool, error) {
	doc := h.DocumentID
	for range maxIndexAttempts {
		if h.InstantIndexed || h.Version < 1 {
			return false, nil
		}
		var evs []eventItem
		err := s.table.Get(AttrPK, EventPK(doc)).Range(AttrSK, dynamo.Between, EventSK(1), EventSK(h.Version)).
			Project("Version", "CommittedAt").Consistent(true).All(ctx, &evs)
		if err != nil {
			return false, fmt.Errorf("store: read the events of document %s: %w", doc, err)
		}
		if len(evs) != h.Version {
			return false, fmt.Errorf("store: document %s has %d events for %d versions: %w", doc, len(evs), h.Version, ErrNoCommitInstant)
		}
		for i := 0; i < len(evs); i += maxBatchWrite {
			part := evs[i:min(i+maxBatchWrite, len(evs))]
			entries := make([]any, len(part))
			for j, e := range part {
				entries[j] = versionInstantItem(doc, e.Version, e.CommittedAt)
			}
			if _, err := s.table.Batch().Write().Put(entries...).Run(ctx); err != nil {
				return false, fmt.Errorf("store: put the instant index of document %s: %w", doc, err)
			}
		}
		err = s.table.Update(AttrPK, h.PK).Range(AttrSK, HeadSK).Set("InstantIndexed", true).
			If("$ = ?", "Version", h.Version).Run(ctx)
		if err == nil {
			return true, nil
		}
		if !dynamo.IsCondCheckFailed(err) {
			return false, fmt.Errorf("store: mark the instant index of document %s: %w", doc, err)
		}
		var now Item
		err = s.table.Get(AttrPK, h.PK).Range(AttrSK, dynamo.Equal, HeadSK).Consistent(true).One(ctx, &now)
		if errors.Is(err, dynamo.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("store: read the head of document %s again: %w", doc, err)
		}
		h = now
	}
	return false, fund.Errorf(fund.ECONFLICT, "the head of document %s kept changing while its instant index was put; run the backfill again", doc)
}

// backfillRecordInstants puts the instant index's entry (RecordInstantSK)
// of every kept version of a fund's or an investor's record r (those with
// an item, RecordVersionSK, and its instant) and marks the record
// InstantIndexed, on condition that it is still at the version read, as
// backfillInstants does for a document. A version stored before versions
// were kept has no item, and no entry: it was not known at any instant.
func (s *Store) backfillRecordInstants(ctx context.Context, r Item) (bool, error) {
	for range maxIndexAttempts {
		if r.InstantIndexed || r.Version < 1 {
			return false, nil
		}
		var versions []map[string]types.AttributeValue
		err := s.table.Get(AttrPK, r.PK).Range(AttrSK, dynamo.Between, RecordVersionSK(1), RecordVersionSK(r.Version)).
			Project("Version", "RecordedAt", "UpdatedAt").Consistent(true).All(ctx, &versions)
		if err != nil {
			return false, fmt.Errorf("store: read the record versions of %s: %w", r.PK, err)
		}
		entries := make([]any, 0, len(versions))
		for _, v := range versions {
			entries = append(entries, recordInstantItem(r.PK, rowVersion(v), recordInstant(v)))
			// The floor of reads as known at an instant (BeforeFeed).
			if err := s.lowerEventsStart(ctx, recordInstant(v)); err != nil {
				return false, err
			}
		}
		for i := 0; i < len(entries); i += maxBatchWrite {
			if _, err := s.table.Batch().Write().Put(entries[i:min(i+maxBatchWrite, len(entries))]...).Run(ctx); err != nil {
				return false, fmt.Errorf("store: put the instant index of %s: %w", r.PK, err)
			}
		}
		err = s.table.Update(AttrPK, r.PK).Range(AttrSK, RecordSK).Set("InstantIndexed", true).
			If("$ = ?", "Version", r.Version).Run(ctx)
		if err == nil {
			return true, nil
		}
		if !dynamo.IsCondCheckFailed(err) {
			return false, fmt.Errorf("store: mark the instant index of %s: %w", r.PK, err)
		}
		var now Item
		if err := s.table.Get(AttrPK, r.PK).Range(AttrSK, dynamo.Equal, RecordSK).Consistent(true).One(ctx, &now); err != nil {
			return false, fmt.Errorf("store: read the record %s again: %w", r.PK, err)
		}
		r = now
	}
	return false, fund.Errorf(fund.ECONFLICT, "the record %s kept changing while its instant index was put; run the backfill again", r.PK)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// maxTransactItems is DynamoDB's limit of items in one transaction.
const maxTransactItems = 100

// backfillHistory moves a document's history records of the earlier
// layout (keyed by date among the latest view's items: LegacyDocumentHistorySK,
// LegacyActivityHistorySK) under the version-ordered keys (DocumentVersionSK,
// ActivityVersionSK), then gives its head the recent versions the overview
// lists and marks the head and the latest record HistoryByVersion, so that
// its reads read the version-ordered keys only. It reports how many
// records it moved and whether it marked the head (false for a head that
// had the mark: a document created since the release, or one an earlier
// run moved).
//
// Each record moves in a transaction that puts it under its new key and
// deletes the old one, oldest version first, at most 50 to a transaction,
// so a record is always under one key or the other; a reader of a document
// not yet marked reads the earlier layout first, so it finds each record
// in one of them (and keeps one per version). The document records are
// put marked HistoryByVersion, which a record may say once every lower
// version has moved; version-ordered records a commit wrote before the
// mark are put again marked. The head and the latest record are marked
// last, in one transaction on condition that the head still names the
// commit read: a commit in between (of this release, or of an earlier one
// still writing the earlier layout) makes the run read the head again and
// go on. Running it again changes nothing.
func (s *Store) backfillHistory(ctx context.Context, h Item) (moved int, marked bool, err error) {
	doc := h.DocumentID
	for range maxIndexAttempts {
		if h.HistoryByVersion {
			return moved, false, nil
		}
		n, err := s.moveHistory(ctx, doc)
		moved += n
		if err != nil {
			return moved, false, err
		}
		recent, err := s.recentFromRecords(ctx, doc, h.Version)
		if err != nil {
			return moved, false, err
		}
		tx := &txBuilder{table: s.name}
		tx.update(h.PK, HeadSK, "SET #m = :t, #r = :r", ifExpr("#c = :c", exprNames{"#m": "HistoryByVersion", "#r": "Recent", "#c": "CommitID"},
			exprValues{":t": attrBool(true), ":r": &types.AttributeValueMemberB{Value: recent}, ":c": attrS(h.CommitID)}))
		tx.update(h.PK, DocumentLatestSK, "SET #m = :t", ifExpr("#v = :v", exprNames{"#m": "HistoryByVersion", "#v": "Version"},
			exprValues{":t": attrBool(true), ":v": attrN(h.Version)}))
		in, err := tx.input()
		if err != nil {
			return moved, false, err
		}
		_, err = s.db.Client().TransactWriteItems(ctx, in)
		if err == nil {
			return moved, true, nil
		}
		if !dynamo.IsCondCheckFailed(err) {
			return moved, false, fmt.Errorf("store: mark the history of document %s moved: %w", doc, err)
		}
		// A commit moved the head on: read it again.
		var now Item
		err = s.table.Get(AttrPK, h.PK).Range(AttrSK, dynamo.Equal, HeadSK).Consistent(true).One(ctx, &now)
		if errors.Is(err, dynamo.ErrNotFound) {
			return moved, false, nil
		}
		if err != nil {
			return moved, false, fmt.Errorf("store: read the head of document %s again: %w", doc, err)
		}
		h = now
	}
	return moved, false, fund.Errorf(fund.ECONFLICT, "the head of document %s kept changing while its history was moved; run the backfill again", doc)
}

// moveHistory moves every record of a document's earlier layout under its
// version-ordered key and puts the version-ordered document records that
// lack HistoryByVersion again with it, oldest version first (see
// backfillHistory). It returns how many records it moved.
func (s *Store) moveHistory(ctx context.Context, doc string) (int, error) {
	dlo, dhi := LegacyDocumentHistoryRange(fund.Date{}, fund.Date{})
	docs, err := s.legacyRecords(ctx, doc, dlo, dhi)
	if err != nil {
		return 0, err
	}
	alo, ahi := LegacyActivityHistoryRange()
	activities, err := s.legacyRecords(ctx, doc, alo, ahi)
	if err != nil {
		return 0, err
	}
	keyed, err := s.versionRecords(ctx, doc, DocumentVersionPrefix, 1, MaxVersion)
	if err != nil {
		return 0, err
	}
	type write struct {
		put  Item
		from string // the earlier key it moves from; "" for a record put again
	}
	var writes []write
	for _, it := range docs {
		from := it.SK
		it.SK, it.HistoryByVersion = DocumentVersionSK(it.Version), true
		writes = append(writes, write{it, from})
	}
	for _, it := range activities {
		from := it.SK
		it.SK = ActivityVersionSK(it.Version)
		writes = append(writes, write{it, from})
	}
	for _, it := range keyed {
		if !it.HistoryByVersion {
			it.HistoryByVersion = true
			writes = append(writes, write{put: it})
		}
	}
	slices.SortStableFunc(writes, func(a, b write) int { return cmp.Compare(a.put.Version, b.put.Version) })
	moved := 0
	for len(writes) > 0 {
		tx := &txBuilder{table: s.name}
		n := 0
		for _, w := range writes {
			size := 1
			if w.from != "" {
				size = 2
			}
			if len(tx.items)+size > maxTransactItems {
				break
			}
			tx.put(w.put, nil)
			if w.from != "" {
				tx.delete(w.put.PK, w.from, nil)
				moved++
			}
			n++
		}
		in, err := tx.input()
		if err != nil {
			return 0, err
		}
		if _, err := s.db.Client().TransactWriteItems(ctx, in); err != nil {
			return 0, fmt.Errorf("store: move the history records of document %s: %w", doc, err)
		}
		writes = writes[n:]
	}
	return moved, nil
}

// recentFromRecords is the recent versions (recent.go) of the head at
// version head, from the version-ordered history records.
func (s *Store) recentFromRecords(ctx context.Context, doc string, head int) ([]byte, error) {
	oldest := max(head-OverviewHistory, 1)
	docs, err := s.versionRecords(ctx, doc, DocumentVersionPrefix, oldest, head)
	if err != nil {
		return nil, err
	}
	activities, err := s.versionRecords(ctx, doc, ActivityVersionPrefix, oldest, head)
	if err != nil {
		return nil, err
	}
	byVersion := map[int]*fund.CapitalActivity{}
	for i := range activities {
		a := activities[i].Activity()
		byVersion[a.Version] = &a.CapitalActivity
	}
	out := make([]recentVersion, 0, len(docs))
	for i := len(docs) - 1; i >= 0; i-- {
		h := docs[i].Header()
		out = append(out, recentVersion{DocumentFields: h.DocumentFields, Version: h.Version, PositionCount: h.PositionCount,
			CreatedAt: h.CreatedAt, CreatedBy: h.CreatedBy, Voided: h.Voided, Activity: byVersion[h.Version]})
	}
	return encodeRecent(out)
}
