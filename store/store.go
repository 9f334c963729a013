package store

import (
	"sync/atomic"

	"github.com/fundsvc/fundsvc/fund"

	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// Store keeps documents, their versions and their position items in one
// DynamoDB table. It is safe for concurrent use.
type Store struct {
	db    *dynamo.DB
	table dynamo.Table
	name  string

	// MaxPositions bounds the positions of one document.
	MaxPositions int
	// Parallelism bounds concurrent DynamoDB writes of one ingest.
	Parallelism int
	// Now is the clock: NewStore's is the machine's corrected to
	// DynamoDB's (TableClock), which stamps commits; tests may replace it.
	Now func() time.Time
	// ClaimLease is how long a writer's pending position claims cannot be
	// taken over by a writer of another investor (DefaultClaimLease when
	// zero); it must outlast the write deadline.
	ClaimLease time.Duration
	// ChangeShards is how many shards of each day a commit spreads the
	// change index over (DefaultChangeShards; see changes.go). It may be
	// changed between runs, up or down: the table records the largest
	// count ever written, and ChangedSince queries that many.
	ChangeShards int
	// FeedSettle is how far the event feed's watermark trails the present
	// (ChangeSettleMargin when zero; see SettledUntil).
	FeedSettle time.Duration
	// OnCommit, when set, is called after each version this Store commits
	// (a creation, a restatement or a void), once its transaction is
	// answered: serve wakes the webhook deliverer with it. It must not
	// block.
	OnCommit func()
	// MaxWaitingWriters bounds the writers of one document that may wait,
	// in this process, behind the one writing it; the next is refused with
	// EUNAVAILABLE (DefaultMaxWaitingWriters from NewStore; 0: none waits).
	MaxWaitingWriters int
	// MaxWebhookEndpoints bounds the webhook endpoints naming one fund,
	// and the endpoints of every fund (DefaultMaxWebhookEndpoints from
	// NewStore; see PutWebhookEndpoint).
	MaxWebhookEndpoints int

	// touchedPartBytes splits an event's touched positions (events.go):
	// maxTouchedInline when zero; tests set less.
	touchedPartBytes int

	writers turns // one writer of a document at a time in this process
	shards  shardRecord
	start   startRecord
	stamped atomic.Int64 // the latest commit instant this Store stamped, Unix nanoseconds (ReadInstant)
}

// NewStore returns a Store on the named table.
func NewStore(db *dynamo.DB, table string) *Store {
	s := &Store{
		db: db, table: db.Table(table), name: table,
		MaxPositions: fund.DefaultMaxPositions, Parallelism: 4, ChangeShards: DefaultChangeShards, MaxWaitingWriters: DefaultMaxWaitingWriters,
		MaxWebhookEndpoints: DefaultMaxWebhookEndpoints,
	}
	s.Now = s.TableClock(time.Now)
	return s
}

// ReadInstant is the instant a read begins at, which a read of the latest
// versions names as its basis (docs/knownat.md): the store's clock, or the
// latest commit instant this Store stamped when that is later. A version is
// stamped a millisecond after the one it replaces even when the clock reads
// an earlier instant (commitRequest), and a read that follows a commit in
// this process must know it.
func (s *Store) ReadInstant() time.Time {
	now := s.Now()
	if st := s.stamped.Load(); st > now.UnixNano() {
		return time.Unix(0, st).UTC()
	}
	return now
}

// TableName returns the table's name.
func (s *Store) TableName() string { return s.name }

// TableDefinition is the table fundsvc needs, as CreateTable builds it: keys
// PK/SK, on-demand billing, and the two indexes, each projecting all
// attributes. deploy/ describes the same table; a test keeps them equal.
func TableDefinition(name string) *dynamodb.CreateTableInput {
	str := types.ScalarAttributeTypeS
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(sk), KeyType: types.KeyTypeRange}}
	}
	all := &types.Projection{ProjectionType: types.ProjectionTypeAll}
	var attrs []types.AttributeDefinition
	for _, a := range []string{AttrPK, AttrSK, AttrGSI1PK, AttrGSI1SK, AttrGSI2PK, AttrGSI2SK} {
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: str})
	}
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: attrs,
		KeySchema:            key(AttrPK, AttrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String(IndexGSI1), KeySchema: key(AttrGSI1PK, AttrGSI1SK), Projection: all},
			{IndexName: aws.String(IndexGSI2), KeySchema: key(AttrGSI2PK, AttrGSI2SK), Projection: all},
		},
	}
}

