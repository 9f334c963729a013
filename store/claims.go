package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
	"golang.org/x/sync/errgroup"
)

// Position claims tie a position ID, globally, to one fund, one investor and
// one currency, so that no document can move money between investors. A
// claim is taken before a version is committed (a document of 5,000 new
// positions cannot claim them inside its commit transaction) and must
// therefore never be visible, nor permanent, unless that commit happens:
//
//   - A writer that needs claims first puts a fence (FENCE#<doc>#<commit>),
//     then puts its claims as pending, naming the fence among their Holders.
//     Its commit transaction sets the fence Committed, on condition that it
//     was not revoked.
//   - A committed fence makes every claim that names it permanent: the
//     commit is what confirms them, and a committed fence is never
//     revoked nor deleted. After the commit, the writer writes each
//     claimed position's registry row in the fund, so the listings (fund
//     positions, investor positions, investor summary) only ever show
//     positions of committed documents.
//   - A refused write (412, 409, an error before the commit) revokes its own
//     fence, which makes its commit impossible, and removes itself from its
//     claims, deleting those it alone held.
//   - A pending claim of another identity is taken over only once every
//     holder's fence is revoked; revoking is conditional on the fence being
//     neither committed nor within its lease. So a live writer keeps its
//     claims, a dead one's claims are free again after the lease, and a
//     committed one's are never taken.
//
// See docs/commit-protocol.md.

// DefaultClaimLease is how long a writer's pending claims are safe from being
// taken over: longer than the default write deadline, so no live writer
// loses them.
const DefaultClaimLease = 5*time.Minute + 10*time.Second

// revokedFenceTTL is how long a revoked fence is kept before the table's TTL
// removes it: long enough that its writer, if still alive, finds it.
const revokedFenceTTL = 7 * 24 * time.Hour

// claimItem is a position's claim as stored.
type claimItem struct {
	PK, SK, Type string
	FundID       string
	InvestorID   string
	PositionID   string
	Currency     string    `dynamo:",omitempty"`
	CreatedAt    time.Time `dynamo:",omitempty"`
	// Pending marks a claim made by this protocol, which is permanent once
	// one of its Holders is committed (committedFences). Confirmed marks
	// one made permanent by an earlier version of this protocol; a claim
	// with neither flag predates pending claims, and is permanent.
	Pending   bool     `dynamo:",omitempty"`
	Confirmed bool     `dynamo:",omitempty"`
	Holders   []string `dynamo:",set,omitempty"` // fences of the writers relying on a pending claim
	// DocumentID is the document whose write put the claim: the claim
	// stands for that document's ledger entry (ledger.go), which its
	// write therefore does not stage. Empty on claims put before.
	DocumentID string `dynamo:",omitempty"`
}

// permanent reports whether the claim can never be taken: it is
// confirmed, predates pending claims, or one of its holders is in committed.
func (c *claimItem) permanent(committed map[string]bool) bool {
	if c.Confirmed || !c.Pending {
		return true
	}
	for _, h := range c.Holders {
		if committed[h] {
			return true
		}
	}
	return false
}

// committedFences reads the fences the pending claims name, and returns
// those that are committed: one BatchGetItem per 100 distinct fences,
// which for the claims of one document are typically one.
func (s *Store) committedFences(ctx context.Context, claims []claimItem) (map[string]bool, error) {
	seen := map[string]bool{}
	var keys []dynamo.Keyed
	for _, c := range claims {
		if c.Confirmed || !c.Pending {
			continue
		}
		for _, h := range c.Holders {
			if !seen[h] {
				seen[h] = true
				keys = append(keys, dynamo.Keys{h, ClaimFenceSK})
			}
		}
	}
	committed := map[string]bool{}
	if len(keys) == 0 {
		return committed, nil
	}
	var fences []fenceItem
	err := s.table.Batch(AttrPK, AttrSK).Get(keys...).Consistent(true).All(ctx, &fences)
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		return nil, fmt.Errorf("read the fences of position claims: %w", err)
	}
	for _, f := range fences {
		if f.Committed {
			committed[f.PK] = true
		}
	}
	return committed, nil
}

