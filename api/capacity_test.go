package api_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fundsvc/fundsvc/store"
)

var capacitySeries = regexp.MustCompile(`(?m)^fundsvc_dynamodb_capacity_units_total\{kind="(read|write)",operation="([A-Za-z]+)"\} (\S+)$`)

// capacityOn reads the capacity counter of a /metrics text, by operation.
func capacityOn(t *testing.T, s *testServer) store.Consumption {
	t.Helper()
	r := s.do(t, http.MethodGet, "/metrics", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: status %d", r.Status)
	}
	c := store.Consumption{}
	for _, m := range capacitySeries.FindAllStringSubmatch(string(r.Body), -1) {
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		u := c[m[2]]
		if m[1] == "read" {
			u.Read = v
		} else {
			u.Write = v
		}
		c[m[2]] = u
	}
	return c
}

// TestMetricsCountConsumedCapacity: /metrics carries the DynamoDB
// capacity the store consumed, by operation and kind, and it moves with
// the requests served: an overview adds read units of Query and no write
// unit, a restatement adds write units of the transactions that commit
// it. Each change is what the store's own meter saw over the same
// requests, so the counter is DynamoDB's accounting, not an estimate.
func TestMetricsCountConsumedCapacity(t *testing.T) {
	s := newServer(t, true)
	start := capacityOn(t, s)
	if len(start) == 0 || start.Total().Write <= 0 {
		t.Fatalf("no capacity on /metrics after seeding the demo: %v", start)
	}

	before, meter := capacityOn(t, s), s.Store.Consumed()
	if r := s.do(t, http.MethodGet, "/v1/documents/DOC001", nil); r.Status != http.StatusOK {
		t.Fatalf("overview: status %d", r.Status)
	}
	read := capacityOn(t, s).Sub(before)
	if read["Query"].Read <= 0 || read.Total().Write != 0 {
		t.Errorf("an overview moved the counter by %v, want read units of Query and no write unit", read)
	}
	if m := s.Store.Consumed().Sub(meter); m.Total() != read.Total() {
		t.Errorf("/metrics moved by %+v, the store's meter by %+v", read.Total(), m.Total())
	}

	before = capacityOn(t, s)
	if r := s.do(t, http.MethodPut, "/v1/documents/DOC_CAPACITY", smallDocument("capacity")); r.Status != http.StatusCreated {
		t.Fatalf("PUT: status %d %s", r.Status, r.Body)
	}
	wrote := capacityOn(t, s).Sub(before)
	if wrote["TransactWriteItems"].Write <= 0 || wrote["TransactWriteItems"].Read != 0 {
		t.Errorf("a new document moved the counter by %v, want write units of TransactWriteItems", wrote)
	}

	// Where the write's time and round trips went, by phase: what the
	// store's own totals say.
	r := s.do(t, http.MethodGet, "/metrics", nil)
	for p, want := range s.Store.WritePhases() {
		for series, v := range map[string]float64{"requests": float64(want.Requests), "items": float64(want.Items)} {
			line := fmt.Sprintf("fundsvc_write_phase_%s_total{phase=%q} %s", series, p, strconv.FormatFloat(v, 'g', -1, 64))
			if !strings.Contains(string(r.Body), line+"\n") {
				t.Errorf("/metrics lacks %q", line)
			}
		}
	}
	if stage := s.Store.WritePhases()[store.PhaseStage]; stage.Requests == 0 || stage.Seconds <= 0 {
		t.Errorf("the writes spent nothing staging: %+v", stage)
	}
}
