package api

import (
	"bytes"
	"fmt"
	"testing"
)

// TestItemAnswersHoldAtMostTwoGenerations: the memo of the position read's
// answers to items holds two generations of at most its bound each: after
// a thousand answers of 50 bytes (keys included) under a bound of 1,000,
// it holds the newest 20 to 40 of them and no older, and an answer found in
// the older generation moves to the newer, so it outlives the next turn.
func TestItemAnswersHoldAtMostTwoGenerations(t *testing.T) {
	m := newItemAnswers(1000)
	answer := bytes.Repeat([]byte("a"), 42)
	key := func(i int) string { return fmt.Sprintf("key %04d", i) } // 8 bytes
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
	if held < 20 || held > 40 || m.size > 1000 || len(m.cur)*50 > 1000 || len(m.old)*50 > 1000 {
		t.Fatalf("holds %d answers (%d and %d), %d bytes in the newer", held, len(m.cur), len(m.old), m.size)
	}
	var older string
	for k := range m.old {
		older = k
		break
	}
	if older == "" {
		t.Fatal("the older generation is empty")
	}
	if a := m.lookup([]byte(older)); !bytes.Equal(a, answer) {
		t.Fatalf("lookup of %s in the older generation: %q", older, a)
	}
	if _, ok := m.cur[older]; !ok {
		t.Errorf("%s, found in the older generation, did not move to the newer", older)
	}
	if _, ok := m.old[older]; ok {
		t.Errorf("%s is held twice", older)
	}
}
