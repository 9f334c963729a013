package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/store"
)

// The cost of history: the read units of a document's overview (its first
// page, limit=1) at 1 version and at -history versions. Where the service
// takes knownAt, also of the same overview as known at the instant its
// middle version was the latest. A document's history must not make its
// latest reads dearer: the overview reads the latest view and the head's
// recent versions only, whatever the number of versions. A read as known
// at an instant finds its version in ⌈log₂ n⌉ GetItems.

// historyName is the measurement's name, which -only selects.
const historyName = "history: overview read units by versions"

// historyRow is one read's capacity at both lengths of history.
type historyRow struct {
	name      string
	one, many store.Capacity
	skip      string
}

// measureHistory writes two documents of one position through the API,
// one once and one versions times (each a restatement), then measures
// the overview's capacity on each, n requests apiece. Nothing else runs
// against the service then.
func measureHistory(ctx context.Context, svc *service, o options, n int) ([]historyRow, error) {
	tag := strconv.FormatInt(time.Now().Unix(), 36)
	spec := func(id string) docSpec {
		return docSpec{id: id, fundID: "HISTORY_" + tag, posPrefix: "HIST_" + tag + "_", positions: 1}
	}
	one, many := "HIST_ONE_"+tag, "HIST_MANY_"+tag
	if _, err := putRevision(ctx, svc, spec(one), 1); err != nil {
		return nil, err
	}
	// middle is an instant at which version versions/2 of many was the
	// latest: taken after its PUT answered and before the next was sent.
	var middle time.Time
	start := time.Now()
	for v := 1; v <= o.history; v++ {
		if _, err := putRevision(ctx, svc, spec(many), v); err != nil {
			return nil, err
		}
		if v == o.history/2 {
			middle = time.Now().UTC()
		}
		if v%100 == 0 {
			fmt.Printf("  history: %d of %d versions written (%s)\n", v, o.history, time.Since(start).Round(time.Second))
		}
	}
	overview := func(doc, query string) func(int) error {
		return func(int) error {
			_, _, err := svc.expect(ctx, http.StatusOK, http.MethodGet, "/v1/documents/"+doc+"?limit=1"+query, nil)
			return err
		}
	}
	var rows []historyRow
	measure := func(name, query string) error {
		row := historyRow{name: name}
		var err error
		if row.one, err = apiCapacity(ctx, svc, n, overview(one, query)); err != nil {
			return err
		}
		if row.many, err = apiCapacity(ctx, svc, n, overview(many, query)); err != nil {
			return err
		}
		rows = append(rows, row)
		fmt.Printf("  %s: %s at 1 version, %s at %d\n", name, units(row.one), units(row.many), o.history)
		return nil
	}
	if err := measure("overview, limit=1", ""); err != nil {
		return nil, err
	}
	knownAt := "&knownAt=" + url.QueryEscape(middle.Format(time.RFC3339Nano))
	if why := probe(ctx, svc, "/v1/documents/"+many+"?limit=1"+knownAt); why != "" {
		rows = append(rows, historyRow{name: "overview, limit=1, knownAt its middle version", skip: why})
		return rows, nil
	}
	return rows, measure("overview, limit=1, knownAt its middle version", knownAt)
}

// putRevision stores revision r of the document s through the API.
func putRevision(ctx context.Context, svc *service, s docSpec, r int) (int, error) {
	body, err := requestBody(makeDocument(s, r))
	if err != nil {
		return 0, err
	}
	want := http.StatusOK
	if r == 1 {
		want = http.StatusCreated
	}
	status, _, err := svc.expect(ctx, want, http.MethodPut, "/v1/documents/"+s.id, body)
	return status, err
}

// formatHistory is the history table of the report.
func formatHistory(o options, rows []historyRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "History (`-history=%d`): read units per request of a document's overview (first page, `limit=1`), averaged over %d requests, on a document of one version and on one restated to %d versions (one position each, written through the API), read off the service's /metrics.\n\n", o.history, o.costRequests, o.history)
	fmt.Fprintf(&b, "| read | 1 version | %d versions | ratio |\n|---|---:|---:|---:|\n", o.history)
	for _, r := range rows {
		if r.skip != "" {
			fmt.Fprintf(&b, "| %s | – | – | %s |\n", r.name, r.skip)
			continue
		}
		ratio := "–"
		if r.one.Read > 0 {
			ratio = strconv.FormatFloat(r.many.Read/r.one.Read, 'f', 2, 64)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.name, num(r.one.Read), num(r.many.Read), ratio)
	}
	return b.String()
}
