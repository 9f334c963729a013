// Package rules holds DynamoDB's capacity rules. The benchmarks use them to
// compute the least capacity an operation on items of given sizes can
// consume ("DynamoDB read and write operations",
// docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
//
//   - a strongly consistent read of up to 4 KB is one read unit, an
//     eventually consistent one half;
//   - a Query or a Scan page sums the sizes of the items it returns and
//     rounds up once;
//   - a write of up to 1 KB is one write unit, rounded up per item, and
//     again for each global secondary index that holds the item;
//   - transactional requests count twice.
//
// Item sizes are store.ItemSize's.
package rules

import (
	"math"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/store"
)

// The sizes of a read and a write unit.
const (
	ReadUnitBytes  = 4096
	WriteUnitBytes = 1024
)

// ReadUnits is what one read (a GetItem, a Query or a Scan page) of bytes
// consumes.
func ReadUnits(bytes int, consistent bool) float64 {
	u := math.Ceil(float64(bytes) / ReadUnitBytes)
	if !consistent {
		u /= 2
	}
	return u
}

// QueryMinimum is the least a Query (or a Scan page) returning items can
// consume, and their size in bytes.
func QueryMinimum(items []map[string]types.AttributeValue, consistent bool) (store.Capacity, int) {
	bytes := 0
	for _, it := range items {
		bytes += store.ItemSize(it)
	}
	return store.Capacity{Read: ReadUnits(bytes, consistent)}, bytes
}

// Indexes is how many global secondary indexes hold item (each has a key
// of its own; both project every attribute).
func Indexes(item map[string]types.AttributeValue) int {
	n := 0
	for _, pk := range []string{store.AttrGSI1PK, store.AttrGSI2PK} {
		if _, ok := item[pk]; ok {
			n++
		}
	}
	return n
}

// WriteUnits is what a standard put of item costs, indexes included.
func WriteUnits(item map[string]types.AttributeValue) float64 {
	return math.Ceil(float64(store.ItemSize(item))/WriteUnitBytes) * float64(1+Indexes(item))
}