// CreateTable creates the table and both indexes if the table does not exist,
// waits until it is active and enables TTL on ExpiresAt. It is idempotent.
func (s *Store) CreateTable(ctx context.Context) error {
	_, err := s.db.Client().CreateTable(ctx, TableDefinition(s.name))
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s: %w", s.name, err)
	}
	if err := s.table.Wait(ctx); err != nil {
		return fmt.Errorf("wait for table %s: %w", s.name, err)
	}
	// Idempotency records expire through TTL on ExpiresAt.
	ttl, err := s.table.DescribeTTL().Run(ctx)
	if err != nil {
		return fmt.Errorf("describe TTL of table %s: %w", s.name, err)
	}
	if !ttl.Enabled() {
		if err := s.table.UpdateTTL(AttrExpiresAt, true).Run(ctx); err != nil {
			return fmt.Errorf("enable TTL on table %s: %w", s.name, err)
		}
	}
	return nil
}

// Describe returns the table's description.
func (s *Store) Describe(ctx context.Context) (dynamo.Description, error) {
	return s.table.Describe().Run(ctx)
}

// AnyVersion, as Restate's ifMatch, asks only that the document exist
// (If-Match: *): whichever version is current when the write commits.
const AnyVersion = -1

// maxCommitAttempts bounds how often a writer without If-Match re-reads the
// head after losing a race to another writer.
const maxCommitAttempts = 25

// Restate creates or restates a document: it stores d as version N+1 and
// returns it with its server-owned fields set.
//
// ifMatch, when not nil, is the version the caller last saw (0 for "must not
// exist yet"); Restate returns EPRECONDITION if it is not the current one.
// Without it, concurrent writers are serialized and each gets its own version:
// in this process, they take turns in the order they came (a writer waits
// for the ones before it, and gives up when ctx is done; beyond
// MaxWaitingWriters waiting, it is refused with EUNAVAILABLE); across processes,
// a writer that loses the commit to another reads the head and tries again.
// It returns EINVALID for a document that breaks a rule, ECONFLICT if the
// document belongs to another fund, a position to another investor, or if
// the document was voided (a voided document is never restated).
//
// See docs/commit-protocol.md for why a reader never sees a mix of versions
// and why retrying an interrupted call completes it.
func (s *Store) Restate(ctx context.Context, d fund.Document, ifMatch *int) (fund.Document, error) {
	w, err := s.write(ctx, d, ifMatch, writeRestate)
	return w.Document, err
}

// Written is what a write of a document stored: the version, and what it
// changed against the version it replaced (nil when it created the
// document).
type Written struct {
	Document fund.Document
	Changes  *fund.Changes
}

// Write is Restate, also answering what the version changed against the
// one it replaced (Written.Changes), compared with that version as its own
// partition holds it: the comparison the commit makes for the version's
// event.
func (s *Store) Write(ctx context.Context, d fund.Document, ifMatch *int) (Written, error) {
	return s.write(ctx, d, ifMatch, writeWithChanges)
}

// writeMode is what write does.
type writeMode int

const (
	writeRestate     writeMode = iota // store d
	writeWithChanges                  // store d and compare it with the version it replaces
	writeVoid                         // void document d.ID (Void)
)

