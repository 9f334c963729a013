package fund

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EventType is what a committed version did to its document. Its values are
// Standard Webhooks' dotted `<resource>.<action>` names, the one exception
// to the API's lower snake_case enums (each part is lower snake_case).
type EventType string

// The event types: every committed version of a document is exactly one.
const (
	EventDocumentCreated  EventType = "document.created"  // version 1
	EventDocumentRestated EventType = "document.restated" // a later version that is not a void
	EventDocumentVoided   EventType = "document.voided"   // the void (DELETE), always the last version
)

// EventTypes lists every event type.
var EventTypes = []EventType{EventDocumentCreated, EventDocumentRestated, EventDocumentVoided}

// Valid reports whether t is one of EventTypes.
func (t EventType) Valid() bool {
	for _, v := range EventTypes {
		if t == v {
			return true
		}
	}
	return false
}

// EventTypeOf is the type of the event of version d.
func EventTypeOf(d *Document) EventType {
	switch {
	case d.Voided:
		return EventDocumentVoided
	case d.Version <= 1:
		return EventDocumentCreated
	default:
		return EventDocumentRestated
	}
}

// PositionChange is what a version did to one position.
type PositionChange string

// The changes of a position, as Compare finds them.
const (
	PositionAdded   PositionChange = "added"
	PositionRemoved PositionChange = "removed"
	PositionChanged PositionChange = "changed"
)

// Event is one committed version of a document, as the feed
// (GET /v1/events) lists it and a webhook delivers it: the payload of
// Standard Webhooks 1.0 (`type`, `timestamp`, `data`) with the event's id,
// which is also its `webhook-id`. It names what changed, never an amount.
type Event struct {
	ID        string    `json:"id" doc:"The event's ID, stable for ever and the same on every delivery (the webhook-id header of a delivery): derived from the document ID and the version, evt_<documentId>_v<version>."`
	Type      EventType `json:"type" doc:"What the version did: document.created (version 1), document.restated (a later version) or document.voided (the void, the document's last version). Named type, as Standard Webhooks' payload names it."`
	Timestamp time.Time `json:"timestamp" doc:"The instant the version was committed (UTC, RFC 3339 with nanoseconds when any): the feed's order, and the knownAt from which the version is what reads answer."`
	Data      EventData `json:"data" doc:"The version the event announces."`
}

// EventData is what an event announces: one version of one document.
type EventData struct {
	DocumentID string `json:"documentId" doc:"The document the version belongs to."`
	FundID     string `json:"fundId" doc:"The document's fund."`
	Kind       Kind   `json:"kind" doc:"What the document is: capital_call_notice, distribution_notice or capital_account_statement."`
	Version    int    `json:"version" doc:"The version committed (1 for document.created)."`
	// VersionPath is where the version is read, whole and as it was committed.
	VersionPath string          `json:"versionPath" doc:"The path of the version this event announces, /v1/documents/{documentId}/versions/{version}: reading it answers exactly what the event announced, for ever."`
	Positions   []EventPosition `json:"positions" doc:"The positions the version touches, sorted by ID: added, removed or changed against the version it replaced (every position of version 1 is added; every position of the replaced version is removed by a void). An investor token sees only its own positions. Never any amount."`
}

// EventPosition is one position a version touched, and how.
type EventPosition struct {
	PositionID string         `json:"positionId" doc:"The position."`
	InvestorID string         `json:"investorId" doc:"The position's investor."`
	Change     PositionChange `json:"change" doc:"added (reported by this version and not by the one it replaced), removed (reported by the replaced version and not by this one) or changed (reported by both, with an item added, removed or different)."`
	ItemTypes  []ItemKind     `json:"itemTypes" doc:"The types of the position's items that were added, removed or changed (capital_account, capital_call, distribution, unfunded_commitment), in that order."`
}

// EventID is the ID of the event of version of document doc. It is
// unambiguous: the version is the digits after the last "_v".
func EventID(doc string, version int) string {
	return "evt_" + doc + "_v" + strconv.Itoa(version)
}

// ParseEventID splits an event ID into its document and version; ok is
// false for any string EventID does not make.
func ParseEventID(id string) (doc string, version int, ok bool) {
	rest, found := strings.CutPrefix(id, "evt_")
	if !found {
		return "", 0, false
	}
	i := strings.LastIndex(rest, "_v")
	if i <= 0 {
		return "", 0, false
	}
	v, err := strconv.Atoi(rest[i+2:])
	if err != nil || v < 1 || strconv.Itoa(v) != rest[i+2:] {
		return "", 0, false
	}
	return rest[:i], v, ValidID(rest[:i])
}

// VersionPath is the API path of one version of a document.
func VersionPath(doc string, version int) string {
	return fmt.Sprintf("/v1/documents/%s/versions/%d", doc, version)
}

