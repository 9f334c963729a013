package fund

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// UnmarshalDynamoItem decodes a stored item attribute by attribute, as
// guregu's reflection would, without the reflection: a document's Query
// decodes hundreds of items, and reflection was most of the service's CPU
// time on such reads. Unknown attributes are ignored. Writes still encode
// through reflection; TestItemDecoderMatchesReflection keeps the two in step.
func (it *Item) UnmarshalDynamoItem(av map[string]types.AttributeValue) error {
	*it = Item{}
	for name, v := range av {
		var err error
		switch name {
		case "PK":
			it.PK, err = attrString(v)
		case "SK":
			it.SK, err = attrString(v)
		case "GSI1PK":
			it.GSI1PK, err = attrString(v)
		case "GSI1SK":
			it.GSI1SK, err = attrString(v)
		case "GSI2PK":
			it.GSI2PK, err = attrString(v)
		case "GSI2SK":
			it.GSI2SK, err = attrString(v)
		case "Type":
			it.Type, err = attrString(v)
		case "DocumentID":
			it.DocumentID, err = attrString(v)
		case "FundID":
			it.FundID, err = attrString(v)
		case "InvestorID":
			it.InvestorID, err = attrString(v)
		case "PositionID":
			it.PositionID, err = attrString(v)
		case "Kind":
			it.Kind, err = attrString(v)
		case "Title":
			it.Title, err = attrString(v)
		case "AsOf":
			it.AsOf, err = attrDate(v)
		case "Currency":
			it.Currency, err = attrString(v)
		case "PositionCount":
			it.PositionCount, err = attrInt(v)
		case "Version":
			it.Version, err = attrInt(v)
		case "CommitID":
			it.CommitID, err = attrString(v)
		case "ContentHash":
			it.ContentHash, err = attrString(v)
		case "Materialized":
			it.Materialized, err = attrBool(v)
		case "Tombstone":
			it.Tombstone, err = attrBool(v)
		case "Status":
			it.Status, err = attrString(v)
		case "Amount":
			it.Amount, err = attrMoney(v)
		case "Date":
			it.Date, err = attrDate(v)
		case "Description":
			it.Description, err = attrString(v)
		case "Investment":
			it.Investment, err = attrMoney(v)
		case "ManagementFee":
			it.ManagementFee, err = attrMoney(v)
		case "FundExpenses":
			it.FundExpenses, err = attrMoney(v)
		case "ReturnOfCapital":
			it.ReturnOfCapital, err = attrMoney(v)
		case "RealizedGain":
			it.RealizedGain, err = attrMoney(v)
		case "Income":
			it.Income, err = attrMoney(v)
		case "Recallable":
			it.Recallable, err = attrMoney(v)
		case "Withholding":
			it.Withholding, err = attrMoney(v)
		case "Commitment":
			it.Commitment, err = attrMoney(v)
		case "CreatedAt":
			it.CreatedAt, err = attrTime(v)
		case "CreatedBy":
			it.CreatedBy, err = attrString(v)
		case "RequestID":
			it.RequestID, err = attrString(v)
		}
		if err != nil {
			return fmt.Errorf("item attribute %s: %w", name, err)
		}
	}
	return nil
}

func attrString(v types.AttributeValue) (string, error) {
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("want a string, got %T", v)
	}
	return s.Value, nil
}

func attrInt(v types.AttributeValue) (int, error) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("want a number, got %T", v)
	}
	return strconv.Atoi(n.Value)
}

func attrBool(v types.AttributeValue) (bool, error) {
	b, ok := v.(*types.AttributeValueMemberBOOL)
	if !ok {
		return false, fmt.Errorf("want a boolean, got %T", v)
	}
	return b.Value, nil
}

func attrDate(v types.AttributeValue) (Date, error) {
	s, err := attrString(v)
	if err != nil {
		return Date{}, err
	}
	var d Date
	err = d.UnmarshalText([]byte(s))
	return d, err
}

func attrTime(v types.AttributeValue) (time.Time, error) {
	s, err := attrString(v)
	if err != nil {
		return time.Time{}, err
	}
	var t time.Time
	err = t.UnmarshalText([]byte(s))
	return t, err
}

func attrMoney(v types.AttributeValue) (*Money, error) {
	var m Money
	if err := m.UnmarshalDynamo(v); err != nil {
		return nil, err
	}
	return &m, nil
}
