package export_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/store"
)

// TestSkewedClocksLoseNoChange runs an exporter and a writer, two stores
// on one table, whose machines' clocks are twice the settle margin apart:
// the writer's behind, or the exporter's ahead. The writer commits a new
// document right after a full export's Scan, too late for that snapshot;
// the next incremental export, from that snapshot's high-water mark, must
// read it. Each store's Now is its machine's clock corrected to DynamoDB's
// (store.Store.TableClock), so the commit is stamped after the mark and
// the incremental snapshot equals a full export of the same moment. The
// same runs with each store stamping by its machine's clock as it is lose
// the document: the commit is indexed below the published mark, which is
// why the correction is there.
func TestSkewedClocksLoseNoChange(t *testing.T) {
	e := fundtest.New(t)
	exporter := e.Store
	writer := store.NewStore(store.NewDB(dynamotest.Shared().Config()), e.Table)
	skew := 2 * store.ChangeSettleMargin
	clock := func(s *store.Store, ahead time.Duration, corrected bool) func() time.Time {
		machine := func() time.Time { return time.Now().Add(ahead) }
		if corrected {
			return s.TableClock(machine)
		}
		return func() time.Time { return machine().UTC().Truncate(time.Millisecond) }
	}
	r := rand.New(rand.NewPCG(25, 1))
	writer.Now = clock(writer, 0, true)
	for i := range 3 {
		id := fmt.Sprintf("DOC_%02d", i)
		if _, err := writer.Restate(context.Background(), ingestDocument(r, id, fundOf(id)), nil); err != nil {
			t.Fatal(err)
		}
	}

	var compared []reading
	var comparedCases []string
	next := 10 // the number of the next document committed late
	for _, tc := range []struct {
		name                       string
		writerAhead, exporterAhead time.Duration
	}{
		{"the writer's clock behind the exporter's", -skew, 0},
		{"the exporter's clock ahead of the writer's", 0, skew},
	} {
		for _, corrected := range []bool{true, false} {
			name := tc.name + map[bool]string{true: ", both corrected", false: ", neither corrected"}[corrected]
			writer.Now = clock(writer, tc.writerAhead, corrected)
			exporter.Now = clock(exporter, tc.exporterAhead, corrected)
			late := fmt.Sprintf("DOC_%02d", next)

			sink, dir := dirSink(t)
			var once sync.Once
			full := runExport(t, e, sink, func(c *export.Config) {
				c.OnEvent = func(ev export.Event) {
					if ev.Kind == export.EventScan {
						once.Do(func() {
							if _, err := writer.Restate(context.Background(), ingestDocument(r, late, fundOf(late)), nil); err != nil {
								t.Errorf("%s: commit %s: %v", name, late, err)
							}
						})
					}
				}
			})
			var mu sync.Mutex
			var reread []string
			inc := runExport(t, e, sink, func(c *export.Config) {
				c.SinceLast = true
				c.OnEvent = func(ev export.Event) {
					if ev.Kind == export.EventReread {
						mu.Lock()
						reread = append(reread, ev.Key)
						mu.Unlock()
					}
				}
			})
			if inc.Kind != "incremental" || inc.Base != full.SnapshotDate+"/"+full.RunID {
				t.Fatalf("%s: the second run is %s from %s, want incremental from the first", name, inc.Kind, inc.Base)
			}
			read := strings.Contains(strings.Join(reread, " "), "#"+late+"#")
			switch {
			case corrected && !read:
				t.Errorf("%s: %s, committed after the first snapshot's Scan, was not read by the incremental run from its mark %s (it read %v)",
					name, late, full.CompleteUpTo.Format(time.RFC3339Nano), reread)
			case !corrected && read:
				t.Errorf("%s: %s was read by the incremental run: the skew did not put its commit below the mark, so the test cannot show the correction's effect", name, late)
			}
			if corrected {
				// The incremental snapshot is a full export of this moment.
				fullSink, fullDir := dirSink(t)
				runExport(t, e, fullSink, nil)
				compared = append(compared, reading{dir, ""}, reading{fullDir, ""})
				comparedCases = append(comparedCases, name)
			}
			next++
			// Later cases start from clocks that agree.
			writer.Now, exporter.Now = clock(writer, 0, true), clock(exporter, 0, true)
		}
	}
	prints := fingerprintsOf(t, compared)
	for i, name := range comparedCases {
		inc, full := prints[2*i], prints[2*i+1]
		for _, ds := range export.Datasets {
			if inc[ds] != full[ds] {
				t.Errorf("%s: %s of the incremental snapshot reads %s, a full export %s", name, ds, inc[ds], full[ds])
			}
		}
	}
}
