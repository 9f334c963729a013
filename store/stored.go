package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
)

// StoredItem is a position item as its Query returned it, not yet decoded:
// what a reader that memoizes its answer to an item reads, deciding access
// on Owner and decoding only the items it has not answered before (api's
// item answers, for the position read across documents).
//
// Its content (AppendContent) is the key of such a memo. An item's answer
// is a function of its attributes alone (the decoding reads nothing else),
// so two items of equal content answer alike, and a memo keyed by it is
// never stale: a restatement, a backfill or an update in place that
// changes any attribute changes the content. Nothing rests on an item
// being immutable.
type StoredItem struct {
	av map[string]types.AttributeValue
}

// UnmarshalDynamoItem keeps the item's attributes (guregu's
// ItemUnmarshaler).
func (s *StoredItem) UnmarshalDynamoItem(av map[string]types.AttributeValue) error {
	s.av = av
	return nil
}

// Owner is the fund and the investor of the item's position, which decide
// who may read it.
func (s StoredItem) Owner() (fundID, investorID string) {
	fundID, _ = attrString(s.av[attrFundID])
	investorID, _ = attrString(s.av[attrInvestorID])
	return fundID, investorID
}

// The attributes Owner reads: Item's fields, stored under their names.
const (
	attrFundID     = "FundID"
	attrInvestorID = "InvestorID"
)

// PositionItem decodes the item.
func (s StoredItem) PositionItem() (fund.PositionItem, error) {
	var it Item
	if err := it.UnmarshalDynamoItem(s.av); err != nil {
		return fund.PositionItem{}, err
	}
	return it.PositionItem(), nil
}

// AppendContent appends the item's content to b: every attribute, by name,
// with its type and value, each part length-prefixed, so that two items'
// contents are equal exactly when their attributes are. It reports false,
// and appends nothing, for an attribute of a type DynamoDB did not have
// when this was written; such an item is not to be memoized.
func (s StoredItem) AppendContent(b []byte) ([]byte, bool) {
	n := len(b)
	b, ok := appendMap(b, s.av)
	if !ok {
		return b[:n], false
	}
	return b, true
}

func appendMap(b []byte, m map[string]types.AttributeValue) ([]byte, bool) {
	var names [64]string
	sorted := names[:0]
	for name := range m {
		sorted = append(sorted, name)
	}
	slices.Sort(sorted)
	b = binary.AppendUvarint(b, uint64(len(sorted)))
	for _, name := range sorted {
		b = appendBytes(b, name)
		var ok bool
		if b, ok = appendValue(b, m[name]); !ok {
			return b, false
		}
	}
	return b, true
}

func appendValue(b []byte, av types.AttributeValue) ([]byte, bool) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return appendBytes(append(b, 'S'), v.Value), true
	case *types.AttributeValueMemberN:
		return appendBytes(append(b, 'N'), v.Value), true
	case *types.AttributeValueMemberB:
		return appendBytes(append(b, 'B'), v.Value), true
	case *types.AttributeValueMemberBOOL:
		if v.Value {
			return append(b, 'T'), true
		}
		return append(b, 'F'), true
	case *types.AttributeValueMemberNULL:
		return append(b, '0'), true
	case *types.AttributeValueMemberSS:
		return appendList(append(b, 's'), v.Value), true
	case *types.AttributeValueMemberNS:
		return appendList(append(b, 'n'), v.Value), true
	case *types.AttributeValueMemberBS:
		return appendList(append(b, 'b'), v.Value), true
	case *types.AttributeValueMemberL:
		b = binary.AppendUvarint(append(b, 'L'), uint64(len(v.Value)))
		for _, e := range v.Value {
			var ok bool
			if b, ok = appendValue(b, e); !ok {
				return b, false
			}
		}
		return b, true
	case *types.AttributeValueMemberM:
		return appendMap(append(b, 'M'), v.Value)
	}
	return b, false
}

func appendBytes[S string | []byte](b []byte, s S) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendList[S string | []byte](b []byte, l []S) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = appendBytes(b, s)
	}
	return b
}

// pageKey is the key a page ending on the item resumes after (paged).
func (s *StoredItem) pageKey(index string) PageKey {
	str := func(name string) string { v, _ := attrString(s.av[name]); return v }
	return indexPageKey(&Item{PK: str(AttrPK), SK: str(AttrSK), GSI1PK: str(AttrGSI1PK), GSI1SK: str(AttrGSI1SK),
		GSI2PK: str(AttrGSI2PK), GSI2SK: str(AttrGSI2SK)}, index)
}

// StoredPositionItems is PositionItems with the items undecoded: the same
// one Query of GSI2, the same pages.
func (s *Store) StoredPositionItems(ctx context.Context, pos string, kind fund.ItemKind, limit int, start PageKey) ([]StoredItem, PageKey, error) {
	items, next, err := queryPageOf[StoredItem](ctx, s.positionItemsQuery(pos, kind), IndexGSI2, limit, start)
	if err != nil {
		return nil, nil, fmt.Errorf("items of position %s: %w", pos, err)
	}
	return items, next, nil
}
