package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
)

// StoredItem is a position item as its Query returned it, not yet decoded:
// what a reader that memoizes its answer to an item reads, deciding access
// on Owner and decoding only the items it has not answered before (api's
// item answers, for the position read across documents).
//
// The hash of its content (HashContent) is the key of such a memo. An
// item's answer is a function of its attributes alone (the decoding reads
// nothing else), so two items of equal content answer alike, and a memo
// keyed by it is not stale: a restatement or an update in place that changes any attribute changes the content, and its hash but
// for a chance of about 2^-128. Nothing rests on an item being immutable.
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

// ContentSeeds are the keys of HashContent. A process draws its own
// (NewContentSeeds) and never shows or stores them, so no one outside it
// can prepare contents that collide: maphash is not a cryptographic hash,
// and its secret seeds are its defence.
type ContentSeeds struct{ a, b maphash.Seed }

// NewContentSeeds draws a pair of seeds.
func NewContentSeeds() ContentSeeds { return ContentSeeds{maphash.MakeSeed(), maphash.MakeSeed()} }

// ContentHash is a 128-bit hash of an item's whole content.
type ContentHash [2]uint64

// HashContent hashes the item's content: every attribute, by name, with
// its type and value, each part length-prefixed. Two items with the same
// attributes hash alike, whatever their maps' order; two items whose
// attributes differ in anything hash alike with a chance of about 2^-128
// (two independent 64-bit keyed hashes). Each attribute is hashed on its
// own and the hashes summed, which needs no sort of the names: sorting
// them cost more than all else. It reports false
// for an attribute of a type DynamoDB did not have when this was written;
// such an item is not to be memoized.
func (s StoredItem) HashContent(seeds ContentSeeds) (ContentHash, bool) {
	var scratch [512]byte
	return hashMap(seeds, s.av, scratch[:0])
}

// hashMap sums the hashes of m's entries, each its name and its value,
// encoded in scratch's space.
func hashMap(seeds ContentSeeds, m map[string]types.AttributeValue, scratch []byte) (ContentHash, bool) {
	var h ContentHash
	for name, v := range m {
		b, ok := appendValue(seeds, appendBytes(scratch[:0], name), v)
		if !ok {
			return ContentHash{}, false
		}
		h[0] += maphash.Bytes(seeds.a, b)
		h[1] += maphash.Bytes(seeds.b, b)
	}
	return h, true
}

// appendValue appends av's type and value to b; a map's value is its hash,
// encoded in the space after b.
func appendValue(seeds ContentSeeds, b []byte, av types.AttributeValue) ([]byte, bool) {
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
			if b, ok = appendValue(seeds, b, e); !ok {
				return b, false
			}
		}
		return b, true
	case *types.AttributeValueMemberM:
		h, ok := hashMap(seeds, v.Value, b[len(b):])
		b = binary.AppendUvarint(append(b, 'M'), uint64(len(v.Value)))
		return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(b, h[0]), h[1]), ok
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
