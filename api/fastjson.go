package api

import (
	"github.com/fundsvc/fundsvc/wire"

	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/gin-gonic/gin"
)

// The responses that list position items (a document's overview, a
// position's items across documents) and a fund's documents are written by
// the appenders below instead of encoding/json. Through encoding/json, every
// amount went through a MarshalJSON whose output was validated again, and
// an overview's body cost more CPU than the whole rest of the request.
// The appenders write the very bytes encoding/json writes for the wire
// structs (compact, HTML-escaped, fields in declaration order, map keys
// sorted): itemWire and documentHeader in wire.go, and the overview's
// overviewResponse, which only the test still encodes and so lives there.
// TestAppendersMatchEncodingJSON holds them to it.

// bodies recycles the buffers responses are built in.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooledBody is the largest buffer put back into bodies; a rare huge
// response is left to the garbage collector.
const maxPooledBody = 1 << 20

// writeBody answers 200 with the JSON body that build appends to the
// buffer it is given.
func writeBody(c *gin.Context, build func([]byte) []byte) {
	bp := bodies.Get().(*[]byte)
	b := build((*bp)[:0])
	c.Data(http.StatusOK, "application/json; charset=utf-8", b)
	if cap(b) <= maxPooledBody {
		*bp = b
		bodies.Put(bp)
	}
}

// appendString appends s as a JSON string as encoding/json writes it. A
// string with nothing to escape (the usual identifier, date or title) is
// copied as it is; anything else goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendMoney(b []byte, m fund.Money) []byte {
	b = m.Append(append(b, '"'))
	return append(b, '"')
}

func appendDate(b []byte, d fund.Date) []byte {
	b = d.Append(append(b, '"'))
	return append(b, '"')
}

// appendTime writes t as time.Time's MarshalJSON does.
func appendTime(b []byte, t time.Time) []byte {
	b = t.AppendFormat(append(b, '"'), time.RFC3339Nano)
	return append(b, '"')
}

func appendOptionalMoney(b []byte, key string, m *fund.Money) []byte {
	if m == nil {
		return b
	}
	return appendMoney(append(b, key...), *m)
}

// appendItem writes it as its itemWire (toItem).
func appendItem(b []byte, it *fund.PositionItem) []byte {
	b = appendString(append(b, `{"type":`...), it.Kind.Type())
	b = appendString(append(b, `,"documentId":`...), it.DocumentID)
	b = strconv.AppendInt(append(b, `,"documentVersion":`...), int64(it.DocumentVersion), 10)
	b = appendString(append(b, `,"fundId":`...), it.FundID)
	b = appendString(append(b, `,"investorId":`...), it.InvestorID)
	b = appendString(append(b, `,"positionId":`...), it.PositionID)
	b = appendDate(append(b, `,"asOf":`...), it.AsOf)
	b = appendString(append(b, `,"currency":`...), it.Currency)
	b = appendMoney(append(b, `,"amount":`...), it.Amount)
	b = appendString(append(b, `,"status":`...), string(it.Status))
	if !it.Date.IsZero() {
		b = appendDate(append(b, `,"date":`...), it.Date)
	}
	b = appendOptionalMoney(b, `,"investment":`, it.Investment)
	b = appendOptionalMoney(b, `,"managementFee":`, it.ManagementFee)
	b = appendOptionalMoney(b, `,"fundExpenses":`, it.FundExpenses)
	b = appendOptionalMoney(b, `,"returnOfCapital":`, it.ReturnOfCapital)
	b = appendOptionalMoney(b, `,"realizedGain":`, it.RealizedGain)
	b = appendOptionalMoney(b, `,"income":`, it.Income)
	b = appendOptionalMoney(b, `,"recallable":`, it.Recallable)
	b = appendOptionalMoney(b, `,"withholding":`, it.Withholding)
	b = appendOptionalMoney(b, `,"commitment":`, it.Commitment)
	return append(b, '}')
}

// appendArray writes xs as a JSON array, each element with appendOne.
func appendArray[T any](b []byte, xs []T, appendOne func([]byte, *T) []byte) []byte {
	b = append(b, '[')
	for i := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendOne(b, &xs[i])
	}
	return append(b, ']')
}

// appendPage writes a Page[T] of xs, each with appendOne.
func appendPage[T any](b []byte, xs []T, appendOne func([]byte, *T) []byte, next string) []byte {
	b = appendArray(append(b, `{"items":`...), xs, appendOne)
	return append(appendNext(b, next), '}')
}

