package fund

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A string member of a request is bounded where it is declared, by a
// maxLength tag on its field: `maxLength:"200"` bounds the string (each
// value of a map or a list of strings) to 200 bytes. CheckTexts enforces
// the tags and the OpenAPI document states them; a request's string member
// without one fails api's TestEveryRequestStringIsBounded.

// CheckTexts checks every string that a maxLength tag bounds in v (a pointer
// to a struct), through embedded structs, pointers, lists and maps: at most
// that many bytes of text (checkText). field prefixes the members' JSON
// names. It returns EINVALID naming the first offending member. A struct
// type without a tagged field is skipped at the cost of a map read.
func CheckTexts(field string, v any) error {
	return checkTextsIn(field, reflect.ValueOf(v), 0)
}

// checkTextsIn checks v, a string (or a list, map or pointer of strings)
// bounded to max bytes, or a value holding some through tagged fields.
func checkTextsIn(field string, v reflect.Value, max int) error {
	if max == 0 && !holdsTexts(v.Type()) {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkTextsIn(field, v.Elem(), max)
	case reflect.String:
		if len(v.String()) > max {
			return Invalid(field, "is at most %d bytes, got %d", max, len(v.String()))
		}
		return checkText(field, v.String())
	case reflect.Slice:
		for i := range v.Len() {
			if err := checkTextsIn(fmt.Sprintf("%s[%d]", field, i), v.Index(i), max); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			if err := checkTextsIn(memberOf(field, k.String()), v.MapIndex(k), max); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() && !f.Anonymous || name == "-" {
				continue
			}
			at := field // an embedded struct's members are its holder's
			if !f.Anonymous || name != "" {
				at = memberOf(field, cmp.Or(name, f.Name))
			}
			n, _ := strconv.Atoi(f.Tag.Get("maxLength"))
			if err := checkTextsIn(at, v.Field(i), n); err != nil {
				return err
			}
		}
	}
	return nil
}

func memberOf(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

var holdsTextsOf sync.Map // reflect.Type → bool

// holdsTexts says whether a value of t can hold a string a maxLength tag
// bounds.
func holdsTexts(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return holdsTexts(t.Elem())
	case reflect.Struct:
	default:
		return false
	}
	if v, ok := holdsTextsOf.Load(t); ok {
		return v.(bool)
	}
	holdsTextsOf.Store(t, false) // a type that refers to itself
	holds := false
	for i := range t.NumField() {
		f := t.Field(i)
		holds = holds || (f.IsExported() || f.Anonymous) && (f.Tag.Get("maxLength") != "" || holdsTexts(f.Type))
	}
	holdsTextsOf.Store(t, holds)
	return holds
}

// checkText refuses text that is not UTF-8 or holds a control character
// (a line break, an escape sequence, a NUL): a title is shown in portals,
// logs and exports, where such characters forge or break what surrounds it.
func checkText(field, s string) error {
	if !utf8.ValidString(s) {
		return Invalid(field, "must be UTF-8 text")
	}
	for i, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return Invalid(field, "must not hold control characters (found U+%04X at byte %d)", r, i)
		}
	}
	return nil
}
