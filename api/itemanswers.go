package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"unsafe"

	"github.com/fundsvc/fundsvc/store"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// itemAnswers memoizes the JSON answer of each item the position read
// across documents answers, by the item's stored content and the typed
// lines asked for. That read is a portal's most frequent, and most of its
// time was the service decoding the same items into the domain and
// encoding them again (docs/benchmarks.md); an item answered
// before now costs the hash of its content and one lookup.
//
// The key is a 128-bit keyed hash of the item's whole content
// (store.StoredItem.HashContent, seeds drawn by the process): an answer is
// a function of the content alone, so a hit is the answer decoding and
// encoding would give, whatever wrote the item and however, and no write
// needs to invalidate anything. Two contents share a key with a chance of
// about 2^-128 a pair. The memo holds two generations of at most maxBytes
// each, entries and answers counted (FUNDSVC_ITEM_MEMO_BYTES is both
// together): when the newer fills, the older is dropped and the newer
// takes its place, and an answer found in the older moves to the newer.
type itemAnswers struct {
	seeds    store.ContentSeeds
	mu       sync.Mutex
	cur, old map[itemKey][]byte
	size     int // of cur's entries and answers, in bytes
	maxBytes int // of one generation
}

// itemKey is an item's key in the memo: the typed lines asked for and the
// hash of its content.
type itemKey struct {
	lines   wire.TypedLines
	content store.ContentHash
}

// entryBytes is what the memo counts for an entry besides its answer's
// bytes: the key and the answer's slice header (the lines' string is the
// parameter's declared value, params.oneOf, shared, not the request's).
const entryBytes = int(unsafe.Sizeof(itemKey{}) + unsafe.Sizeof([]byte(nil)))

// DefaultItemMemoBytes is Options.ItemMemoBytes when zero: some 100,000
// items (the demo's answers are of 280 to 720 bytes; the maps' own
// buckets, some 10% more, are not counted).
const DefaultItemMemoBytes = 64 << 20

// newItemAnswers returns a memo of at most total bytes, two generations of
// half as much; nil, no memo, when total is not positive.
func newItemAnswers(total int64) *itemAnswers {
	if total <= 0 {
		return nil
	}
	return &itemAnswers{seeds: store.NewContentSeeds(), cur: map[itemKey][]byte{}, old: map[itemKey][]byte{}, maxBytes: int(total / 2)}
}

// answers returns the JSON answer of each item, as json.Marshal encodes
// wire.ItemOf of it decoded, from the memo when it holds it, and how many
// were. A nil memo holds none and keeps none.
func (m *itemAnswers) answers(items []store.StoredItem, lines wire.TypedLines) (out [][]byte, memoized int, err error) {
	out = make([][]byte, len(items))
	keys := make([]itemKey, len(items))
	keyed := make([]bool, len(items)) // false: not memoized (no memo, or an attribute of a type unknown here)
	if m != nil {
		for i, it := range items {
			keys[i].lines = lines
			keys[i].content, keyed[i] = it.HashContent(m.seeds)
		}
		m.mu.Lock()
		for i := range items {
			if keyed[i] {
				if out[i] = m.lookup(keys[i]); out[i] != nil {
					memoized++
				}
			}
		}
		m.mu.Unlock()
	}

	var encoded []int
	for i, it := range items {
		if out[i] != nil {
			continue
		}
		if out[i], err = encodeItem(it, lines); err != nil {
			return nil, 0, err
		}
		if keyed[i] {
			encoded = append(encoded, i)
		}
	}
	if len(encoded) > 0 {
		m.mu.Lock()
		for _, i := range encoded {
			m.put(keys[i], out[i])
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
func (m *itemAnswers) lookup(k itemKey) []byte {
	if a, ok := m.cur[k]; ok {
		return a
	}
	if a, ok := m.old[k]; ok {
		delete(m.old, k)
		m.put(k, a)
		return a
	}
	return nil
}

// put memoizes a under k, starting a generation when cur is full; m.mu is
// held.
func (m *itemAnswers) put(k itemKey, a []byte) {
	if _, ok := m.cur[k]; ok {
		return // another request encoded it meanwhile
	}
	size := entryBytes + len(a)
	if m.size+size > m.maxBytes {
		m.old, m.cur, m.size = m.cur, make(map[itemKey][]byte, len(m.cur)), 0
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
