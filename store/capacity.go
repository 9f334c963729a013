package store

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/guregu/dynamo/v2/dynamodbiface"
)

// Capacity is DynamoDB capacity units: read units (a strongly consistent
// read of up to 4 KB is one, an eventually consistent one half) and write
// units (a write of up to 1 KB is one; transactions count twice). They are
// fractional, so float64; on an on-demand table they are the request units
// DynamoDB bills.
type Capacity struct {
	Read, Write float64
}

// Add returns c + o.
func (c Capacity) Add(o Capacity) Capacity {
	return Capacity{Read: c.Read + o.Read, Write: c.Write + o.Write}
}

// Sub returns c - o.
func (c Capacity) Sub(o Capacity) Capacity {
	return Capacity{Read: c.Read - o.Read, Write: c.Write - o.Write}
}

// Consumption is the capacity consumed per DynamoDB operation (GetItem,
// Query, TransactWriteItems, ...), as DynamoDB reported it.
type Consumption map[string]Capacity

// Total is the capacity of every operation together.
func (c Consumption) Total() Capacity {
	var t Capacity
	for _, op := range slices.Sorted(maps.Keys(c)) { // summed in a fixed order, so a total is reproducible
		t = t.Add(c[op])
	}
	return t
}

// Sub is what was consumed between an earlier reading, before, and c.
func (c Consumption) Sub(before Consumption) Consumption {
	d := Consumption{}
	for op, units := range c {
		if u := units.Sub(before[op]); u != (Capacity{}) {
			d[op] = u
		}
	}
	return d
}

// Consumed is the capacity consumed so far by every request of the
// DynamoDB client the store was made with (NewDB), per operation: the
// store's own and those of anyone else sharing that client. It counts
// what DynamoDB returns in ConsumedCapacity, which every request the
// client sends asks for; requests that fail return none (a refused
// condition or a cancelled transaction is billed by DynamoDB all the
// same), so they are not counted. For a store on a *dynamo.DB that NewDB
// did not make it is empty.
func (s *Store) Consumed() Consumption {
	if mc, ok := s.db.Client().(meteredClient); ok {
		return mc.meter.reading()
	}
	return Consumption{}
}

// meteredClient is the SDK client NewDB makes, with the meter its
// middleware adds to, so that a Store on it can read the meter, and the
// clock its middleware measures (clock.go).
type meteredClient struct {
	*dynamodb.Client
	meter *meter
	clock *tableClock
}

// meter sums the consumed capacity of every response, per operation.
type meter struct {
	mu     sync.Mutex
	byOp   map[string]Capacity
	phases map[Phase]PhaseTotals // of document writes (phases.go)
}

func newMeter() *meter { return &meter{byOp: map[string]Capacity{}} }

func (m *meter) reading() Consumption {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.byOp)
}

func (m *meter) add(op string, c Capacity) {
	if c == (Capacity{}) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byOp[op] = m.byOp[op].Add(c)
}

// count is a client middleware: it asks every request for its consumed
// capacity (INDEXES, so that tables and indexes are both in the figure;
// a request that asked for it already keeps its own choice) and adds what
// the response reports to the meter, and the request to its write phase. The input is copied before it is
// changed: callers may send one input from several goroutines.
func (m *meter) count(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("fundsvcConsumedCapacity",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			in.Parameters = askConsumed(in.Parameters)
			out, md, err := next.HandleInitialize(ctx, in)
			m.countPhase(ctx, in.Parameters, out.Result)
			if err == nil {
				if op, kind, cs := consumed(out.Result); op != "" {
					m.add(op, units(kind, cs))
				}
			}
			return out, md, err
		}), middleware.After)
}

// ask returns rc, or INDEXES if the caller asked for nothing.
func ask(rc types.ReturnConsumedCapacity) types.ReturnConsumedCapacity {
	if rc == "" || rc == types.ReturnConsumedCapacityNone {
		return types.ReturnConsumedCapacityIndexes
	}
	return rc
}

// askConsumed returns a copy of a request's input that asks for its
// consumed capacity (ask): the input of every read and write has a
// ReturnConsumedCapacity field; inputs of operations that return none
// (CreateTable, DescribeTable, ...) have none and come back as they are.
func askConsumed(p any) any {
	in := reflect.ValueOf(p)
	if in.Kind() != reflect.Pointer || in.IsNil() || in.Elem().Kind() != reflect.Struct {
		return p
	}
	f, ok := in.Elem().Type().FieldByName("ReturnConsumedCapacity")
	if !ok || f.Type != reflect.TypeFor[types.ReturnConsumedCapacity]() {
		return p
	}
	c := reflect.New(in.Elem().Type())
	c.Elem().Set(in.Elem())
	rc := c.Elem().FieldByIndex(f.Index)
	rc.Set(reflect.ValueOf(ask(types.ReturnConsumedCapacity(rc.String()))))
	return c.Interface()
}

type kind int

const (
	reads kind = iota
	writes
)

// consumed is the operation, its kind and the consumed capacity of a
// response; op is empty for responses that carry none.
func consumed(result any) (op string, k kind, cs []types.ConsumedCapacity) {
	one := func(c *types.ConsumedCapacity) []types.ConsumedCapacity {
		if c == nil {
			return nil
		}
		return []types.ConsumedCapacity{*c}
	}
	switch r := result.(type) {
	case *dynamodb.GetItemOutput:
		return "GetItem", reads, one(r.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		return "Query", reads, one(r.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		return "Scan", reads, one(r.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		return "BatchGetItem", reads, r.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		return "TransactGetItems", reads, r.ConsumedCapacity
	case *dynamodb.PutItemOutput:
		return "PutItem", writes, one(r.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return "UpdateItem", writes, one(r.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return "DeleteItem", writes, one(r.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		return "BatchWriteItem", writes, r.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		return "TransactWriteItems", writes, r.ConsumedCapacity
	}
	return "", reads, nil
}

// units sums a response's consumed capacity, tables and indexes together.
// Where DynamoDB splits a figure into read and write units it is taken as
// split; a bare CapacityUnits is of the operation's kind.
func units(k kind, cs []types.ConsumedCapacity) Capacity {
	var c Capacity
	for _, cc := range cs {
		r, w := aws.ToFloat64(cc.ReadCapacityUnits), aws.ToFloat64(cc.WriteCapacityUnits)
		switch total := aws.ToFloat64(cc.CapacityUnits); {
		case r != 0 || w != 0:
			c = c.Add(Capacity{Read: r, Write: w})
		case k == writes:
			c.Write += total
		default:
			c.Read += total
		}
	}
	return c
}

// ItemSize is the size of an item as DynamoDB counts it for capacity
// units and its 400 KB limit: the UTF-8 bytes of every attribute's name
// and value, a number one byte per two significant digits plus one, a
// Boolean or null one byte, a list or map 3 bytes plus one byte per
// element. The rules are those of "DynamoDB item sizes and formats"
// (docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html);
// the benchmarks compare consumed capacity with the minimum these sizes
// give. (No maintained Go package computes it from SDK attribute values;
// the rules are a few lines.)
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is a number's size: one byte per two significant digits
// (leading and trailing zeros trimmed), plus one.
func numberSize(s string) int {
	digits := strings.TrimLeft(strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.SplitN(strings.ToLower(s), "e", 2)[0]), "0")
	digits = strings.TrimRight(digits, "0")
	return (len(digits)+1)/2 + 1
}

// NewDB's client is what guregu's DB drives.
var _ dynamodbiface.DynamoDBAPI = meteredClient{}
