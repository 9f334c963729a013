package store

import (
	"github.com/fundsvc/fundsvc/fund"

	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/guregu/dynamo/v2"
)

// Replay is a stored response, returned byte for byte to a repeated request.
type Replay struct {
	Status int
	Header map[string]string
	Body   []byte
}

// idempotencyItem is the stored form of an idempotency record and of the
// chunks of its response body.
type idempotencyItem struct {
	PK          string
	SK          string
	Type        string
	RequestHash string            `dynamo:",omitempty"`
	State       string            `dynamo:",omitempty"`
	Owner       string            `dynamo:",omitempty"`
	LeaseUntil  int64             `dynamo:",omitempty"` // unix milliseconds
	ExpiresAt   int64             // unix seconds: the table's TTL attribute
	Status      int               `dynamo:",omitempty"`
	Header      map[string]string `dynamo:",omitempty"`
	Chunks      int               `dynamo:",omitempty"`
	// BodyOwner names the owner whose chunks (IdempotencyBodySK) hold the
	// body of a done record.
	BodyOwner string `dynamo:",omitempty"`
	Body      []byte `dynamo:",omitempty"`
}

const (
	stateInFlight = "in_flight"
	stateDone     = "done"
	// bodyChunk keeps each chunk well under DynamoDB's 400 KB item limit.
	bodyChunk = 300 << 10
)

// IdempotentRequest names the request of a principal (scope) made with an
// Idempotency-Key, for the version it writes (fund.Document.RequestID): a
// repeat of the request after a lost answer finds that version and returns
// it instead of adding one. What the name holds is the store's own.
func IdempotentRequest(scope, key string) string { return IdempotencyPK(scope, key) }

