package api

import (
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/fundsvc/fundsvc/fund"
)

func ref(name string) *schema { return &schema{Ref: "#/components/schemas/" + name} }

// schemaOf is the schema of a value of type t, a reference for a struct.
// In a request (in), money may also be a JSON number, objects refuse
// unknown members, and a member is required only when apiFields says so.
func (g *generator) schemaOf(t reflect.Type, in bool) *schema {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if as, ok := encodesAs[t]; ok {
		t = as
	}
	switch {
	case t == typeTime:
		return &schema{Type: "string", Format: "date-time"}
	case t == typeMoney:
		if in {
			return g.scalar("MoneyInput")
		}
		return g.scalar("Money")
	case t == typeDate:
		return g.scalar("Date")
	case t == typeKind:
		return g.scalar("DocumentKind")
	}
	switch t.Kind() {
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return &schema{Type: "integer", Minimum: ptr[int64](0)}
	case reflect.Slice:
		return &schema{Type: "array", Items: g.schemaOf(t.Elem(), in)}
	case reflect.Map:
		return &schema{Type: "object", AdditionalProperties: g.schemaOf(t.Elem(), in)}
	case reflect.Struct:
		name := schemaName(t, in)
		if _, ok := g.doc.Components.Schemas[name]; !ok {
			s := &schema{Type: "object"}
			g.doc.Components.Schemas[name] = s // before the fields: a type may refer to itself
			*s = *g.object(name, t, in)
		}
		return ref(name)
	}
	panic(fmt.Sprintf("openapi: no schema for Go type %s", t))
}

func (g *generator) scalar(name string) *schema {
	g.named(name)
	return ref(name)
}

// object is the schema of struct t, named name: its JSON members as
// encoding/json writes them, embedded structs' members inline.
func (g *generator) object(name string, t reflect.Type, in bool) *schema {
	g.used[name] = true
	s := &schema{Type: "object", Description: apiTypes[name].Doc}
	if in {
		s.AdditionalProperties = false
	}
	if n := apiTypes[name].MinProperties; n > 0 {
		s.MinProperties = &n
	}
	// Members as encoding/json writes them: an embedded struct's member is
	// hidden by one of the same name at a shallower depth.
	type member struct {
		name     string
		schema   *schema
		required bool
		depth    int
	}
	var members []member
	var fields func(t reflect.Type, owners []string)
	fields = func(t reflect.Type, owners []string) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			jsonName, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && jsonName == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				fields(ft, append(owners, schemaName(ft, in)))
				continue
			}
			if !f.IsExported() {
				continue
			}
			jsonName = cmp.Or(jsonName, f.Name)
			fd := g.lookupField(owners, jsonName)
			var fs *schema
			switch {
			case fd.Derive != nil:
				fs = fd.Derive()
			case fd.Schema != nil:
				c := *fd.Schema
				fs = &c
			case fd.Ref != "":
				fs = g.scalar(fd.Ref)
			case conventions[jsonName] != "" && f.Type.Kind() != reflect.Struct && f.Type.Kind() != reflect.Pointer && f.Type.Kind() != reflect.Slice:
				fs = g.scalar(conventions[jsonName])
			default:
				fs = g.schemaOf(f.Type, in)
			}
			g.refs(fs)
			// A member's description is its Go declaration's doc tag, and
			// its bound, in bytes (a schema's maxLength counts characters).
			if doc := f.Tag.Get("doc"); doc != "" {
				fs.Description = markdownCode(doc)
			}
			if n, err := strconv.Atoi(f.Tag.Get("maxLength")); err == nil {
				each := "" // a list's or a map's bound is on each of its strings
				if fs.Items != nil || fs.AdditionalProperties != nil {
					each = " each"
				}
				fs.Description += fmt.Sprintf(" At most %d bytes of UTF-8%s.", n, each)
				if in {
					boundStrings(fs, n)
				}
			}
			if fd.Default != nil {
				fs.Default = fd.Default
			}
			optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			members = append(members, member{jsonName, fs, fd.Required || (!in && !optional && !fd.Optional) || (in && !optional), len(owners)})
		}
	}
	fields(t, []string{name})
	shallowest := map[string]int{}
	for _, m := range members {
		if d, ok := shallowest[m.name]; !ok || m.depth < d {
			shallowest[m.name] = m.depth
		}
	}
	for _, m := range members {
		if m.depth != shallowest[m.name] {
			continue
		}
		s.Properties = append(s.Properties, property{m.name, m.schema})
		if m.required {
			s.Required = append(s.Required, m.name)
		}
	}
	if ex, ok := apiTypes[name]; ok && ex.Examples != nil {
		s.Examples = ex.Examples
	}
	return s
}

// boundStrings states a maxLength tag (fund.CheckTexts) on a member's
// schema: on the string, or on each item or value of a list or map.
func boundStrings(s *schema, n int) {
	if v, ok := s.AdditionalProperties.(*schema); ok {
		c := *v
		s.AdditionalProperties, s = &c, &c
	} else if s.Items != nil {
		c := *s.Items
		s.Items, s = &c, &c
	}
	s.MaxLength = &n
}

// lookupField is what apiFields says of a member: under the schema that
// holds it and, for an embedded struct's member, under the embedded type's
// schema; the outer description wins, the inner one fills in.
func (g *generator) lookupField(owners []string, member string) field {
	var out field
	for _, owner := range owners {
		f, ok := apiFields[owner+"."+member]
		if !ok {
			continue
		}
		g.used[owner+"."+member] = true
		out.Ref = cmp.Or(out.Ref, f.Ref)
		out.Required = out.Required || f.Required
		out.Optional = out.Optional || f.Optional
		if out.Schema == nil {
			out.Schema = f.Schema
		}
		if out.Default == nil {
			out.Default = f.Default
		}
		if out.Derive == nil {
			out.Derive = f.Derive
		}
	}
	return out
}

// schemaName names the schema of struct t: schemaNames when it names t,
// else the Go name, exported, without a "Wire" suffix; a page[T] is T's
// name and "Page". In a request, "Input" follows, unless the name already
// says "Request" or "Input".
func schemaName(t reflect.Type, in bool) string {
	name, ok := schemaNames[t]
	if !ok {
		name = t.Name()
		if base, _, generic := strings.Cut(name, "["); generic && strings.EqualFold(base, "page") {
			return schemaName(t.Field(0).Type.Elem(), in) + "Page"
		}
		name = strings.TrimSuffix(name, "Wire")
		r := []rune(name)
		r[0] = unicode.ToUpper(r[0])
		name = string(r)
	}
	if in && !strings.HasSuffix(name, "Request") && !strings.HasSuffix(name, "Input") {
		name += "Input"
	}
	return name
}

// codeSpan is a code span of a doc tag: 'word' in single quotes, with no
// space in it. A struct tag is a raw string, which cannot hold Markdown's
// backquote, so a doc tag quotes code this way and the document shows it
// as code; an apostrophe (a position's) never closes such a span.
var codeSpan = regexp.MustCompile(`'([^'\s]+)'`)

// markdownCode turns a doc tag's code spans into Markdown's.
func markdownCode(doc string) string { return codeSpan.ReplaceAllString(doc, "`$1`") }

var (
	typeTime  = reflect.TypeFor[time.Time]()
	typeMoney = reflect.TypeFor[fund.Money]()
	typeDate  = reflect.TypeFor[fund.Date]()
	typeKind  = reflect.TypeFor[fund.Kind]()
)