// write stores d (or, voiding, the voided version of document d.ID) as the
// document's next version; see Restate and Void.
func (s *Store) write(ctx context.Context, d fund.Document, ifMatch *int, mode writeMode) (Written, error) {
	var hash string
	var requestIndex map[string]int
	if mode != writeVoid {
		var err error
		if hash, requestIndex, err = s.prepare(&d); err != nil {
			return Written{}, err
		}
	}
	done, err := s.writers.wait(ctx, d.ID, s.MaxWaitingWriters)
	if err != nil {
		return Written{}, fmt.Errorf("wait for the other writers of document %s: %w", d.ID, err)
	}
	defer done()
	for attempt := 1; ; attempt++ {
		rctx, endRead := s.enter(ctx, PhaseRead)
		head, err := s.head(rctx, d.ID)
		if err != nil {
			return Written{}, err
		}
		// The version this one replaces, as its own partition holds it:
		// what a void copies and what the changes compare with.
		var replaced *fund.Document
		if mode == writeVoid {
			switch {
			case head == nil:
				return Written{}, notFound(d.ID)
			case head.Voided:
				// Voided already, by this request (its answer was lost) or
				// another: the change asked for is in effect, so the answer
				// is that of the void, whatever ifMatch names (RFC 9110
				// 13.1.1 allows a 2xx then); nothing new is written.
				return s.voided(ctx, head)
			case *ifMatch != AnyVersion && *ifMatch != head.Version:
				return Written{}, fund.Errorf(fund.EPRECONDITION, "document %s is at version %d, not %d", d.ID, head.Version, *ifMatch)
			}
			prev, err := s.readVersion(rctx, d.ID, head.CommitID)
			if err != nil {
				return Written{}, err
			}
			replaced = &prev
			d = voidOf(prev, d)
			if hash, requestIndex, err = prepareVoid(&d); err != nil {
				return Written{}, err
			}
		}
		// The very request that committed the head is repeated (its answer
		// was lost): its If-Match held when it committed, so it is not
		// checked again.
		repeat := d.RequestID != "" && head != nil && head.RequestID == d.RequestID && head.ContentHash == hash
		current := 0
		if head != nil {
			current = head.Version
		}
		switch {
		case repeat || ifMatch == nil:
		case *ifMatch == AnyVersion && head == nil:
			return Written{}, fund.Errorf(fund.EPRECONDITION, "If-Match: * but document %s does not exist", d.ID)
		case *ifMatch != AnyVersion && *ifMatch != current:
			return Written{}, fund.Errorf(fund.EPRECONDITION, "document %s is at version %d, not %d", d.ID, current, *ifMatch)
		}
		if head != nil && head.FundID != d.FundID {
			// The other fund is not named: the caller may not administer it.
			return Written{}, &fund.Error{Code: fund.ECONFLICT, Field: "fundId",
				Message: fmt.Sprintf("document %s belongs to another fund; a restatement cannot move it to %s", d.ID, d.FundID)}
		}
		if head != nil && head.Voided {
			// A void is final; a void that died before it was materialized
			// is finished first, so the refusal leaves it whole.
			if _, err := s.voided(ctx, head); err != nil {
				return Written{}, err
			}
			return Written{}, fund.Errorf(fund.ECONFLICT, "document %s was voided by its version %d; a voided document cannot be restated: send the corrected document under a new ID", d.ID, head.Version)
		}
		if repeat || (head != nil && !head.Materialized && head.ContentHash == hash) {
			// This very request committed the head (its answer was lost), or
			// the same content was committed by a call that died before
			// finishing the latest view: finish it rather than add a version.
			d.Version, d.CommitID, d.CreatedAt, d.CreatedBy = head.Version, head.CommitID, head.CreatedAt, head.CreatedBy
			if !head.Materialized {
				if err := s.materialize(ctx, &d, nil); err != nil {
					return Written{}, err
				}
			}
			return s.writtenAgain(ctx, d, mode)
		}
		// The event this commit records names what the version changed,
		// so every restatement compares with the version it replaces.
		if mode != writeVoid && head != nil {
			prev, err := s.readVersion(rctx, d.ID, head.CommitID)
			if err != nil {
				return Written{}, err
			}
			replaced = &prev
		}
		endRead()
		if head != nil && !head.Materialized {
			// The committed version's writer died before it listed the
			// positions it claimed: list them first.
			if err := s.listDead(ctx, head, replaced); err != nil {
				return Written{}, err
			}
		}

		s.nextVersion(&d, head)
		changes := changesOf(replaced, &d)
		t, err := touchedOf(&d, replaced, &changes, s.partBytes())
		if err != nil {
			return Written{}, err
		}
		// The replaced version's claims are its fund's once it is
		// materialized; until then this write reads them.
		carried := replaced
		if head != nil && !head.Materialized {
			carried = nil
		}
		cctx, endClaim := s.enter(ctx, PhaseClaim)
		cl, err := s.claim(cctx, &d, carried, requestIndex)
		endClaim()
		if errors.Is(err, errClaimRace) {
			if attempt < maxCommitAttempts {
				continue
			}
			return Written{}, fund.Errorf(fund.ECONFLICT, "a position ID of document %s is being claimed by other writers; retry", d.ID)
		}
		if err != nil {
			return Written{}, err
		}
		sctx, endStage := s.enter(ctx, PhaseStage)
		err = s.stage(sctx, &d, t, cl.unledgered(changes.Positions.Added))
		endStage()
		if err != nil {
			s.discardStaged(ctx, &d, t)
			s.release(ctx, cl)
			return Written{}, err
		}
		// The shard count this commit indexes under is recorded before the
		// commit, so that no reader can miss a shard it wrote.
		// So is the feed's start, so that no replay starts after an event.
		fctx, endCommit := s.enter(ctx, PhaseCommit)
		if err = s.recordChangeShards(fctx); err == nil {
			err = s.recordEventsStart(fctx, d.CreatedAt)
		}
		if err == nil {
			err = s.commit(fctx, &d, head, hash, cl, t)
		}
		endCommit()
		if dynamo.IsCondCheckFailed(err) {
			// Another writer committed first, this one's claims were
			// revoked or its Idempotency-Key was taken over (it outlived a
			// lease): nothing of it was committed.
			s.discardStaged(ctx, &d, t)
			s.release(ctx, cl)
			if lost, err := s.lostIdempotencyKey(ctx, &d); err != nil {
				return Written{}, err
			} else if lost {
				return Written{}, fund.Errorf(fund.ECONFLICT, "this request's Idempotency-Key was taken over by a repeat of it after its lease ran out; the repeat's answer is the one kept")
			}
			if mode == writeVoid {
				// The next attempt answers: the void another writer made
				// (200), or the version it committed (412 unless If-Match
				// is *, which voids that one).
				if attempt < maxCommitAttempts {
					continue
				}
			} else if ifMatch != nil && *ifMatch != AnyVersion {
				return Written{}, fund.Errorf(fund.EPRECONDITION, "document %s changed while writing version %d", d.ID, d.Version)
			}
			if attempt < maxCommitAttempts {
				continue
			}
			return Written{}, fund.Errorf(fund.ECONFLICT, "document %s is being written by too many callers at once; retry", d.ID)
		}
		if err != nil {
			// The commit may have happened; release revokes the fence first
			// and gives the claims up only if that proves it did not.
			if s.release(ctx, cl) {
				s.discardStaged(ctx, &d, t)
			}
			return Written{}, fmt.Errorf("commit document %s version %d: %w", d.ID, d.Version, err)
		}
		if err := s.materialize(ctx, &d, cl); err != nil {
			return Written{d, nil}, err
		}
		w := Written{Document: d}
		if replaced != nil && mode != writeRestate {
			w.Changes = &changes
		}
		return w, nil
	}
}

