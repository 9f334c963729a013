package wire

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
)

// The line items of a request item are not spelled here: each request item
// embeds fund's declaration of its lines (fund.CallLines, ...), which gives
// the response its members, and decodes them through fund.LinesOf, so a line
// declared in fund is accepted, validated and answered with no edit here.
// A line passes through an Amount on the way in, so that null is refused
// and a malformed amount is blamed on its full path, as every amount is.

// lineInputs are the line items of a request item as sent, by JSON name.
type lineInputs map[string]Amount

// decodeItem decodes b, the JSON object of a request item whose lines are
// declared by lines (a pointer to a fund lines struct): the line members
// into the returned inputs (and the valid ones into lines), every other
// member into fixed (a pointer to
// the item's fields, as a type without methods), whose unknown members are
// refused. Like encoding/json, it matches member names without regard to
// case and keeps the last of repeated members.
func decodeItem(b []byte, fixed, lines any) (lineInputs, error) {
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return nil, json.Unmarshal(b, fixed) // the decoder's own error for a non-object
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, err
	}
	in := lineInputs{}
	rest := append(make([]byte, 0, len(b)), '{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string) // an object's member names are strings
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if l, ok := lineNamed(lines, key); ok {
			var a Amount
			_ = a.UnmarshalJSON(value) // never fails; its error waits for the conversion
			in[l.Name] = a
			if m := a.m; a.set && !a.null && a.err == nil {
				l.Set(lines, &m) // for a client that decodes a response
			}
			continue
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		k, _ := json.Marshal(key) // a string always encodes
		rest = append(append(append(rest, k...), ':'), value...)
	}
	dec = json.NewDecoder(bytes.NewReader(append(rest, '}')))
	dec.DisallowUnknownFields()
	return in, dec.Decode(fixed)
}

// lineNamed finds the line of lines that member names: the exact name
// first, else one that differs only in case.
func lineNamed(lines any, member string) (fund.Line, bool) {
	all := fund.LinesOf(lines)
	for _, l := range all {
		if l.Name == member {
			return l, true
		}
	}
	for _, l := range all {
		if strings.EqualFold(l.Name, member) {
			return l, true
		}
	}
	return fund.Line{}, false
}

// toLines sets the lines of a request item into lines (a pointer to its
// fund lines struct), naming field.<line> in any error. An item decoded
// from JSON (in not nil) takes them from what was sent; one built in Go
// keeps the lines it was given.
func (in lineInputs) toLines(field string, lines any) error {
	if in == nil {
		return nil
	}
	for _, l := range fund.LinesOf(lines) {
		m, err := optional(field+"."+l.Name, in[l.Name])
		if err != nil {
			return err
		}
		l.Set(lines, m)
	}
	return nil
}