// fenceItem decides whether one staged version can still commit.
type fenceItem struct {
	PK, SK, Type string
	DocumentID   string `dynamo:",omitempty"`
	CommitID     string `dynamo:",omitempty"`
	LeaseUntil   int64  `dynamo:",omitempty"` // unix milliseconds
	Committed    bool   `dynamo:",omitempty"`
	Revoked      bool   `dynamo:",omitempty"`
	ExpiresAt    int64  `dynamo:",omitempty"` // TTL, unix seconds; never on a committed fence
}

// claims is what one attempt to write a version holds.
type claims struct {
	fence string      // the fence's key, empty if the writer holds no claim
	doc   string      // the document written
	held  []claimItem // the pending claims that name the fence
}

// unledgered returns the positions of added whose claim the write did not
// put: those need a ledger entry of their own.
func (cl *claims) unledgered(added []string) []string {
	put := map[string]bool{}
	for _, c := range cl.held {
		if c.DocumentID == cl.doc {
			put[c.PositionID] = true
		}
	}
	out := make([]string, 0, len(added))
	for _, pos := range added {
		if !put[pos] {
			out = append(out, pos)
		}
	}
	return out
}

// claimLease returns the configured lease, or the default.
func (s *Store) claimLease() time.Duration {
	if s.ClaimLease > 0 {
		return s.ClaimLease
	}
	return DefaultClaimLease
}

// errClaimRace is returned when a claim changed between the read and the
// conditional write; the writer releases what it holds and tries again.
var errClaimRace = errors.New("a position claim changed while claiming")

// claim takes every claim d needs that is not permanent yet. A position
// that replaced (the committed, materialized version d replaces; nil for
// none) reports for the same investor in the same currency is not read:
// its claim is d's fund's, permanent. It returns ECONFLICT
// if a position belongs to another fund, investor or currency (or is being
// claimed for one by a live writer), and errClaimRace if a claim changed
// meanwhile; in both cases nothing is left held.
func (s *Store) claim(ctx context.Context, d, replaced *fund.Document, requestIndex map[string]int) (*claims, error) {
	need := make([]fund.Position, 0, len(d.Positions))
	for _, p := range d.Positions {
		if replaced != nil && replaced.Currency == d.Currency {
			if q, ok := replaced.PositionByID(p.ID); ok && q.InvestorID == p.InvestorID {
				continue
			}
		}
		need = append(need, p)
	}
	stored, err := s.readClaims(ctx, d.ID, need)
	if err != nil {
		return nil, err
	}
	committed, err := s.committedFences(ctx, stored)
	if err != nil {
		return nil, err
	}
	existing := make(map[string]*claimItem, len(stored))
	for i := range stored {
		existing[stored[i].PositionID] = &stored[i]
	}
	var fresh, join, takeover []*claimItem
	for _, p := range need {
		want := &claimItem{PK: PositionClaimPK(p.ID), SK: PositionClaimSK, Type: TypePositionClaim,
			FundID: d.FundID, InvestorID: p.InvestorID, PositionID: p.ID, Currency: d.Currency, CreatedAt: d.CreatedAt, Pending: true}
		c, ok := existing[p.ID]
		switch {
		case !ok:
			fresh = append(fresh, want)
		case c.FundID == d.FundID && c.InvestorID == p.InvestorID && (c.Currency == "" || c.Currency == d.Currency):
			if !c.permanent(committed) {
				join = append(join, want)
			}
		case c.permanent(committed):
			return nil, claimConflict(c, d, p, requestIndex)
		default:
			takeover = append(takeover, c)
		}
	}
	if len(fresh)+len(join)+len(takeover) == 0 {
		return &claims{doc: d.ID}, nil
	}
	cl := &claims{fence: ClaimFencePK(d.ID, d.CommitID), doc: d.ID}
	fence := fenceItem{PK: cl.fence, SK: ClaimFenceSK, Type: TypeClaimFence, DocumentID: d.ID, CommitID: d.CommitID,
		LeaseUntil: s.Now().Add(s.claimLease()).UnixMilli(), ExpiresAt: s.Now().Add(revokedFenceTTL).Unix()}
	if err := s.table.Put(fence).If("attribute_not_exists($)", AttrPK).Run(ctx); err != nil {
		return nil, fmt.Errorf("fence the claims of document %s: %w", d.ID, err)
	}
	fail := func(err error) (*claims, error) {
		s.release(ctx, cl)
		return nil, err
	}
	for _, old := range takeover {
		p, _ := d.PositionByID(old.PositionID)
		if err := s.takeOver(ctx, old, cl.fence); err != nil {
			if errors.Is(err, errClaimHeld) {
				return fail(claimConflict(old, d, p, requestIndex))
			}
			return fail(err)
		}
		want := &claimItem{PK: old.PK, SK: old.SK, Type: TypePositionClaim, FundID: d.FundID, InvestorID: p.InvestorID,
			PositionID: p.ID, Currency: d.Currency, CreatedAt: d.CreatedAt, Pending: true, Holders: []string{cl.fence}, DocumentID: d.ID}
		cond, args := sameHolders(old.Holders)
		err := s.table.Put(want).If("$ = ? AND attribute_not_exists($) AND "+cond, append([]any{"Pending", true, "Confirmed"}, args...)...).Run(ctx)
		if dynamo.IsCondCheckFailed(err) {
			return fail(errClaimRace)
		}
		if err != nil {
			return fail(fmt.Errorf("take over the claim of position %s: %w", p.ID, err))
		}
		cl.held = append(cl.held, *want)
	}

	type op struct {
		c     *claimItem
		fresh bool
	}
	var ops []op
	for _, c := range fresh {
		c.Holders, c.DocumentID = []string{cl.fence}, d.ID
		ops = append(ops, op{c, true})
	}
	for _, c := range join {
		ops = append(ops, op{c, false})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallelism())
	done := make([]bool, (len(ops)+99)/100)
	for b := 0; b*100 < len(ops); b++ {
		part := ops[b*100 : min((b+1)*100, len(ops))]
		g.Go(func() error {
			tx := s.db.WriteTx()
			for _, o := range part {
				if o.fresh {
					tx = tx.Put(s.table.Put(*o.c).If("attribute_not_exists($)", AttrPK))
					continue
				}
				tx = tx.Update(s.table.Update(AttrPK, o.c.PK).Range(AttrSK, o.c.SK).AddStringsToSet("Holders", cl.fence).
					If("$ = ? AND $ = ? AND $ = ? AND $ = ?", "Pending", true, "FundID", o.c.FundID, "InvestorID", o.c.InvestorID, "Currency", o.c.Currency))
			}
			if err := tx.Run(gctx); err != nil {
				return err
			}
			done[b] = true
			return nil
		})
	}
	err = g.Wait()
	for b, ok := range done {
		if ok {
			for _, o := range ops[b*100 : min((b+1)*100, len(ops))] {
				cl.held = append(cl.held, *o.c)
			}
		}
	}
	if dynamo.IsCondCheckFailed(err) {
		return fail(errClaimRace)
	}
	if err != nil {
		return fail(fmt.Errorf("claim positions of document %s: %w", d.ID, err))
	}
	return cl, nil
}