// appendNext writes a page's "next" member, left out when there is none.
func appendNext(b []byte, next string) []byte {
	if next == "" {
		return b
	}
	return appendString(append(b, `,"next":`...), next)
}

// appendKind writes the items of one kind as a JSON array.
func appendKind(b []byte, items []fund.PositionItem, kind fund.ItemKind) []byte {
	b = append(b, '[')
	n := 0
	for i := range items {
		if items[i].Kind != kind {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, &items[i])
		n++
	}
	return append(b, ']')
}

// appendHeader writes a documentHeader.
func appendHeader(b []byte, h *wire.DocumentHeader) []byte {
	b = appendString(append(b, `{"documentId":`...), h.DocumentID)
	b = appendString(append(b, `,"fundId":`...), h.FundID)
	b = appendString(append(b, `,"kind":`...), string(h.Kind))
	b = appendString(append(b, `,"title":`...), h.Title)
	b = appendString(append(b, `,"asOf":`...), h.AsOf)
	b = appendString(append(b, `,"currency":`...), h.Currency)
	b = strconv.AppendInt(append(b, `,"version":`...), int64(h.Version), 10)
	b = strconv.AppendInt(append(b, `,"positionCount":`...), int64(h.PositionCount), 10)
	if h.Status != "" {
		b = appendString(append(b, `,"status":`...), h.Status)
	}
	b = appendTime(append(b, `,"createdAt":`...), h.CreatedAt)
	if h.CreatedBy != "" {
		b = appendString(append(b, `,"createdBy":`...), h.CreatedBy)
	}
	return append(b, '}')
}

// appendActivity writes an activityWire, or null.
func appendActivity(b []byte, a *wire.CapitalActivity) []byte {
	if a == nil {
		return append(b, "null"...)
	}
	b = appendMoney(append(b, `{"amount":`...), a.Amount)
	b = appendString(append(b, `,"status":`...), a.Status)
	b = appendString(append(b, `,"date":`...), a.Date)
	if a.Description != "" {
		b = appendString(append(b, `,"description":`...), a.Description)
	}
	if a.Version != 0 {
		b = strconv.AppendInt(append(b, `,"version":`...), int64(a.Version), 10)
	}
	return append(b, '}')
}

// overview is one page of a document's overview: the document records and
// capital activities (first page only) and the position items of the page.
type overview struct {
	DocumentID        string
	Version           int
	Documents         *wire.OverviewDocuments // nil after the first page
	CapitalActivities *wire.CapitalActivities // nil after the first page
	Items             []fund.PositionItem
	Next              string
}

// appendOverview writes an overview as overviewResponse: the items grouped
// by position, the positions in the order of their IDs.
func appendOverview(b []byte, o *overview) []byte {
	b = appendString(append(b, `{"documentId":`...), o.DocumentID)
	b = strconv.AppendInt(append(b, `,"version":`...), int64(o.Version), 10)
	if d := o.Documents; d != nil {
		b = appendHeader(append(b, `,"documents":{"latest":`...), &d.Latest)
		b = append(appendArray(append(b, `,"historical":`...), d.Historical, appendHeader), '}')
	}
	if a := o.CapitalActivities; a != nil {
		b = appendActivity(append(b, `,"capitalActivities":{"latest":`...), a.Latest)
		b = append(appendArray(append(b, `,"historical":`...), a.Historical, appendActivity), '}')
	}
	b = append(b, `,"positions":{`...)
	items := o.Items
	if !slices.IsSortedFunc(items, byPositionID) {
		items = slices.Clone(items)
		slices.SortStableFunc(items, byPositionID)
	}
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].PositionID == items[i].PositionID {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		group := items[i:j]
		b = append(appendString(b, items[i].PositionID), ':')
		b = appendString(append(b, `{"investorId":`...), items[i].InvestorID)
		b = appendKind(append(b, `,"capitalCalls":`...), group, fund.CapitalCall)
		b = appendKind(append(b, `,"distributions":`...), group, fund.Distribution)
		b = appendKind(append(b, `,"unfundedCommitments":`...), group, fund.UnfundedCommitment)
		b = append(b, '}')
		i = j
	}
	b = append(b, '}')
	return append(appendNext(b, o.Next), '}')
}

func byPositionID(a, b fund.PositionItem) int { return strings.Compare(a.PositionID, b.PositionID) }