// changesOf is what d changed against replaced (nil when d creates the
// document: every position is added).
func changesOf(replaced, d *fund.Document) fund.Changes {
	if replaced == nil {
		replaced = &fund.Document{}
	}
	return fund.Compare(replaced, d)
}

// lostIdempotencyKey reports whether the request that writes d no longer
// owns its Idempotency-Key.
func (s *Store) lostIdempotencyKey(ctx context.Context, d *fund.Document) (bool, error) {
	if d.RequestID == "" || d.RequestOwner == "" {
		return false, nil
	}
	var rec idempotencyItem
	err := s.table.Get(AttrPK, d.RequestID).Range(AttrSK, dynamo.Equal, IdempotencyRecordSK).Consistent(true).One(ctx, &rec)
	if errors.Is(err, dynamo.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the idempotency record of document %s: %w", d.ID, err)
	}
	return rec.Owner != d.RequestOwner, nil
}

// head reads the commit head of a document, or nil if it has none.
func (s *Store) head(ctx context.Context, doc string) (*Item, error) {
	var h Item
	err := s.table.Get(AttrPK, DocPK(doc)).Range(AttrSK, dynamo.Equal, HeadSK).Consistent(true).One(ctx, &h)
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read head of document %s: %w", doc, err)
	}
	return &h, nil
}

// stage writes the version's immutable items in their own partition,
// invisible to readers until a head points at it, and the ledger entries
// of the positions added (Plan.Stage).
func (s *Store) stage(ctx context.Context, d *fund.Document, t touched, added []string) error {
	reqs, err := s.stageRequests(d, t, added)
	if err == nil {
		err = s.batchWrite(ctx, reqs)
	}
	if err != nil {
		return fmt.Errorf("stage document %s version %d: %w", d.ID, d.Version, err)
	}
	return nil
}

// commit flips the head to d in one transaction (Plan.Commit). It fails the
// condition check if another writer moved the head since it was read.
func (s *Store) commit(ctx context.Context, d *fund.Document, prev *Item, hash string, cl *claims, t touched) error {
	in, err := s.commitRequest(d, prev, hash, cl, t)
	if err != nil {
		return err
	}
	_, err = s.db.Client().TransactWriteItems(ctx, in)
	if err == nil && s.OnCommit != nil {
		s.OnCommit()
	}
	return err
}