func claimConflict(c *claimItem, d *fund.Document, p fund.Position, requestIndex map[string]int) error {
	if c.FundID == d.FundID && c.InvestorID == p.InvestorID {
		return &fund.Error{Code: fund.ECONFLICT, Field: "currency",
			Message: fmt.Sprintf("position %s is held in %s, so a document cannot report it in %s", p.ID, c.Currency, d.Currency)}
	}
	return &fund.Error{Code: fund.ECONFLICT, Field: fmt.Sprintf("positions[%d].positionId", requestIndex[p.ID]),
		Message: fmt.Sprintf("position ID %s is already used for another fund or investor; a position is one fund plus one investor", p.ID)}
}

// sameHolders is a condition that the Holders set is exactly holders.
func sameHolders(holders []string) (string, []any) {
	parts := []string{"size($) = ?"}
	args := []any{"Holders", len(holders)}
	for _, h := range holders {
		parts = append(parts, "contains($, ?)")
		args = append(args, "Holders", h)
	}
	return strings.Join(parts, " AND "), args
}

// errClaimHeld means a pending claim's holder may still commit.
var errClaimHeld = errors.New("the claim is held by a live or committed writer")

// takeOver revokes every fence holding a pending claim, so that none of
// their writes can commit. It returns errClaimHeld if one has committed or
// is still within its lease.
func (s *Store) takeOver(ctx context.Context, c *claimItem, by string) error {
	now := s.Now()
	for _, h := range c.Holders {
		if h == by {
			continue
		}
		// Only an existing fence is revoked: an Update would otherwise create
		// one. A holder without a fence released its claims and deleted it
		// (a writer puts its fence before it claims), so it cannot commit.
		err := s.table.Update(AttrPK, h).Range(AttrSK, ClaimFenceSK).
			Set("Revoked", true).Set("Type", TypeClaimFence).Set(AttrExpiresAt, now.Add(revokedFenceTTL).Unix()).
			If("attribute_exists($) AND attribute_not_exists($) AND (attribute_not_exists($) OR $ < ?)", AttrPK, "Committed", "LeaseUntil", "LeaseUntil", now.UnixMilli()).Run(ctx)
		if dynamo.IsCondCheckFailed(err) {
			var f fenceItem
			err := s.table.Get(AttrPK, h).Range(AttrSK, dynamo.Equal, ClaimFenceSK).Consistent(true).One(ctx, &f)
			if errors.Is(err, dynamo.ErrNotFound) {
				continue
			}
			if err != nil {
				return fmt.Errorf("read the fence of a claim of position %s: %w", c.PositionID, err)
			}
			return errClaimHeld
		}
		if err != nil {
			return fmt.Errorf("revoke the fence of a claim of position %s: %w", c.PositionID, err)
		}
	}
	return nil
}

