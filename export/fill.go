package export

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// Rows are filled from the records they export by the Go names of their
// fields: a row field takes the field of the same name of its records (a
// tag from:"Name" names another, and from:"-" says the code sets it),
// converted to its column's type. So the columns of a declared field (a
// field of fund.DocumentFields, fund.CapitalActivity, an item and its
// details struct, fund.CapitalAccount, fund.Registered) need no copying by
// hand: one field in the row, named as the declaration, is all. Each
// dataset names the structs it exports (dataset.declares), and a field of
// one of them without its column, or a column named other than its JSON
// name in snake_case, is an error naming both, which every export returns
// at its start (checkPlans) and TestEveryDatasetHasItsPlan reports.

// rowPlan is how a row type is filled from its sources.
type rowPlan struct {
	copies []fieldCopy
}

type fieldCopy struct {
	row    []int // the row field's index
	source int   // which source
	from   []int // the source field's index
	conv   func(src reflect.Value, dst reflect.Value, err *error)
}

type planKey struct {
	row     reflect.Type
	sources string
}

var plans sync.Map // planKey → *rowPlan

// planOf returns the plan that fills row (a row type) from values of the
// source types, or an error naming a row field without a source, a
// declared field without its column, or types it cannot convert.
func planOf(row reflect.Type, sources []reflect.Type, declares []reflect.Type) (*rowPlan, error) {
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.String()
	}
	key := planKey{row, strings.Join(names, ",")}
	if p, ok := plans.Load(key); ok {
		return p.(*rowPlan), nil
	}
	p := &rowPlan{}
	for _, f := range rowFields(row) {
		from, ok := f.Tag.Lookup("from")
		if from == "-" {
			continue
		}
		if !ok {
			from = f.Name
		}
		found := false
		for i, st := range sources {
			t := st
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			sf, ok := t.FieldByName(from)
			if !ok {
				continue
			}
			conv, err := converter(sf.Type, f.Type)
			if err != nil {
				return nil, fmt.Errorf("export: %s.%s from %s.%s: %w", row.Name(), f.Name, t.Name(), from, err)
			}
			p.copies = append(p.copies, fieldCopy{row: f.Index, source: i, from: sf.Index, conv: conv})
			found = true
			break
		}
		if !found {
			return nil, fmt.Errorf("export: %s.%s has no field %s in %s to take its value from (tag it from:\"-\" if the code sets it)", row.Name(), f.Name, from, key.sources)
		}
	}
	for _, d := range declares {
		for _, f := range declaredFields(d) {
			rf, ok := row.FieldByName(f.goName)
			if !ok {
				return nil, fmt.Errorf("export: %s has no column for %s.%s; add a field %s `parquet:\"%s,...\"`", row.Name(), d.Name(), f.goName, f.goName, snakeCase(f.jsonName))
			}
			if col, _, _ := strings.Cut(rf.Tag.Get("parquet"), ","); col != snakeCase(f.jsonName) {
				return nil, fmt.Errorf("export: %s.%s is the column of %s.%s (JSON %s), so it must be named %s, not %s",
					row.Name(), f.goName, d.Name(), f.goName, f.jsonName, snakeCase(f.jsonName), col)
			}
		}
	}
	plans.Store(key, p)
	return p, nil
}

// fill sets row (a pointer to a row) from sources (values, or pointers,
// of the plan's source types; a nil pointer leaves its columns zero),
// recording the first error.
func (p *rowPlan) fill(row any, sources []any, err *error) {
	dst := reflect.ValueOf(row).Elem()
	src := make([]reflect.Value, len(sources))
	for i, s := range sources {
		v := reflect.ValueOf(s)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		src[i] = v
	}
	for _, c := range p.copies {
		s := src[c.source]
		if s.Kind() == reflect.Pointer { // nil
			continue
		}
		v, e := s.FieldByIndexErr(c.from)
		if e != nil {
			continue // through a nil embedded pointer
		}
		c.conv(v, dst.FieldByIndex(c.row), err)
	}
}

// rowFields are the exported fields of a row type, through embedded rows.
func rowFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, g := range rowFields(f.Type) {
				g.Index = append([]int{i}, g.Index...)
				out = append(out, g)
			}
			continue
		}
		if f.IsExported() {
			out = append(out, f)
		}
	}
	return out
}

// declared is one field of a declared struct that has a column.
type declared struct{ goName, jsonName string }

// declaredFields lists the fields of a declared struct that a row holds:
// every field with a JSON name, through embedded structs, but lists and
// nested structs (a call's typed lines, a statement's lines), which are
// datasets or declared structs of their own.
func declaredFields(t reflect.Type) []declared {
	var out []declared
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, declaredFields(f.Type)...)
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if !f.IsExported() || name == "" || name == "-" || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Struct && ft != typeDate && ft != typeMoney && ft != typeTime {
			continue
		}
		out = append(out, declared{goName: f.Name, jsonName: name})
	}
	return out
}

