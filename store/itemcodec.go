package store

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/shopspring/decimal"
)

// Items are encoded and decoded attribute by attribute from a table built
// once, by reflection, from Item's fields: a field added to Item (or to a
// struct it embeds) is stored and read back with no other change. Money is
// a DynamoDB number, exact to 38 significant digits; dates, instants and
// strings are strings, bytes a binary; every field but the keys and Type
// is left out when zero, as guregu's `omitempty` did when it encoded these
// items (an embedded struct tagged omitempty passes it on to its fields). A slice of
// structs (a call's typed transaction lines) is a list of maps whose
// attributes are the element's fields, named by their json tags and left
// out when zero only if that tag says omitempty; an empty slice is not
// stored, and reads back nil.
//
// A codec of its own rather than guregu's reflection: a document's Query
// decodes hundreds of items, and guregu's per-item reflection was most of
// the service's CPU time on such reads; and the domain's Money must not
// know DynamoDB.

// attrCodec stores one field.
type attrCodec struct {
	name   string
	index  []int
	always bool // written even when zero (keys and Type)
	encode func(v reflect.Value) (types.AttributeValue, bool)
	decode func(av types.AttributeValue, v reflect.Value) error
}

// structCodec stores a struct type's fields as attributes (see the top of
// this file): Item's, and the records' (records.go).
type structCodec struct {
	codecs []attrCodec
	byName map[string]*attrCodec
}

// newStructCodec builds the codec of struct type t; two fields stored under
// one name are a programming error.
func newStructCodec(t reflect.Type) *structCodec {
	sc := &structCodec{codecs: codecsOf(t, nil)}
	sc.byName = make(map[string]*attrCodec, len(sc.codecs))
	for i := range sc.codecs {
		c := &sc.codecs[i]
		if sc.byName[c.name] != nil {
			panic("store: two " + t.Name() + " fields are stored as " + c.name)
		}
		sc.byName[c.name] = c
	}
	return sc
}

// encode encodes v, a struct of the codec's type.
func (sc *structCodec) encode(v reflect.Value) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, 16)
	for i := range sc.codecs {
		c := &sc.codecs[i]
		av, nonzero := c.encode(v.FieldByIndex(c.index))
		if av != nil && (nonzero || c.always) {
			out[c.name] = av
		}
	}
	return out
}

// decode decodes av into v, a struct of the codec's type; unknown
// attributes are ignored.
func (sc *structCodec) decode(av map[string]types.AttributeValue, v reflect.Value) error {
	for name, a := range av {
		c := sc.byName[name]
		if c == nil {
			continue
		}
		if err := c.decode(a, v.FieldByIndex(c.index)); err != nil {
			return fmt.Errorf("item attribute %s: %w", name, err)
		}
	}
	return nil
}

var itemCodec = newStructCodec(reflect.TypeFor[Item]())

// codecsOf lists the stored fields of struct type t, flattening embedded
// structs as encoding/json and guregu do.
func codecsOf(t reflect.Type, at []int) []attrCodec {
	var out []attrCodec
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), at...), i)
		omit := strings.Contains(f.Tag.Get("dynamo"), "omitempty")
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, c := range codecsOf(f.Type, index) {
				c.always = c.always && !omit
				out = append(out, c)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		c := attrCodec{name: f.Name, index: index, always: !omit}
		c.encode, c.decode = fieldCodec(f.Type)
		if c.encode == nil {
			panic(fmt.Sprintf("store: Item field %s has type %s, which the item codec does not store", f.Name, f.Type))
		}
		out = append(out, c)
	}
	return out
}

