package api

import (
	"bytes"
	"testing"
)

// TestItemAnswersHoldAtMostTwoGenerations: the memo of the position read's
// answers to items holds two generations of at most its bound each: after
// a thousand answers of 100 bytes (entries included) under a bound of
// 4,000, it holds the newest 20 to 40 of them and no older, and an answer
// found in the older generation moves to the newer, so it outlives the
// next turn.
func TestItemAnswersHoldAtMostTwoGenerations(t *testing.T) {
	m := newItemAnswers(4000)
	answer := bytes.Repeat([]byte("a"), 100-entryBytes)
	key := func(i int) itemKey { return itemKey{lines: "stated", content: [2]uint64{uint64(i), 7}} }
	for i := range 1000 {
		m.put(key(i), answer)
	}
	held := 0
	for i := range 1000 {
		if _, ok := m.cur[key(i)]; ok {
			held++
		} else if _, ok := m.old[key(i)]; ok {
			held++
		} else if i >= 980 {
			t.Errorf("answer %d, among the newest 20, is not held", i)
		}
	}
	if held < 20 || held > 40 || m.size > 2000 || len(m.cur)*100 > 2000 || len(m.old)*100 > 2000 {
		t.Fatalf("holds %d answers (%d and %d), %d bytes in the newer", held, len(m.cur), len(m.old), m.size)
	}
	if len(m.old) == 0 {
		t.Fatal("the older generation is empty")
	}
	var older itemKey
	for k := range m.old {
		older = k
		break
	}
	if a := m.lookup(older); !bytes.Equal(a, answer) {
		t.Fatalf("lookup of %v in the older generation: %q", older, a)
	}
	if _, ok := m.cur[older]; !ok {
		t.Errorf("%v, found in the older generation, did not move to the newer", older)
	}
	if _, ok := m.old[older]; ok {
		t.Errorf("%v is held twice", older)
	}
}
