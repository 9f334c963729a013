package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// itemAnswers memoizes the JSON answer of each item the position read
// across documents answers, by the item's stored content and the typed
// lines asked for. That read is a portal's most frequent, and most of its
// time was the service decoding the same items into the domain and
// encoding them again (docs/benchmarks.md, issue 23); an item answered
// before now costs the key of its content and one lookup.
//
// The key is the item's whole content (store.StoredItem.AppendContent),
// compared whole, not a hash of it: an answer is a function of the
// content alone, so a hit is the answer decoding and encoding would give,
// whatever wrote the item and however, and no write needs to invalidate
// anything. The memo holds two generations of at most maxBytes each, keys
// and answers counted (FUNDSVC_ITEM_MEMO_BYTES is both together): when the
// newer fills, the older is dropped and the newer takes its place, and an
// answer found in the older moves to the newer.
type itemAnswers struct {
	mu       sync.Mutex
	cur, old map[string][]byte
	size     int // of cur's keys and answers, in bytes
	maxBytes int // of one generation
}

// DefaultItemMemoBytes is Options.ItemMemoBytes when zero: some 80,000
// items (the demo's have keys of 400 to 750 bytes and answers of 280 to
// 720; the maps' own overhead, some 10% more, is not counted).
const DefaultItemMemoBytes = 64 << 20

// newItemAnswers returns a memo of at most total bytes, two generations of
// half as much; nil, no memo, when total is not positive.
func newItemAnswers(total int64) *itemAnswers {
	if total <= 0 {
		return nil
	}
	return &itemAnswers{cur: map[string][]byte{}, old: map[string][]byte{}, maxBytes: int(total / 2)}
}

// answers returns the JSON answer of each item, as json.Marshal encodes
// wire.ItemOf of it decoded, from the memo when it holds it, and how many
// were. A nil memo holds none and keeps none.
func (m *itemAnswers) answers(items []store.StoredItem, lines wire.TypedLines) (out [][]byte, memoized int, err error) {
	if m == nil {
		out = make([][]byte, len(items))
		for i, it := range items {
			if out[i], err = encodeItem(it, lines); err != nil {
				return nil, 0, err
			}
		}
		return out, 0, nil
	}
	// Every item's key, one after another in one buffer: the typed lines,
	// a NUL (no TypedLines value holds one), the content.
	keys := make([]byte, 0, 512*len(items))
	spans := make([][2]int, len(items)) // of each item's key in keys; end -1: not memoized
	for i, it := range items {
		n := len(keys)
		keys = append(append(keys, lines...), 0)
		var ok bool
		if keys, ok = it.AppendContent(keys); !ok {
			keys, spans[i] = keys[:n], [2]int{n, -1}
			continue
		}
		spans[i] = [2]int{n, len(keys)}
	}
	keyed := func(i int) bool { return spans[i][1] >= 0 }
	key := func(i int) []byte { return keys[spans[i][0]:spans[i][1]] }

	out = make([][]byte, len(items))
	m.mu.Lock()
	for i := range items {
		if keyed(i) {
			if out[i] = m.lookup(key(i)); out[i] != nil {
				memoized++
			}
		}
	}
	m.mu.Unlock()

	var encoded []int
	for i, it := range items {
		if out[i] != nil {
			continue
		}
		if out[i], err = encodeItem(it, lines); err != nil {
			return nil, 0, err
		}
		if keyed(i) {
			encoded = append(encoded, i)
		}
	}
	if len(encoded) > 0 {
		m.mu.Lock()
		for _, i := range encoded {
			m.put(string(key(i)), out[i])
		}
		m.mu.Unlock()
	}
	return out, memoized, nil
}

// encodeItem decodes the item and encodes its answer.
func encodeItem(it store.StoredItem, lines wire.TypedLines) ([]byte, error) {
	p, err := it.PositionItem()
	if err != nil {
		return nil, err
	}
	return json.Marshal(wire.ItemOf(p, lines))
}

// lookup returns the answer memoized under k, nil if none; m.mu is held.
func (m *itemAnswers) lookup(k []byte) []byte {
	if a, ok := m.cur[string(k)]; ok {
		return a
	}
	if a, ok := m.old[string(k)]; ok {
		delete(m.old, string(k))
		m.put(string(k), a)
		return a
	}
	return nil
}

// put memoizes a under k, starting a generation when cur is full; m.mu is
// held.
func (m *itemAnswers) put(k string, a []byte) {
	if _, ok := m.cur[k]; ok {
		return // another request encoded it meanwhile
	}
	size := len(k) + len(a)
	if m.size+size > m.maxBytes {
		m.old, m.cur, m.size = m.cur, make(map[string][]byte, len(m.cur)), 0
	}
	m.cur[k] = a
	m.size += size
}

// writeItemsPage answers a page of a position's items, stored, byte for
// byte as c.JSON answers wire.PositionItemsPage of them decoded: the
// page's fields after its items (next, basis) are encoded so, with no
// items, and the memoized items spliced in.
func (s *server) writeItemsPage(c *gin.Context, items []store.StoredItem, lines wire.TypedLines, next string, basis wire.Basis) {
	answers, memoized, err := s.itemAnswers.answers(items, lines)
	if err != nil {
		writeError(c, err)
		return
	}
	s.metrics.itemsMemo.Add(float64(memoized))
	s.metrics.itemsEncoded.Add(float64(len(items) - memoized))
	const head = `{"items":[`
	rest, err := json.Marshal(wire.PositionItemsPage{Page: wire.Page[wire.PositionItem]{Items: []wire.PositionItem{}, Next: next}, Basis: basis})
	if err != nil {
		writeError(c, err)
		return
	}
	if !bytes.HasPrefix(rest, []byte(head+"]")) {
		panic("api: a PositionItemsPage no longer encodes its items first: " + string(rest))
	}
	size := len(rest) + len(answers)
	for _, a := range answers {
		size += len(a)
	}
	out := append(make([]byte, 0, size), head...)
	for i, a := range answers {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, a...)
	}
	out = append(out, rest[len(head):]...)
	c.Data(http.StatusOK, "application/json; charset=utf-8", out)
}