func fieldCodec(t reflect.Type) (func(reflect.Value) (types.AttributeValue, bool), func(types.AttributeValue, reflect.Value) error) {
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
		return listCodec(t.Elem())
	}
	if t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
		return mapCodec(t)
	}
	if t.Kind() == reflect.String {
		t = reflect.TypeFor[string]() // and named strings: a transaction's type
	}
	switch t {
	case reflect.TypeFor[string]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				s := v.String()
				if s == "" {
					return nil, false // never stored, as guregu never stored ""
				}
				return &types.AttributeValueMemberS{Value: s}, true
			}, func(av types.AttributeValue, v reflect.Value) error {
				s, err := attrString(av)
				v.SetString(s)
				return err
			}
	case reflect.TypeFor[int]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				n := v.Int()
				return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}, n != 0
			}, func(av types.AttributeValue, v reflect.Value) error {
				n, err := attrInt(av)
				v.SetInt(int64(n))
				return err
			}
	case reflect.TypeFor[bool]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				b := v.Bool()
				return &types.AttributeValueMemberBOOL{Value: b}, b
			}, func(av types.AttributeValue, v reflect.Value) error {
				b, ok := av.(*types.AttributeValueMemberBOOL)
				if !ok {
					return fmt.Errorf("want a boolean, got %T", av)
				}
				v.SetBool(b.Value)
				return nil
			}
	case reflect.TypeFor[[]byte]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				b := v.Bytes()
				if len(b) == 0 {
					return nil, false // DynamoDB stores no empty binary
				}
				return &types.AttributeValueMemberB{Value: b}, true
			}, func(av types.AttributeValue, v reflect.Value) error {
				b, ok := av.(*types.AttributeValueMemberB)
				if !ok {
					return fmt.Errorf("want a binary, got %T", av)
				}
				v.SetBytes(b.Value)
				return nil
			}
	case reflect.TypeFor[fund.Date]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				d := v.Interface().(fund.Date)
				return &types.AttributeValueMemberS{Value: d.String()}, !d.IsZero()
			}, func(av types.AttributeValue, v reflect.Value) error {
				s, err := attrString(av)
				if err != nil {
					return err
				}
				return v.Addr().Interface().(*fund.Date).UnmarshalText([]byte(s))
			}
	case reflect.TypeFor[time.Time]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				t := v.Interface().(time.Time)
				b, _ := t.MarshalText()
				return &types.AttributeValueMemberS{Value: string(b)}, !t.IsZero()
			}, func(av types.AttributeValue, v reflect.Value) error {
				s, err := attrString(av)
				if err != nil {
					return err
				}
				return v.Addr().Interface().(*time.Time).UnmarshalText([]byte(s))
			}
	case reflect.TypeFor[fund.Money]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				m := v.Interface().(fund.Money)
				return &types.AttributeValueMemberN{Value: m.Decimal().String()}, m.Sign() != 0
			}, func(av types.AttributeValue, v reflect.Value) error {
				m, err := attrMoney(av)
				if err == nil {
					v.Set(reflect.ValueOf(*m))
				}
				return err
			}
	case reflect.TypeFor[*fund.Money]():
		return func(v reflect.Value) (types.AttributeValue, bool) {
				m := v.Interface().(*fund.Money)
				if m == nil {
					return nil, false
				}
				return &types.AttributeValueMemberN{Value: m.Decimal().String()}, true
			}, func(av types.AttributeValue, v reflect.Value) error {
				m, err := attrMoney(av)
				v.Set(reflect.ValueOf(m))
				return err
			}
	}
	return nil, nil
}

// mapCodec stores a map of strings by string (a record's external
// identifiers) as a map attribute; an empty map is not stored, and reads
// back nil.
func mapCodec(t reflect.Type) (func(reflect.Value) (types.AttributeValue, bool), func(types.AttributeValue, reflect.Value) error) {
	return func(v reflect.Value) (types.AttributeValue, bool) {
			if v.Len() == 0 {
				return nil, false
			}
			m := make(map[string]types.AttributeValue, v.Len())
			for it := v.MapRange(); it.Next(); {
				m[it.Key().String()] = &types.AttributeValueMemberS{Value: it.Value().String()}
			}
			return &types.AttributeValueMemberM{Value: m}, true
		}, func(av types.AttributeValue, v reflect.Value) error {
			m, ok := av.(*types.AttributeValueMemberM)
			if !ok {
				return fmt.Errorf("want a map, got %T", av)
			}
			out := reflect.MakeMapWithSize(t, len(m.Value))
			for k, e := range m.Value {
				s, err := attrString(e)
				if err != nil {
					return fmt.Errorf("member %s: %w", k, err)
				}
				out.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), reflect.ValueOf(s).Convert(t.Elem()))
			}
			if out.Len() > 0 {
				v.Set(out)
			}
			return nil
		}
}

