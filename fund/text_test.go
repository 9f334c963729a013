package fund

import (
	"strings"
	"testing"
)

func TestCheckTextsNamesTheMemberItBounds(t *testing.T) {
	type inner struct {
		Note string `json:"note,omitempty" maxLength:"4"`
	}
	type holder struct {
		Free  string            `json:"free"`
		Label string            `json:"label" maxLength:"3"`
		Tags  []string          `json:"tags" maxLength:"2"`
		IDs   map[string]string `json:"ids" maxLength:"2"`
		Inner *inner            `json:"inner,omitempty"`
		Items []inner           `json:"items"`
		inner
	}
	cases := []struct {
		name  string
		value holder
		field string
		msg   string
	}{
		{"an unbounded string is not checked", holder{Free: strings.Repeat("\x00", 1000)}, "", ""},
		{"a string at its bound is taken", holder{Label: "abc", Tags: []string{"ab"}, IDs: map[string]string{"x": "ab"}}, "", ""},
		{"a string past its bound is refused", holder{Label: "abcd"}, "at.label", "is at most 3 bytes, got 4"},
		{"bytes are counted, not characters", holder{Label: "éé"}, "at.label", "is at most 3 bytes, got 4"},
		{"a control character is refused", holder{Label: "a\x00"}, "at.label", "control characters"},
		{"each string of a list is bounded", holder{Tags: []string{"ab", "abc"}}, "at.tags[1]", "is at most 2 bytes"},
		{"each value of a map is bounded, in key order", holder{IDs: map[string]string{"b": "abc", "a": "abc"}}, "at.ids.a", "is at most 2 bytes"},
		{"a struct behind a pointer is walked", holder{Inner: &inner{Note: "abcde"}}, "at.inner.note", "is at most 4 bytes"},
		{"a list of structs is walked", holder{Items: []inner{{}, {Note: "abcde"}}}, "at.items[1].note", "is at most 4 bytes"},
		{"an embedded struct's members are its holder's", holder{inner: inner{Note: "abcde"}}, "at.note", "is at most 4 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckTexts("at", &c.value)
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, _ := err.(*Error)
			if e == nil || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
				t.Fatalf("got %v, want %s: …%s…", err, c.field, c.msg)
			}
		})
	}
}
