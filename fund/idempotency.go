package fund

import (
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
	Body        []byte            `dynamo:",omitempty"`
}

const (
	stateInFlight = "in_flight"
	stateDone     = "done"
	// bodyChunk keeps each chunk well under DynamoDB's 400 KB item limit.
	bodyChunk = 300 << 10
)

// BeginIdempotent claims an idempotency key of a principal (scope) for a
// request with the given hash. It returns an owner token when the caller
// should run the request, or the stored response to replay. It returns
// ECONFLICT while the first request with the key is still running (its lease
// not expired) and EIDEMPOTENCY if the key was used for another request.
// An expired record, or an abandoned one of the same request whose lease
// has run out (its writer died), is taken over.
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
	var items []idempotencyItem
	if err := s.table.Get(AttrPK, pk).Consistent(true).All(ctx, &items); err != nil {
		return "", nil, fmt.Errorf("read idempotency key: %w", err)
	}
	var head *idempotencyItem
	var chunks [][]byte // in order: BODY#0000, BODY#0001, ...
	for i := range items {
		if items[i].SK == IdempotencyRecordSK {
			head = &items[i]
		} else {
			chunks = append(chunks, items[i].Body)
		}
	}
	switch {
	case head == nil: // released between the claim and the read
		return "", nil, Errorf(ECONFLICT, "a request with this Idempotency-Key is in flight; retry shortly")
	case head.RequestHash != requestHash:
		return "", nil, &Error{Code: EIDEMPOTENCY, Field: "Idempotency-Key", Message: "this Idempotency-Key was used for a different request; use a new key"}
	case head.State != stateDone:
		return "", nil, Errorf(ECONFLICT, "a request with this Idempotency-Key is in flight; retry shortly")
	case len(chunks) < head.Chunks:
		return "", nil, Errorf(ECONFLICT, "the response of this Idempotency-Key is being stored; retry shortly")
	}
	body, err := gunzip(bytes.Join(chunks[:head.Chunks], nil))
	if err != nil {
		return "", nil, fmt.Errorf("stored response of an idempotency key: %w", err)
	}
	return "", &Replay{Status: head.Status, Header: head.Header, Body: body}, nil
}

// FinishIdempotent stores the response of the request that owns the key.
// The body is compressed and split into chunks written before the record is
// marked done, so a replay never sees a partial body.
func (s *Store) FinishIdempotent(ctx context.Context, scope, key, owner string, r Replay, now time.Time, ttl time.Duration) error {
	pk := IdempotencyPK(scope, key)
	z, err := gzipBytes(r.Body)
	if err != nil {
		return err
	}
	expires := now.Add(ttl).Unix()
	var chunks []any
	for i := 0; i*bodyChunk < len(z); i++ {
		chunks = append(chunks, idempotencyItem{PK: pk, SK: IdempotencyBodySK(i), Type: TypeIdempotency, ExpiresAt: expires,
			Body: z[i*bodyChunk : min((i+1)*bodyChunk, len(z))]})
	}
	if err := s.batchPut(ctx, chunks); err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	err = s.table.Update(AttrPK, pk).Range(AttrSK, IdempotencyRecordSK).
		Set("State", stateDone).Set("Status", r.Status).Set("Header", r.Header).Set("Chunks", len(chunks)).
		Set(AttrExpiresAt, expires).Remove("LeaseUntil").
		If("$ = ?", "Owner", owner).Run(ctx)
	if err != nil {
		return fmt.Errorf("complete idempotency record: %w", err)
	}
	return nil
}

// AbandonIdempotent releases a key whose request failed on the server's
// side, so that repeating it runs it again at once.
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
