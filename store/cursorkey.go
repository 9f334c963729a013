package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/guregu/dynamo/v2"
)

// CursorKeyBytes is the length of the cursor key kept in the table.
const CursorKeyBytes = 32

// CursorKey returns the key that seals pagination cursors, kept in the
// table so that every instance serving it seals and opens cursors alike: a
// cursor issued by one instance continues on another. The first caller on a
// table makes a random key and puts it on the condition that none exists;
// callers that start at once all return the one key that won. Costs one
// strongly consistent GetItem, and on a table without a key one PutItem and,
// when another caller's put came first, one more GetItem.
func (s *Store) CursorKey(ctx context.Context) ([]byte, error) {
	if key, err := s.readCursorKey(ctx); err != nil || key != nil {
		return key, err
	}
	key := make([]byte, CursorKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	_, err := s.db.Client().PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.name),
		Item: map[string]types.AttributeValue{
			AttrPK: attrS(CursorKeyPK), AttrSK: attrS(CursorKeySK), "Type": attrS(TypeCursorKey),
			"Key": &types.AttributeValueMemberB{Value: key},
		},
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: exprNames{"#pk": AttrPK},
	})
	switch {
	case err == nil:
		return key, nil
	case dynamo.IsCondCheckFailed(err): // another instance's key came first
		key, err := s.readCursorKey(ctx)
		if err == nil && key == nil {
			err = errors.New("the key another instance put is gone")
		}
		return key, err
	default:
		return nil, fmt.Errorf("store: put the cursor key: %w", err)
	}
}

// readCursorKey reads the table's cursor key: nil when there is none.
func (s *Store) readCursorKey(ctx context.Context) ([]byte, error) {
	var rec struct{ Key []byte }
	err := s.table.Get(AttrPK, CursorKeyPK).Range(AttrSK, dynamo.Equal, CursorKeySK).Consistent(true).One(ctx, &rec)
	switch {
	case errors.Is(err, dynamo.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: read the cursor key: %w", err)
	case len(rec.Key) != CursorKeyBytes:
		return nil, fmt.Errorf("store: the cursor key in the table has %d bytes, want %d", len(rec.Key), CursorKeyBytes)
	}
	return rec.Key, nil
}