// revoke makes the writer's own commit impossible. It returns false if the
// commit happened, in which case its claims must stay.
func (s *Store) revoke(ctx context.Context, cl *claims) (bool, error) {
	err := s.table.Update(AttrPK, cl.fence).Range(AttrSK, ClaimFenceSK).
		Set("Revoked", true).Set("Type", TypeClaimFence).Set(AttrExpiresAt, s.Now().Add(revokedFenceTTL).Unix()).
		If("attribute_not_exists($)", "Committed").Run(ctx)
	if dynamo.IsCondCheckFailed(err) {
		return false, nil
	}
	return err == nil, err
}

// release gives up the claims of a write that did not, and now cannot,
// commit: it revokes the writer's fence, then removes the fence from each
// claim it holds and deletes the claims no one else holds. It is best
// effort, on a context of its own (the request's may be over): whatever is
// left is pending, invisible to readers, and free again after the lease. It
// reports whether the fence was revoked, which proves the commit did not
// and will not happen.
func (s *Store) release(ctx context.Context, cl *claims) (revoked bool) {
	if cl == nil || cl.fence == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if ok, err := s.revoke(ctx, cl); !ok || err != nil {
		return false
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallelism())
	for _, c := range cl.held {
		pos := c.PositionID
		g.Go(func() error {
			var after claimItem
			err := s.table.Update(AttrPK, PositionClaimPK(pos)).Range(AttrSK, PositionClaimSK).
				DeleteStringsFromSet("Holders", cl.fence).If("attribute_exists($)", AttrPK).Value(gctx, &after)
			if dynamo.IsCondCheckFailed(err) {
				return nil // no such claim
			}
			if err != nil || len(after.Holders) > 0 || after.permanent(nil) {
				return err
			}
			// With the claim goes the ledger entry the write staged
			// (ledger.go): no committed version reports the position, or
			// its claim would be permanent, and a writer that comes to
			// hold the claim again stages its own entry after.
			_ = s.db.WriteTx().
				Delete(s.table.Delete(AttrPK, after.PK).Range(AttrSK, after.SK).
					If("attribute_not_exists($) AND attribute_not_exists($)", "Holders", "Confirmed")).
				Delete(s.table.Delete(AttrPK, PositionClaimPK(pos)).Range(AttrSK, PositionLedgerSK(cl.doc))).
				Run(gctx)
			return nil
		})
	}
	if g.Wait() != nil {
		return true // a claim may still name the fence: keep it revoked
	}
	// No claim names the fence any more. Deleting it keeps the commit
	// impossible too: the commit needs the fence to exist.
	_ = s.table.Delete(AttrPK, cl.fence).Range(AttrSK, ClaimFenceSK).If("$ = ?", "Revoked", true).Run(ctx)
	return true
}

