package export_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestAVoidedDocumentLeavesTheCurrentDatasets exports documents in full,
// voids two of them (one restated before) and exports again, incrementally
// and in full: both snapshots hold the same rows; the voided documents'
// versions are in document_versions, the last one with status voided, and
// the documents are in no other dataset; every other document is whole.
func TestAVoidedDocumentLeavesTheCurrentDatasets(t *testing.T) {
	e := fundtest.New(t)
	clock := &storeClock{t: fundtest.Clock}
	e.Store.Now = clock.now
	r := rand.New(rand.NewPCG(23, 1))
	ids := ingestDocuments(t, e, r, 9)
	voided := []string{ids[2], ids[5]}
	if _, err := e.Store.Restate(context.Background(), ingestDocument(r, ids[5], fundOf(ids[5])), nil); err != nil {
		t.Fatal(err)
	}
	clock.pass()
	sink, dir := dirSink(t)
	exportCounting(t, e, sink, snapshotDate.String(), false)
	before := duck(t, views(t, dir, ""), "SELECT DISTINCT document_id FROM capital_calls UNION SELECT DISTINCT document_id FROM distributions")
	for _, id := range voided {
		if !slices.ContainsFunc(before, func(row []string) bool { return row[0] == id }) {
			t.Fatalf("control: %s has no capital call or distribution in the export before its void, so the test could not fail", id)
		}
	}

	clock.pass()
	for _, id := range voided {
		if _, err := e.Store.Void(context.Background(), fund.Document{ID: id, CreatedBy: "test"}, store.AnyVersion); err != nil {
			t.Fatalf("void %s: %v", id, err)
		}
	}
	clock.pass()
	inc, _ := exportCounting(t, e, sink, snapshotDate.String(), true)
	if inc.Kind != "incremental" || inc.DocumentsChanged != len(voided) {
		t.Errorf("kind %q, %d documents changed; want incremental, %d", inc.Kind, inc.DocumentsChanged, len(voided))
	}
	fullSink, fullDir := dirSink(t)
	exportCounting(t, e, fullSink, snapshotDate.String(), false)
	got, want := datasetRows(t, dir), datasetRows(t, fullDir)
	for _, name := range export.Datasets {
		if !slices.EqualFunc(got[name], want[name], slices.Equal) {
			t.Errorf("%s: the incremental snapshot has %d rows, the full export %d, and they differ", name, len(got[name]), len(want[name]))
		}
	}

	for _, d := range []string{dir, fullDir} {
		statuses := map[string]string{}
		for _, row := range duck(t, views(t, d, ""), "SELECT document_id, string_agg(version || ' ' || status, ', ' ORDER BY version) FROM document_versions GROUP BY document_id") {
			statuses[row[0]] = row[1]
		}
		if got := statuses[voided[0]]; got != "1 superseded, 2 voided" {
			t.Errorf("document_versions of %s, voided at version 2: %q", voided[0], got)
		}
		if got := statuses[voided[1]]; got != "1 superseded, 2 superseded, 3 voided" {
			t.Errorf("document_versions of %s, restated then voided: %q", voided[1], got)
		}
		var selects []string
		for _, name := range []string{"documents", "capital_activities", "capital_accounts", "capital_calls", "distributions", "transaction_lines", "unfunded_commitments"} {
			if len(published(t, d, "", name)) > 0 { // an empty dataset's view has no document_id
				selects = append(selects, "SELECT '"+name+"', document_id FROM "+name+" WHERE document_id IN ('"+strings.Join(voided, "', '")+"')")
			}
		}
		if rows := duck(t, views(t, d, ""), strings.Join(selects, " UNION ALL ")); len(rows) != 0 {
			t.Errorf("the current datasets hold rows of the voided documents: %v", rows)
		}
	}
	var live []string
	for _, id := range ids {
		if !slices.Contains(voided, id) {
			live = append(live, id)
		}
	}
	checkWhole(t, e, dir, live)
}