// EventPositions lists c, what next changed against prev (nil when next
// creates the document) as Compare answers it, position by position,
// sorted by ID.
func EventPositions(c *Changes, prev, next *Document) []EventPosition {
	if prev == nil {
		prev = &Document{}
	}
	investor := map[string]string{}
	for _, d := range []*Document{prev, next} {
		for _, p := range d.Positions {
			investor[p.ID] = p.InvestorID
		}
	}
	var out []EventPosition
	for _, g := range []struct {
		ids    []string
		change PositionChange
	}{{c.Positions.Added, PositionAdded}, {c.Positions.Removed, PositionRemoved}, {c.Positions.Changed, PositionChanged}} {
		for _, id := range g.ids {
			p := EventPosition{PositionID: id, InvestorID: investor[id], Change: g.change, ItemTypes: []ItemKind{}}
			for k, kind := range ItemKinds {
				it := c.Items[k]
				if sortedContains(it.Added, id) || sortedContains(it.Removed, id) || sortedContains(it.Changed, id) {
					p.ItemTypes = append(p.ItemTypes, kind)
				}
			}
			out = append(out, p)
		}
	}
	sortEventPositions(out)
	if out == nil {
		out = []EventPosition{}
	}
	return out
}

// sortedContains reports whether the sorted list ids holds id.
func sortedContains(ids []string, id string) bool {
	lo, hi := 0, len(ids)
	for lo < hi {
		m := (lo + hi) / 2
		if ids[m] < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(ids) && ids[lo] == id
}

func sortEventPositions(ps []EventPosition) {
	slices.SortFunc(ps, func(a, b EventPosition) int { return strings.Compare(a.PositionID, b.PositionID) })
}

// EventCursor is a place in the feed, in commit order: right after the
// event of (DocumentID, Version) committed at At or, when DocumentID is
// empty, right after every event committed at or before At. The zero
// cursor is the beginning of the feed.
type EventCursor struct {
	At         time.Time
	DocumentID string
	Version    int
}

// IsZero reports whether c is the beginning of the feed.
func (c EventCursor) IsZero() bool { return c.At.IsZero() && c.DocumentID == "" }

// String is c in a form ParseEventCursor reads back: what a caller stores.
// The zero cursor is "".
func (c EventCursor) String() string {
	if c.IsZero() {
		return ""
	}
	s := c.At.UTC().Format(time.RFC3339Nano)
	if c.DocumentID != "" {
		s += "|" + c.DocumentID + "|" + strconv.Itoa(c.Version)
	}
	return s
}

// ParseEventCursor reads a cursor String wrote ("" is the beginning). It
// returns EINVALID for anything else.
func ParseEventCursor(s string) (EventCursor, error) {
	if s == "" {
		return EventCursor{}, nil
	}
	bad := Invalid("cursor", "is not an event cursor")
	parts := strings.Split(s, "|")
	at, err := time.Parse(time.RFC3339Nano, parts[0])
	if err != nil || (len(parts) != 1 && len(parts) != 3) {
		return EventCursor{}, bad
	}
	c := EventCursor{At: at.UTC()}
	if len(parts) == 3 {
		v, err := strconv.Atoi(parts[2])
		if err != nil || v < 1 || !ValidID(parts[1]) {
			return EventCursor{}, bad
		}
		c.DocumentID, c.Version = parts[1], v
	}
	return c, nil
}

// Passed reports whether e is at or before c in commit order: a read of
// the feed after c does not return it.
func (c EventCursor) Passed(e *Event) bool {
	at := e.Timestamp.Round(0).Compare(c.At.Round(0))
	if c.DocumentID == "" {
		return at <= 0
	}
	return cmp.Or(at, strings.Compare(e.Data.DocumentID, c.DocumentID), cmp.Compare(e.Data.Version, c.Version)) <= 0
}

// CursorAfter is the cursor right after e.
func CursorAfter(e *Event) EventCursor {
	return EventCursor{At: e.Timestamp, DocumentID: e.Data.DocumentID, Version: e.Data.Version}
}

// EventFilter narrows a read of the feed.
type EventFilter struct {
	// Types keeps the events of these types; none keeps every type.
	Types []EventType
	// Funds keeps the events of these funds; none keeps every fund the
	// reader may read.
	Funds []string
	// Until is the last commit instant read; zero is the watermark
	// (the store's SettledUntil). A later Until reads events that may still be joined
	// by others committed before them (see EventPage.Watermark).
	Until time.Time
}

// EventPage is one page of the feed.
type EventPage struct {
	// Events in commit order: by commit instant, then document ID, then
	// version, so each document's versions are in version order.
	Events []Event
	// Next is where the next page starts: right after the page's last
	// event, or right after Until when the page reached it.
	Next EventCursor
	// More says that the page stopped before Until (it is full, or it used
	// up its Queries): read on from Next at once. Without More, the feed is
	// read up to Until; read from Next again later for newer events.
	More bool
	// Watermark is the store's SettledUntil when the page was read: every event
	// committed at or before it is in the feed, and none can appear there
	// later. A page read with an Until after it may be joined later by
	// events committed before its last ones (a commit in flight, an index
	// catching up): a caller that reads past the watermark keeps its
	// persisted cursor at or before the watermark and reads the rest again,
	// deduplicating by event ID.
	Watermark time.Time
}
