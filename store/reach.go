package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// ErrTableMissing is the error of CheckTable when DynamoDB answers but has
// no table of the store's name. It is EUNAVAILABLE and names no table, as
// /readyz answers it to anyone.
var ErrTableMissing = &fund.Error{Code: fund.EUNAVAILABLE, Message: "the table does not exist"}

// CheckTable checks that DynamoDB answers and the table exists, with one
// GetItem of a key no item has, as serve does at start and /readyz on
// every call. (DescribeTable would say as much, but DynamoDB Local answers
// it by counting the table: seconds on a few hundred thousand items.) It
// returns an error wrapping ErrUnreachable when no connection could be
// opened, ErrTableMissing when there is no such table, and DynamoDB's own
// error otherwise (throttling as EUNAVAILABLE, access denied, ...).
func (s *Store) CheckTable(ctx context.Context) error {
	var it Item
	err := s.table.Get(AttrPK, PingPK).Range(AttrSK, dynamo.Equal, PingPK).One(ctx, &it)
	var missing *types.ResourceNotFoundException
	switch {
	case err == nil || errors.Is(err, dynamo.ErrNotFound):
		return nil
	case errors.As(err, &missing):
		return fmt.Errorf("%w: %w", ErrTableMissing, err)
	}
	return err
}

// TableMissing reports whether err says the store's table does not exist:
// ErrTableMissing, or DynamoDB's ResourceNotFoundException from any
// operation on the table (DescribeTable, a read, a write).
func TableMissing(err error) bool {
	var missing *types.ResourceNotFoundException
	return errors.Is(err, ErrTableMissing) || errors.As(err, &missing)
}
