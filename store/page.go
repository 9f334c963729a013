package store

import (
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/guregu/dynamo/v2"
)

// PageKey is where a paginated read resumes. It is opaque bytes to every
// other package (the api seals it into a cursor); inside, it is the
// DynamoDB key of the last item read, as JSON of its string attributes
// (every key attribute of the table is a string). An alias, so that
// consumers' interfaces can say []byte without importing this package.
type PageKey = []byte

// pageKeyOf encodes DynamoDB's LastEvaluatedKey; nil stays nil.
func pageKeyOf(k dynamo.PagingKey) PageKey {
	if len(k) == 0 {
		return nil
	}
	m := make(map[string]string, len(k))
	for name, av := range k {
		if s, ok := av.(*types.AttributeValueMemberS); ok {
			m[name] = s.Value
		}
	}
	b, _ := json.Marshal(m) // a map of strings always encodes
	return b
}

// paging decodes a page key; an empty one is the start.
func paging(k PageKey) (dynamo.PagingKey, error) {
	if len(k) == 0 {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(k, &m); err != nil || len(m) == 0 {
		return nil, fund.Invalid("cursor", "is not a cursor this query issued; start again without one")
	}
	out := make(dynamo.PagingKey, len(m))
	for name, v := range m {
		out[name] = &types.AttributeValueMemberS{Value: v}
	}
	return out, nil
}
