package main

import (
	"testing"

	"github.com/fundsvc/fundsvc/store"
	"github.com/shopspring/decimal"
)

// TestMonthlyCostArithmetic holds the cost model to figures worked out by
// hand: the line through two ingests, an overview scaled to the
// reference document's positions, reads a day over an average month, the
// on-demand prices, storage in GB. The bench writes docs/benchmarks.md's
// monthly table with this code, so the table is not hand-typed.
func TestMonthlyCostArithmetic(t *testing.T) {
	rows := []*costRow{
		{name: "document overview", api: store.Capacity{Read: 4}},
		{name: "position across documents", api: store.Capacity{Read: 1.5}},
		{name: summaryName, skip: "not measured"},
		{name: "fund documents", api: store.Capacity{Read: 0.5}},
		{name: "ingest, 100 positions", positions: 100, api: store.Capacity{Read: 20, Write: 1010}, storedKB: 300, tableKB: 150, versionKB: 60, historyBytes: 300},
		{name: "ingest, 1000 positions", positions: 1000, api: store.Capacity{Read: 110, Write: 10010}, storedKB: 2100, tableKB: 1050, versionKB: 600, historyBytes: 300},
	}
	m, ok := fitModel(rows, 100)
	if !ok {
		t.Fatal("no model")
	}
	if m.perPosition != (store.Capacity{Read: 0.1, Write: 10}) || m.perDocument != (store.Capacity{Read: 10, Write: 10}) {
		t.Fatalf("the line through the ingests: per position %+v, per document %+v", m.perPosition, m.perDocument)
	}
	if m.stored != (size{perDoc: 100, perPos: 2}) || m.table != (size{perDoc: 50, perPos: 1}) || m.version != (size{perDoc: 0, perPos: 0.6}) {
		t.Fatalf("sizes: stored %+v, table %+v, version %+v", m.stored, m.table, m.version)
	}
	w := referenceLoad{documentsPerQuarter: 600, positionsPerDocument: 250, restatementsPerQuarter: 60,
		overviewsPerDay: 2000, positionReadsPerDay: 100, fundListingsPerDay: 0, storageAfterQuarters: 4}
	p := prices{perMillionReads: decimal.RequireFromString("0.125"), perMillionWrites: decimal.RequireFromString("0.625"), perGBMonth: decimal.RequireFromString("0.25")}
	want := []struct{ count, read, write, cost string }{
		// 200 documents a month of 250 positions: 35 read and 2,510 write units each.
		{"200", "7000", "502000", "0.314625"},
		{"20", "700", "50200", "0.0314625"},
		// 2,000 a day × 30.4375 days × 4 read units × 250/100 positions.
		{"60875", "608750", "0", "0.07609375"},
		{"3043.75", "4565.625", "0", "0.000570703125"},
		{"0", "0", "0", "0"}, // the summary, not measured
		{"0", "0", "0", "0"},
	}
	lines := m.monthly(w, p)
	if len(lines) != len(want)+3 {
		t.Fatalf("%d lines, want %d", len(lines), len(want)+3)
	}
	for i, l := range lines[:len(want)] {
		got := []string{l.count.String(), l.read.String(), l.write.String(), l.cost.String()}
		if got[0] != want[i].count || got[1] != want[i].read || got[2] != want[i].write || got[3] != want[i].cost {
			t.Errorf("%s: %v, want %+v", l.what, got, want[i])
		}
	}
	// The nightly incremental export: 660 documents a quarter are 220 a
	// month, each read with its history (2 × 300 bytes: 1 unit) and its
	// version partition (0.6 KB × 250 = 150 KB: 38 units); 5 units a night
	// of change index; 9 lease writes a night.
	inc := lines[len(want)]
	if inc.instead || inc.read.StringFixed(4) != "8732.1875" || inc.write.StringFixed(4) != "273.9375" {
		t.Errorf("%s: %s read and %s write units, want 8732.1875 and 273.9375", inc.what, inc.read, inc.write)
	}
	// 4 quarters × 660 versions × (100 + 2 × 250) KB = 1,584,000 KB.
	st := lines[len(want)+1]
	if wantGB := decimal.NewFromInt(1_584_000).Div(decimal.NewFromInt(1 << 20)); !st.gb.Equal(wantGB) || !st.cost.Equal(wantGB.Mul(p.perGBMonth)) {
		t.Errorf("storage: %s GB for %s, want %s GB", st.gb, st.cost, wantGB)
	}
	// Instead, a full export a night: 2,640 versions × (50 + 1 × 250) KB of
	// table items, a unit per 4 KB: 198,000 units a night.
	full := lines[len(want)+2]
	if !full.instead || full.read.StringFixed(4) != "6026625.0000" || full.write.StringFixed(4) != "152.1875" {
		t.Errorf("%s: %s read and %s write units, want 6026625 and 152.1875, and left out of the total", full.what, full.read, full.write)
	}
}

func TestUSDShowsCostsBelowACent(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0.00", "1.391": "1.39", "0.01": "0.01", "0.0099": "0.0099",
		"0.00214": "0.0021", "0.000051": "0.000051", "-0.0031": "-0.0031", "12345.678": "12345.68",
	} {
		if got := usd(decimal.RequireFromString(in)); got != want {
			t.Errorf("usd(%s) = %s, want %s", in, got, want)
		}
	}
}