// confirm lists each position a committed version claimed in its fund:
// its registry row, and its investor's note in the fund, so that the
// registry row of a position exists only once a committed document names
// it. Its commit made the claims permanent already (their fence is
// committed). held are the claims the version put or joined; nil means
// "find out", for a call that finishes another's commit. The puts are
// idempotent. (Transactions, not BatchWriteItem: on DynamoDB Local with
// its tables on disk, the bench's, a batch's puts cost several times a
// transaction's.)
func (s *Store) confirm(ctx context.Context, d *fund.Document, held []claimItem) error {
	if held == nil {
		var err error
		if held, err = s.heldClaims(ctx, d); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.parallelism())
	const perTx = 50 // at most two items a position
	// Each investor's note in the fund (records.go) is written by the
	// transaction of its first position only (no transaction may write one
	// item twice, and two concurrent ones writing it would conflict), and
	// only if the fund has none yet: notes are never removed.
	noteAt := map[string]string{}
	for _, c := range held {
		if _, ok := noteAt[c.InvestorID]; !ok {
			noteAt[c.InvestorID] = c.PositionID
		}
	}
	if err := s.dropNoted(ctx, d.FundID, noteAt); err != nil {
		return err
	}
	for i := 0; i < len(held); i += perTx {
		part := held[i:min(i+perTx, len(held))]
		g.Go(func() error {
			tx := s.db.WriteTx()
			for _, c := range part {
				if noteAt[c.InvestorID] == c.PositionID {
					tx = tx.Put(s.table.Put(Item{
						PK: FundPK(d.FundID), SK: FundInvestorSK(c.InvestorID), Type: TypeFundInvestor,
						GSI1PK: InvestorsGSI1PK(c.InvestorID), GSI1SK: FundInvestorGSI1SK(c.InvestorID, d.FundID),
						InvestorID: c.InvestorID, DocumentFields: fund.DocumentFields{FundID: d.FundID},
					}))
				}
				tx = tx.Put(s.table.Put(Item{
					PK: FundPK(d.FundID), SK: FundPositionSK(c.PositionID), Type: TypePosition,
					GSI2PK: InvestorGSI2PK(c.InvestorID), GSI2SK: InvestorPositionGSI2SK(c.PositionID),
					InvestorID: c.InvestorID, PositionID: c.PositionID, CreatedAt: d.CreatedAt, DocumentFields: fund.DocumentFields{FundID: d.FundID, Currency: d.Currency},
				}))
			}
			return tx.Run(gctx)
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("list the positions of document %s version %d in its fund: %w", d.ID, d.Version, err)
	}
	return nil
}

// dropNoted removes from investors those the fund has a note of already:
// one BatchGetItem per 100 investors, of the notes' keys alone.
func (s *Store) dropNoted(ctx context.Context, fundID string, investors map[string]string) error {
	keys := make([]dynamo.Keyed, 0, len(investors))
	for inv := range investors {
		keys = append(keys, dynamo.Keys{FundPK(fundID), FundInvestorSK(inv)})
	}
	if len(keys) == 0 {
		return nil
	}
	var noted []struct{ InvestorID string }
	err := s.table.Batch(AttrPK, AttrSK).Get(keys...).Project("InvestorID").All(ctx, &noted)
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		return fmt.Errorf("read the investors' notes of fund %s: %w", fundID, err)
	}
	for _, n := range noted {
		delete(investors, n.InvestorID)
	}
	return nil
}

// heldClaims reads the claims of d's positions that d's version put or
// joined: those that name its fence.
func (s *Store) heldClaims(ctx context.Context, d *fund.Document) ([]claimItem, error) {
	stored, err := s.readClaims(ctx, d.ID, d.Positions)
	if err != nil {
		return nil, err
	}
	fence := ClaimFencePK(d.ID, d.CommitID)
	return slices.DeleteFunc(stored, func(c claimItem) bool { return !slices.Contains(c.Holders, fence) }), nil
}

// readClaims reads the claims of positions of document doc (strongly
// consistent BatchGetItems, 100 keys each); a position without one has
// none in the answer.
func (s *Store) readClaims(ctx context.Context, doc string, positions []fund.Position) ([]claimItem, error) {
	if len(positions) == 0 {
		return nil, nil
	}
	keys := make([]dynamo.Keyed, 0, len(positions))
	for _, p := range positions {
		keys = append(keys, dynamo.Keys{PositionClaimPK(p.ID), PositionClaimSK})
	}
	var stored []claimItem
	err := s.table.Batch(AttrPK, AttrSK).Get(keys...).Consistent(true).All(ctx, &stored)
	if err != nil && !errors.Is(err, dynamo.ErrNotFound) {
		return nil, fmt.Errorf("read position claims of document %s: %w", doc, err)
	}
	return stored, nil
}