// BeginIdempotent claims an idempotency key of a principal (scope) for a
// request with the given hash. It returns an owner token when the caller
// should run the request, or the stored response to replay. It returns
// ECONFLICT while the first request with the key is still running (its lease
// not expired) and EIDEMPOTENCY if the key was used for another request.
// An expired record, or an abandoned one of the same request whose lease
// has run out (its writer died or stalled), is taken over: the new owner's
// answer is the one stored, whatever the stale owner does later.
func (s *Store) BeginIdempotent(ctx context.Context, scope, key, requestHash string, now time.Time, lease, ttl time.Duration) (string, *Replay, error) {
	pk := IdempotencyPK(scope, key)
	owner := randomHex(8)
	rec := idempotencyItem{
		PK: pk, SK: IdempotencyRecordSK, Type: TypeIdempotency, RequestHash: requestHash,
		State: stateInFlight, Owner: owner, LeaseUntil: now.Add(lease).UnixMilli(), ExpiresAt: now.Add(ttl).Unix(),
	}
	err := s.table.Put(rec).If("attribute_not_exists($) OR $ < ? OR ($ = ? AND $ < ? AND $ = ?)",
		AttrPK, AttrExpiresAt, now.Unix(), "State", stateInFlight, "LeaseUntil", now.UnixMilli(), "RequestHash", requestHash).Run(ctx)
	if err == nil {
		return owner, nil, nil
	}
	if !dynamo.IsCondCheckFailed(err) {
		return "", nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	var head idempotencyItem
	err = s.table.Get(AttrPK, pk).Range(AttrSK, dynamo.Equal, IdempotencyRecordSK).Consistent(true).One(ctx, &head)
	switch {
	case errors.Is(err, dynamo.ErrNotFound): // released between the claim and the read
		return "", nil, fund.Errorf(fund.ECONFLICT, "a request with this Idempotency-Key is in flight; retry shortly")
	case err != nil:
		return "", nil, fmt.Errorf("read idempotency key: %w", err)
	case head.RequestHash != requestHash:
		return "", nil, &fund.Error{Code: fund.EIDEMPOTENCY, Field: "Idempotency-Key", Message: "this Idempotency-Key was used for a different request; use a new key"}
	case head.State != stateDone:
		return "", nil, fund.Errorf(fund.ECONFLICT, "a request with this Idempotency-Key is in flight; retry shortly")
	}
	body, err := s.storedBody(ctx, pk, head)
	if err != nil {
		return "", nil, fmt.Errorf("stored response of an idempotency key: %w", err)
	}
	return "", &Replay{Status: head.Status, Header: head.Header, Body: body}, nil
}

// storedBody reads the body of a done record: exactly the chunks of the owner
// that completed it, never those a stale owner left beside them.
func (s *Store) storedBody(ctx context.Context, pk string, head idempotencyItem) ([]byte, error) {
	prefix := IdempotencyBodyPrefix(head.BodyOwner)
	var items []idempotencyItem
	if err := s.table.Get(AttrPK, pk).Range(AttrSK, dynamo.BeginsWith, prefix).Consistent(true).All(ctx, &items); err != nil {
		return nil, err
	}
	bySK := make(map[string][]byte, len(items))
	for _, it := range items {
		bySK[it.SK] = it.Body
	}
	var z []byte
	for i := 0; i < head.Chunks; i++ {
		b, ok := bySK[IdempotencyBodySK(head.BodyOwner, i)]
		if !ok {
			return nil, fmt.Errorf("chunk %d of %d is missing", i, head.Chunks)
		}
		z = append(z, b...)
	}
	return gunzip(z)
}

// FinishIdempotent stores the response of the request that owns the key.
// The body is compressed and split into chunks of this owner, written before
// the record is marked done and named as this owner's, so a replay never
// sees a partial body nor another owner's. It returns ECONFLICT if the key
// is no longer this owner's (its lease ended and a repeat took it over, or
// it expired): nothing is stored then, and the chunks just written are
// deleted, best-effort (they expire with the TTL otherwise).
func (s *Store) FinishIdempotent(ctx context.Context, scope, key, owner string, r Replay, now time.Time, ttl time.Duration) error {
	pk := IdempotencyPK(scope, key)
	z, err := gzipBytes(r.Body)
	if err != nil {
		return err
	}
	expires := now.Add(ttl).Unix()
	var chunks []any
	var keys []dynamo.Keyed
	for i := 0; i*bodyChunk < len(z); i++ {
		chunks = append(chunks, idempotencyItem{PK: pk, SK: IdempotencyBodySK(owner, i), Type: TypeIdempotency, ExpiresAt: expires,
			Body: z[i*bodyChunk : min((i+1)*bodyChunk, len(z))]})
		keys = append(keys, dynamo.Keys{pk, IdempotencyBodySK(owner, i)})
	}
	if err := s.batchPut(ctx, chunks); err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	// Only the owner condition, not the state: a retried update of this very
	// owner must succeed again rather than look like a lost key.
	err = s.table.Update(AttrPK, pk).Range(AttrSK, IdempotencyRecordSK).
		Set("State", stateDone).Set("Status", r.Status).Set("Header", r.Header).Set("Chunks", len(chunks)).
		Set("BodyOwner", owner).Set(AttrExpiresAt, expires).Remove("LeaseUntil").
		If("$ = ?", "Owner", owner).Run(ctx)
	if dynamo.IsCondCheckFailed(err) {
		// Another owner holds the record; these chunks are named by no record.
		_, _ = s.table.Batch(AttrPK, AttrSK).Write().Delete(keys...).Run(ctx)
		return fund.Errorf(fund.ECONFLICT, "the Idempotency-Key was taken over by a repeat after this request's lease ended; its answer was not stored")
	}
	if err != nil {
		return fmt.Errorf("complete idempotency record: %w", err)
	}
	return nil
}

// AbandonIdempotent releases a key whose request failed on the server's
// side, so that repeating it runs it again at once. A key another owner has
// taken over is left alone.
func (s *Store) AbandonIdempotent(ctx context.Context, scope, key, owner string) error {
	err := s.table.Delete(AttrPK, IdempotencyPK(scope, key)).Range(AttrSK, IdempotencyRecordSK).If("$ = ?", "Owner", owner).Run(ctx)
	if err != nil && !dynamo.IsCondCheckFailed(err) {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return out, r.Close()
}
