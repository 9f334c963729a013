package export_test

import (
	"context"
	"testing"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/duckdbtest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
)

func TestSmoke(t *testing.T) {
	e := fundtest.New(t)
	e.Seed(t)
	dir := t.TempDir()
	sink, err := export.OpenSink(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := export.Run(context.Background(), export.Config{Table: e.Store.Table(), Sink: sink, Date: fund.MustDate("2026-11-22")})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Datasets {
		t.Logf("%s rows=%d bytes=%d files=%d", d.Name, d.Rows, d.Bytes, len(d.Files))
		for _, f := range d.Files {
			res, err := duckdbtest.Query(context.Background(), "SELECT * FROM read_parquet('"+f.URI+"')")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v %v", res.Columns, res.Types)
			for _, r := range res.Rows {
				var s []string
				for _, v := range r {
					if v == nil {
						s = append(s, "NULL")
					} else {
						s = append(s, *v)
					}
				}
				t.Logf("  %v", s)
			}
		}
	}
}
