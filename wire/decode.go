package wire

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/fundsvc/fundsvc/fund"
)

// Requests are decoded by one strict decoder, driven by reflection over the
// declared Go types (fund's, whose json tags are the contract):
//
//   - a member is required unless its tag says omitempty or omitzero;
//   - unknown and repeated members are refused;
//   - null is never a value;
//   - every error names the member's full path
//     (positions[3].capitalCall.amount) with fund's message for the value.
//
// So a field declared in fund is accepted, with the same errors as every
// other, with no edit here. The OpenAPI generator reads the same tags for
// the same rule.
//
// Our own rather than encoding/json's DisallowUnknownFields: encoding/json
// names an unknown member without its path, matches names without regard to
// case, keeps the last of repeated members, takes null for a zero value,
// and stops at the first error without naming where a value was wrong.

// decoder is the decoding of one request body.
type decoder struct {
	// positionsMax stops a positions array at its first member past the
	// limit, before the rest is decoded (0: no limit).
	positionsMax int
}

var (
	typeMoney = reflect.TypeFor[fund.Money]()
	typeDate  = reflect.TypeFor[fund.Date]()
)

// member is one JSON member of a struct type, flattened through embedded
// structs as encoding/json flattens them.
type member struct {
	name     string
	index    []int
	required bool
}

var membersOf sync.Map // reflect.Type → []member

func members(t reflect.Type) []member {
	if v, ok := membersOf.Load(t); ok {
		return v.([]member)
	}
	var out []member
	var walk func(t reflect.Type, at []int)
	walk = func(t reflect.Type, at []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			index := append(append([]int(nil), at...), i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, index)
				continue
			}
			if !f.IsExported() {
				continue
			}
			name = cmp.Or(name, f.Name)
			out = append(out, member{name: name, index: index,
				required: !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")})
		}
	}
	walk(t, nil)
	membersOf.Store(t, out)
	return out
}

// decode decodes the JSON value raw into v, whose path in the body is path.
func (d *decoder) decode(path string, raw []byte, v reflect.Value) error {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return fund.Invalid(path, "may not be null")
	}
	t := v.Type()
	if l, ok := v.Addr().Interface().(*PositionList); ok {
		return d.positions(path, raw, l)
	}
	switch {
	case t == typeMoney:
		var m fund.Money
		if err := m.UnmarshalJSON(raw); err != nil {
			return fund.Invalid(path, "%s", fund.ErrorMessage(err))
		}
		v.Set(reflect.ValueOf(m))
		return nil
	case t == typeDate:
		s, err := d.text(path, raw, "a JSON string holding a date (YYYY-MM-DD)")
		if err != nil {
			return err
		}
		if s == "" {
			return fund.Invalid(path, "is empty; give a date (YYYY-MM-DD) or leave the field out")
		}
		date, err := fund.ParseDate(s)
		if err != nil {
			return fund.Invalid(path, "%s", fund.ErrorMessage(err))
		}
		v.Set(reflect.ValueOf(date))
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		s, err := d.text(path, raw, "a JSON string")
		if err != nil {
			return err
		}
		if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
			if err := u.UnmarshalText([]byte(s)); err != nil {
				return fund.Invalid(path, "%s", fund.ErrorMessage(err))
			}
			return nil
		}
		v.SetString(s)
		return nil
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := d.decode(path, raw, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Slice:
		return d.array(path, raw, v)
	case reflect.Struct:
		return d.object(path, raw, v)
	case reflect.Int:
		return d.integer(path, raw, v)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return d.dictionary(path, raw, v)
		}
	case reflect.Bool:
		switch string(raw) {
		case "true", "false":
			v.SetBool(string(raw) == "true")
			return nil
		}
		return fund.Invalid(path, "must be true or false, not %s", jsonKind(raw))
	}
	return fmt.Errorf("wire: no decoding of %s (%s)", t, path)
}

// integer reads a JSON number that is a whole number, written without
// fraction or exponent (2025, not 2025.0 or 2.025e3), as its digits are
// taken exactly.
func (d *decoder) integer(path string, raw []byte, v reflect.Value) error {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return fund.Invalid(path, "must be a whole JSON number, not %s", jsonKind(raw))
	}
	n, err := strconv.ParseInt(string(raw), 10, 32)
	if err != nil {
		return fund.Invalid(path, "must be a whole number written without fraction or exponent, got %.40s", raw)
	}
	v.SetInt(n)
	return nil
}

// dictionary decodes a JSON object into the map v, whose keys are strings:
// every member a value of the map's element type, none repeated or null.
func (d *decoder) dictionary(path string, raw []byte, v reflect.Value) error {
	if len(raw) == 0 || raw[0] != '{' {
		return fund.Invalid(path, "must be a JSON object, not %s", jsonKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return fund.Invalid(path, "is not valid JSON")
	}
	out := reflect.MakeMap(v.Type())
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fund.Invalid(path, "is not valid JSON")
		}
		name := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return fund.Invalid(join(path, name), "is not valid JSON")
		}
		key := reflect.ValueOf(name).Convert(v.Type().Key())
		if out.MapIndex(key).IsValid() {
			return fund.Invalid(join(path, name), "is given twice; give it once")
		}
		if string(bytes.TrimSpace(value)) == "null" {
			return fund.Invalid(join(path, name), "may not be null; leave the member out instead")
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(join(path, name), value, e); err != nil {
			return err
		}
		out.SetMapIndex(key, e)
	}
	v.Set(out)
	return nil
}