// materialize lists the version's claimed positions in its fund and,
// beside that, brings the latest view of the document partition to d's
// version; then it marks the head materialized. Every write of the latest view is conditional on not
// overwriting a newer version, so a slow writer cannot undo a faster one;
// if a newer version has taken over, materialize stops quietly.
func (s *Store) materialize(ctx context.Context, d *fund.Document, cl *claims) error {
	var held []claimItem // nil: find out which claims are pending
	if cl != nil {
		held = append([]claimItem{}, cl.held...) // not nil, even when empty
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		ctx, end := s.enter(gctx, PhaseConfirm)
		defer end()
		return s.confirm(ctx, d, held)
	})
	superseded := false
	g.Go(func() error {
		gctx, end := s.enter(gctx, PhaseMaterialize)
		defer end()
		var existing []Item
		// The latest view, not the history records after it.
		err := s.table.Get(AttrPK, DocPK(d.ID)).Range(AttrSK, dynamo.Less, HistoryStart).
			Project(AttrPK, AttrSK, "Type", "Version", "Tombstone", "PositionID").
			Consistent(true).All(gctx, &existing)
		if err != nil {
			return fmt.Errorf("read latest view of document %s: %w", d.ID, err)
		}
		txs, err := s.materializeRequests(d, existing)
		if err == nil {
			err = s.transact(gctx, txs)
		}
		if dynamo.IsCondCheckFailed(err) {
			superseded = true // a newer version owns the latest view now
			return nil
		}
		if err != nil {
			return fmt.Errorf("materialize document %s version %d: %w", d.ID, d.Version, err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	if superseded {
		return nil
	}
	fctx, end := s.enter(ctx, PhaseFinish)
	_, err := s.db.Client().UpdateItem(fctx, s.finishRequest(d))
	end()
	if err != nil && !dynamo.IsCondCheckFailed(err) {
		return fmt.Errorf("mark document %s version %d materialized: %w", d.ID, d.Version, err)
	}
	return nil
}

// listDead lists in its fund the positions that head's version, committed
// by a writer that died before materializing it, claimed (confirm); v is
// that version when read already, nil otherwise.
func (s *Store) listDead(ctx context.Context, head *Item, v *fund.Document) error {
	if v == nil {
		read, err := s.readVersion(ctx, head.DocumentID, head.CommitID)
		if err != nil {
			return err
		}
		v = &read
	}
	ctx, end := s.enter(ctx, PhaseConfirm)
	defer end()
	return s.confirm(ctx, v, nil)
}

// discardStaged deletes the items of a version that lost the race to commit.
// It is best effort: an unreferenced version partition is invisible anyway.
func (s *Store) discardStaged(ctx context.Context, d *fund.Document, t touched) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	pk := VersionPK(d.ID, d.CommitID)
	var keys []dynamo.Keyed
	keys = append(keys, dynamo.Keys{pk, VersionDocumentSK}, dynamo.Keys{pk, VersionCapitalActivitySK})
	for _, it := range positionItems(d, false) {
		keys = append(keys, dynamo.Keys{it.PK, it.SK})
	}
	for _, p := range t.partItems(d) {
		keys = append(keys, dynamo.Keys{p.PK, p.SK})
	}
	_, _ = s.table.Batch(AttrPK, AttrSK).Write().Delete(keys...).Run(ctx)
}

// batchPut writes items with BatchWriteItem, several batches at a time.
func (s *Store) batchPut(ctx context.Context, items []any) error {
	const chunk = 25 * 4
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallelism())
	for i := 0; i < len(items); i += chunk {
		part := items[i:min(i+chunk, len(items))]
		g.Go(func() error {
			_, err := s.table.Batch(AttrPK, AttrSK).Write().Put(part...).Run(gctx)
			return err
		})
	}
	return g.Wait()
}

func (s *Store) partBytes() int {
	if s.touchedPartBytes > 0 {
		return s.touchedPartBytes
	}
	return maxTouchedInline
}

func (s *Store) parallelism() int {
	if s.Parallelism < 1 {
		return 1
	}
	return s.Parallelism
}

// contentHash identifies what the caller sent, apart from server-owned fields.
func contentHash(d fund.Document) (string, error) {
	d.Version, d.CommitID, d.CreatedAt, d.CreatedBy, d.RequestID, d.RequestOwner = 0, "", time.Time{}, "", "", ""
	b, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("hash document %s: %w", d.ID, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