var (
	typeMoney      = reflect.TypeFor[fund.Money]()
	typeMoneyPtr   = reflect.TypeFor[*fund.Money]()
	typeDate       = reflect.TypeFor[fund.Date]()
	typeTime       = reflect.TypeFor[time.Time]()
	typeDecimal    = reflect.TypeFor[decimal19]()
	typeDecimalPtr = reflect.TypeFor[*decimal19]()
	typeDays       = reflect.TypeFor[int32]()
	typeDaysPtr    = reflect.TypeFor[*int32]()
	typeStringPtr  = reflect.TypeFor[*string]()
)

// converter converts a source field of type from into a row field of type
// to: money to DECIMAL(19,4) (a required column refuses a missing amount),
// dates to days (a required column refuses the zero date), instants to
// UTC, strings (through MarshalText when the type has it, as an item kind
// does; an optional column holds NULL for the empty string), whole numbers and booleans as they are.
func converter(from, to reflect.Type) (func(src, dst reflect.Value, err *error), error) {
	switch {
	case from == typeMoney && to == typeDecimal:
		return func(src, dst reflect.Value, err *error) {
			m := src.Interface().(fund.Money)
			dst.Set(reflect.ValueOf(mustDecimal(&m, err)))
		}, nil
	case from == typeMoneyPtr && to == typeDecimalPtr:
		return func(src, dst reflect.Value, err *error) {
			if d := optDecimal(src.Interface().(*fund.Money), err); d != nil {
				dst.Set(reflect.ValueOf(d))
			}
		}, nil
	case from == typeMoneyPtr && to == typeDecimal:
		return func(src, dst reflect.Value, err *error) {
			dst.Set(reflect.ValueOf(mustDecimal(src.Interface().(*fund.Money), err)))
		}, nil
	case from == typeMoney && to == typeDecimalPtr:
		return func(src, dst reflect.Value, err *error) {
			m := src.Interface().(fund.Money)
			dst.Set(reflect.ValueOf(optDecimal(&m, err)))
		}, nil
	case from == typeDate && to == typeDays:
		return func(src, dst reflect.Value, err *error) {
			d := src.Interface().(fund.Date)
			if d.IsZero() && *err == nil {
				*err = fmt.Errorf("a date is missing")
			}
			dst.SetInt(int64(days(d)))
		}, nil
	case from == typeDate && to == typeDaysPtr:
		return func(src, dst reflect.Value, err *error) {
			if p := optDays(src.Interface().(fund.Date)); p != nil {
				dst.Set(reflect.ValueOf(p))
			}
		}, nil
	case from == typeTime && to == typeTime:
		return func(src, dst reflect.Value, err *error) { dst.Set(reflect.ValueOf(src.Interface().(time.Time).UTC())) }, nil
	case from.Kind() == reflect.String && to.Kind() == reflect.String:
		if from.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
			return func(src, dst reflect.Value, err *error) {
				b, e := src.Interface().(encoding.TextMarshaler).MarshalText()
				if e != nil && *err == nil {
					*err = e
				}
				dst.SetString(string(b))
			}, nil
		}
		return func(src, dst reflect.Value, err *error) { dst.SetString(src.String()) }, nil
	case from.Kind() == reflect.Map && from.Key().Kind() == reflect.String && from.Elem().Kind() == reflect.String && to.Kind() == reflect.String:
		// A record's external identifiers: a JSON object, its members sorted
		// (Athena reads one with json_extract_scalar(external_ids,
		// '$.carta')). A MAP column would need a map type in the DDL and the
		// Iceberg schema, which derive from scalar columns only.
		return func(src, dst reflect.Value, err *error) {
			if src.Len() == 0 {
				return
			}
			b, e := json.Marshal(src.Interface())
			if e != nil && *err == nil {
				*err = e
			}
			dst.SetString(string(b))
		}, nil
	case from.Kind() == reflect.String && to == typeStringPtr:
		return func(src, dst reflect.Value, err *error) {
			if s := src.String(); s != "" {
				dst.Set(reflect.ValueOf(&s))
			}
		}, nil
	case from.Kind() == reflect.Int && to.Kind() == reflect.Int32:
		return func(src, dst reflect.Value, err *error) { dst.SetInt(src.Int()) }, nil
	case from.Kind() == reflect.Bool && to.Kind() == reflect.Bool:
		return func(src, dst reflect.Value, err *error) { dst.SetBool(src.Bool()) }, nil
	}
	return nil, fmt.Errorf("no conversion from %s to %s", from, to)
}
