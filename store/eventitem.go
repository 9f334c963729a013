package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// eventBytes is about the size of e's JSON: its fixed members, and each
// position's IDs, change and item types.
func eventBytes(e *fund.Event) int {
	n := 300 + 2*len(e.Data.DocumentID) + len(e.Data.FundID)
	for _, p := range e.Data.Positions {
		n += 70 + len(p.PositionID) + len(p.InvestorID) + 24*len(p.ItemTypes)
	}
	return n
}

// order is the item's place in commit order: its index sort key.
func (it *eventItem) order() string { return EventOrderSK(it.CommittedAt, it.DocumentID, it.Version) }

func compareEventItems(a, b eventItem) int { return strings.Compare(a.order(), b.order()) }

// eventItem is the stored event of one committed version.
type eventItem struct {
	PK, SK         string
	GSI1PK, GSI1SK string
	GSI2PK, GSI2SK string
	Type           string
	EventType      string
	DocumentID     string
	FundID         string
	Kind           string
	Version        int
	CommittedAt    time.Time
	// Touched is the positions the version touched: gzip of one line per
	// position, "<change>\t<item kinds, comma-separated>\t<position ID>\t<investor ID>".
	// When that is longer than maxTouchedInline, Touched is empty and the
	// bytes are split over TouchedParts items of the commit's event part
	// partition (EventPartPK of DocumentID and CommitID), staged with the
	// version before its commit.
	Touched      []byte `dynamo:",omitempty"`
	TouchedParts int    `dynamo:",omitempty"`
	CommitID     string `dynamo:",omitempty"`
}

// maxTouchedInline is the most bytes of touched positions an event item or
// one of its parts holds, well under DynamoDB's 400 KB an item. IDs of
// random characters barely compress: 5,000 positions with 64-character
// position and investor IDs take about 480 KB, and a restatement that
// replaces them all touches twice as many.
const maxTouchedInline = 350_000

// touched is the encoded positions a version touched, held in its event
// item (inline) or split into parts.
type touched struct {
	inline []byte
	parts  [][]byte
}

// touchedOf encodes the positions version d touched against replaced (nil:
// none), c, split into parts of at most partBytes when longer.
func touchedOf(d, replaced *fund.Document, c *fund.Changes, partBytes int) (touched, error) {
	b, err := encodeTouched(fund.EventPositions(c, replaced, d))
	if err != nil || len(b) <= partBytes {
		return touched{inline: b}, err
	}
	var t touched
	for len(b) > 0 {
		n := min(partBytes, len(b))
		t.parts, b = append(t.parts, b[:n]), b[n:]
	}
	return t, nil
}

// eventPartItem is one part of an event's touched positions.
type eventPartItem struct {
	PK, SK  string
	Type    string
	Touched []byte
}

// partItems are the items of t's parts, for version d: written before the
// commit that puts the event naming them.
func (t touched) partItems(d *fund.Document) []eventPartItem {
	out := make([]eventPartItem, len(t.parts))
	for i, b := range t.parts {
		out[i] = eventPartItem{PK: EventPartPK(d.ID, d.CommitID), SK: EventPartSK(i), Type: TypeEventPart, Touched: b}
	}
	return out
}

// newEventItem is the event of version d committed at the given instant,
// which touched t.
func (s *Store) newEventItem(d *fund.Document, committedAt time.Time, t touched) eventItem {
	order := EventOrderSK(committedAt, d.ID, d.Version)
	it := eventItem{
		PK: EventPK(d.ID), SK: EventSK(d.Version), Type: TypeEvent,
		GSI1PK: EventsGSI1PK(committedAt, ChangeShard(d.ID, s.changeShards())), GSI1SK: order,
		GSI2PK: FundEventsGSI2PK(d.FundID, committedAt), GSI2SK: order,
		EventType: string(fund.EventTypeOf(d)), DocumentID: d.ID, FundID: d.FundID, Kind: string(d.Kind),
		Version: d.Version, CommittedAt: committedAt, Touched: t.inline,
	}
	if len(t.parts) > 0 {
		it.TouchedParts, it.CommitID = len(t.parts), d.CommitID
	}
	return it
}

// eventOf is the event it stores. An event whose touched positions are in
// parts costs one more strongly consistent Query (a read unit per 4 KB).
func (s *Store) eventOf(ctx context.Context, it *eventItem) (fund.Event, error) {
	b := it.Touched
	if it.TouchedParts > 0 {
		var parts []eventPartItem
		err := s.table.Get(AttrPK, EventPartPK(it.DocumentID, it.CommitID)).Consistent(true).All(ctx, &parts)
		if err != nil {
			return fund.Event{}, fmt.Errorf("store: read the event of document %s version %d: %w", it.DocumentID, it.Version, err)
		}
		if len(parts) != it.TouchedParts {
			return fund.Event{}, fmt.Errorf("store: the event of document %s version %d has %d of its %d parts", it.DocumentID, it.Version, len(parts), it.TouchedParts)
		}
		b = nil
		for _, p := range parts {
			b = append(b, p.Touched...)
		}
	}
	ps, err := decodeTouched(b)
	if err != nil {
		return fund.Event{}, fmt.Errorf("store: the event of document %s version %d: %w", it.DocumentID, it.Version, err)
	}
	return fund.Event{
		ID: fund.EventID(it.DocumentID, it.Version), Type: fund.EventType(it.EventType), Timestamp: it.CommittedAt.UTC(),
		Data: fund.EventData{
			DocumentID: it.DocumentID, FundID: it.FundID, Kind: fund.Kind(it.Kind), Version: it.Version,
			VersionPath: fund.VersionPath(it.DocumentID, it.Version), Positions: ps,
		},
	}, nil
}

func encodeTouched(ps []fund.EventPosition) ([]byte, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, p := range ps {
		kinds := make([]string, len(p.ItemTypes))
		for i, k := range p.ItemTypes {
			kinds[i] = string(k)
		}
		if _, err := fmt.Fprintf(zw, "%s\t%s\t%s\t%s\n", p.Change, strings.Join(kinds, ","), p.PositionID, p.InvestorID); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeTouched(b []byte) ([]fund.EventPosition, error) {
	out := []fund.EventPosition{}
	if len(b) == 0 {
		return out, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("a touched position %q is not change, kinds, position and investor", line)
		}
		p := fund.EventPosition{PositionID: f[2], InvestorID: f[3], Change: fund.PositionChange(f[0]), ItemTypes: []fund.ItemKind{}}
		if f[1] != "" {
			for _, k := range strings.Split(f[1], ",") {
				p.ItemTypes = append(p.ItemTypes, fund.ItemKind(k))
			}
		}
		out = append(out, p)
	}
	return out, nil
}