// listCodec stores a slice of structs of type elem as a list of maps, one
// attribute per field of elem (see the top of this file); nil and empty
// slices are not stored.
func listCodec(elem reflect.Type) (func(reflect.Value) (types.AttributeValue, bool), func(types.AttributeValue, reflect.Value) error) {
	var fields []attrCodec
	for i := range elem.NumField() {
		f := elem.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		c := attrCodec{name: name, index: []int{i}, always: !strings.Contains(opts, "omitempty")}
		c.encode, c.decode = fieldCodec(f.Type)
		if c.encode == nil {
			panic(fmt.Sprintf("store: field %s of %s has type %s, which the item codec does not store", f.Name, elem, f.Type))
		}
		fields = append(fields, c)
	}
	byName := make(map[string]*attrCodec, len(fields))
	for i := range fields {
		byName[fields[i].name] = &fields[i]
	}
	encode := func(v reflect.Value) (types.AttributeValue, bool) {
		if v.Len() == 0 {
			return nil, false
		}
		list := make([]types.AttributeValue, v.Len())
		for i := range v.Len() {
			m := make(map[string]types.AttributeValue, len(fields))
			for j := range fields {
				c := &fields[j]
				if av, nonzero := c.encode(v.Index(i).FieldByIndex(c.index)); av != nil && (nonzero || c.always) {
					m[c.name] = av
				}
			}
			list[i] = &types.AttributeValueMemberM{Value: m}
		}
		return &types.AttributeValueMemberL{Value: list}, true
	}
	decode := func(av types.AttributeValue, v reflect.Value) error {
		l, ok := av.(*types.AttributeValueMemberL)
		if !ok {
			return fmt.Errorf("want a list, got %T", av)
		}
		out := reflect.MakeSlice(v.Type(), len(l.Value), len(l.Value))
		for i, e := range l.Value {
			m, ok := e.(*types.AttributeValueMemberM)
			if !ok {
				return fmt.Errorf("element %d: want a map, got %T", i, e)
			}
			for name, a := range m.Value {
				c := byName[name]
				if c == nil {
					continue
				}
				if err := c.decode(a, out.Index(i).FieldByIndex(c.index)); err != nil {
					return fmt.Errorf("element %d, %s: %w", i, name, err)
				}
			}
		}
		if out.Len() > 0 {
			v.Set(out)
		}
		return nil
	}
	return encode, decode
}

// MarshalDynamoItem encodes the item (guregu's ItemMarshaler).
func (it Item) MarshalDynamoItem() (map[string]types.AttributeValue, error) {
	return itemCodec.encode(reflect.ValueOf(&it).Elem()), nil
}

// UnmarshalDynamoItem decodes a stored item (guregu's ItemUnmarshaler).
// Unknown attributes are ignored.
func (it *Item) UnmarshalDynamoItem(av map[string]types.AttributeValue) error {
	*it = Item{}
	return itemCodec.decode(av, reflect.ValueOf(it).Elem())
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

// attrMoney reads a DynamoDB number as an amount.
func attrMoney(v types.AttributeValue) (*fund.Money, error) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return nil, fmt.Errorf("money: want a number attribute, got %T", v)
	}
	d, err := decimal.NewFromString(n.Value)
	if err != nil {
		return nil, fmt.Errorf("money: %w", err)
	}
	m := fund.MoneyOf(d)
	return &m, nil
}