// text reads a JSON string.
func (d *decoder) text(path string, raw []byte, what string) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fund.Invalid(path, "must be %s, not %s", what, jsonKind(raw))
	}
	return s, nil
}

// array decodes a JSON array into the slice v.
func (d *decoder) array(path string, raw []byte, v reflect.Value) error {
	if len(raw) == 0 || raw[0] != '[' {
		return fund.Invalid(path, "must be a JSON array, not %s", jsonKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return fund.Invalid(path, "is not valid JSON")
	}
	out := reflect.MakeSlice(v.Type(), 0, 4)
	for i := 0; dec.More(); i++ {
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return fund.Invalid(path, "is not valid JSON")
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(fmt.Sprintf("%s[%d]", path, i), elem, e); err != nil {
			return err
		}
		out = reflect.Append(out, e)
	}
	v.Set(out)
	return nil
}

// positions decodes a document's positions one at a time into l, and stops
// at the first one past the limit, so an oversized body never becomes tens
// of thousands of positions in memory before the limit is applied.
func (d *decoder) positions(path string, raw []byte, l *PositionList) error {
	if len(raw) == 0 || raw[0] != '[' {
		return fund.Invalid(path, "must be a JSON array of positions, not %s", jsonKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return fund.Invalid(path, "is not valid JSON")
	}
	l.set, l.items = true, []fund.Position{}
	for dec.More() {
		if d.positionsMax > 0 && len(l.items) == d.positionsMax {
			return fund.Invalid(path, "a document holds at most %d positions; more were sent", d.positionsMax)
		}
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return fund.Invalid(path, "is not valid JSON")
		}
		var p fund.Position
		if err := d.decode(fmt.Sprintf("%s[%d]", path, len(l.items)), elem, reflect.ValueOf(&p).Elem()); err != nil {
			return err
		}
		l.items = append(l.items, p)
	}
	return nil
}

// object decodes a JSON object into the struct v: every member by its
// exact name, the required ones present, none unknown or repeated.
func (d *decoder) object(path string, raw []byte, v reflect.Value) error {
	if len(raw) == 0 || raw[0] != '{' {
		return fund.Invalid(cmpOr(path, "body"), "must be a JSON object, not %s", jsonKind(raw))
	}
	ms := members(v.Type())
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return fund.Invalid(cmpOr(path, "body"), "is not valid JSON")
	}
	seen := make(map[string]bool, len(ms))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fund.Invalid(cmpOr(path, "body"), "is not valid JSON")
		}
		name := tok.(string) // an object's member names are strings
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return fund.Invalid(join(path, name), "is not valid JSON")
		}
		m, ok := find(ms, name)
		if !ok {
			return unknownMember(path, name, ms)
		}
		if seen[name] {
			return fund.Invalid(join(path, name), "is given twice; give it once")
		}
		seen[name] = true
		if string(bytes.TrimSpace(value)) == "null" {
			if m.required {
				return fund.Invalid(join(path, name), "is required and may not be null")
			}
			return fund.Invalid(join(path, name), "may not be null; leave the field out instead")
		}
		if err := d.decode(join(path, name), value, v.FieldByIndex(m.index)); err != nil {
			return err
		}
	}
	for _, m := range ms {
		if m.required && !seen[m.name] {
			return fund.Invalid(join(path, m.name), "is required")
		}
	}
	return nil
}

func find(ms []member, name string) (member, bool) {
	for _, m := range ms {
		if m.name == name {
			return m, true
		}
	}
	return member{}, false
}

// unknownMember refuses a member the type does not have, suggesting the one
// it differs from only in case.
func unknownMember(path, name string, ms []member) error {
	for _, m := range ms {
		if strings.EqualFold(m.name, name) {
			return fund.Invalid(join(path, name), "is not a field of this request; did you mean %s?", m.name)
		}
	}
	return fund.Invalid(join(path, name), "is not a field of this request")
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// jsonKind names the JSON type of raw for an error.
func jsonKind(raw []byte) string {
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == '"':
		return "a string"
	case raw[0] == '{':
		return "an object"
	case raw[0] == '[':
		return "an array"
	case raw[0] == 't' || raw[0] == 'f':
		return "a boolean"
	case raw[0] == 'n':
		return "null"
	}
	return "a number"
}

// DecodeStrict decodes exactly one JSON value, a request body, into v (a
// pointer to a request type): unknown members and trailing data are
// refused, and every error says where the input went wrong.
func DecodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return JSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fund.Invalid("body", "holds data after the JSON value; send exactly one JSON object")
	}
	var d decoder
	if l, ok := v.(interface{ positionsLimit() int }); ok {
		d.positionsMax = l.positionsLimit()
	}
	if err := d.object("", raw, reflect.ValueOf(v).Elem()); err != nil {
		var fe *fund.Error
		if errors.As(err, &fe) {
			return fe
		}
		return err
	}
	return nil
}
