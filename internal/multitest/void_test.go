package multitest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// TestConcurrentRestatementAndVoidAcrossInstances restates and voids the
// same documents at once, both with If-Match "1", the restatement on one
// instance and the void on the other: exactly one wins, the other is 412,
// and what every route shows is wholly the winner's: the restated version
// (its positions in the pivot, at version 2) or the void (no position of
// the document anywhere, version 1 readable whole, the versions listing,
// newest first, beginning with the voided version).
func TestConcurrentRestatementAndVoidAcrossInstances(t *testing.T) {
	const docs = 8
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := Start(t, Options{Instances: 2})
	admin := c.Client(c.AdminToken(t, restateFund))
	ifMatch1 := http.Header{"If-Match": {`"1"`}}
	var p problems
	wins := map[string]int{}
	for i := range docs {
		docID := fmt.Sprintf("VD_%02d", i)
		path := "/v1/documents/" + url.PathEscape(docID)
		v1 := document(restateFund, "v1", "2026-05-01",
			fund.Position{ID: fmt.Sprintf("VP_%02d_A", i), InvestorID: "RINV_1", CapitalCall: callOf(100)},
			fund.Position{ID: fmt.Sprintf("VP_%02d_B", i), InvestorID: "RINV_2", CapitalCall: callOf(200)})
		v2 := document(restateFund, "v2", "2026-05-01",
			fund.Position{ID: fmt.Sprintf("VP_%02d_A", i), InvestorID: "RINV_1", CapitalCall: callOf(150)})
		if resp, err := admin.On(i).PutDocument(ctx, docID, v1); err != nil || resp.Status != http.StatusCreated {
			t.Fatalf("PUT %s v1: %v %s", docID, err, resp)
		}

		var put, del Response
		var putErr, delErr error
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			put, putErr = admin.On(i).Do(ctx, http.MethodPut, path, RequestOf(v2), ifMatch1)
		}()
		go func() {
			defer wg.Done()
			<-start
			del, delErr = admin.On(i+1).Do(ctx, http.MethodDelete, path, nil, ifMatch1)
		}()
		close(start)
		wg.Wait()
		if putErr != nil || delErr != nil {
			t.Fatalf("%s: PUT %v, DELETE %v", docID, putErr, delErr)
		}
		var winner string
		switch {
		case put.Status == http.StatusOK && del.Status == http.StatusPreconditionFailed:
			winner = "restatement"
		case del.Status == http.StatusOK && put.Status == http.StatusPreconditionFailed:
			winner = "void"
		default:
			p.add("not exactly one winner", "%s: PUT %s, DELETE %s", docID, put, del)
			continue
		}
		wins[winner]++

		var versions wire.Versions
		if get(ctx, &p, admin, "admin", path+"/versions", http.StatusOK, &versions) {
			want := []string{"2 latest", "1 superseded"} // newest first
			if winner == "void" {
				want[0] = "2 voided"
			}
			var got []string
			for _, v := range versions.Versions {
				got = append(got, fmt.Sprintf("%d %s", v.Version, v.Status))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				p.add("versions not the winner's", "%s (%s won): versions %v, want %v", docID, winner, got, want)
			}
		}
		var first wire.DocumentVersion
		if get(ctx, &p, admin, "admin", path+"/versions/1", http.StatusOK, &first) && len(first.Positions) != 2 {
			p.add("version 1 not readable whole", "%s: version 1 holds %d positions, want 2", docID, len(first.Positions))
		}
		var o wire.Overview
		if get(ctx, &p, admin, "admin", path, http.StatusOK, &o) {
			wantPositions := 1
			if winner == "void" {
				wantPositions = 0
			}
			if o.Version != 2 || len(o.Positions) != wantPositions {
				p.add("overview not the winner's", "%s (%s won): overview at v%d with positions %v", docID, winner, o.Version, keys(o.Positions))
			}
		}
		for _, pos := range []string{fmt.Sprintf("VP_%02d_A", i), fmt.Sprintf("VP_%02d_B", i)} {
			items, resp, err := GetPages[wire.PositionItem](ctx, admin, "/v1/positions/"+pos)
			if err != nil || (resp.Status != http.StatusOK && resp.Status != http.StatusNotFound) {
				p.add("position read failed", "GET /v1/positions/%s: %v %s", pos, err, resp)
				continue
			}
			want := 0
			if winner == "restatement" && pos == fmt.Sprintf("VP_%02d_A", i) {
				want = 1
			}
			if len(items) != want {
				p.add("position items not the winner's", "%s (%s won): %s shows %d items, want %d", docID, winner, pos, len(items), want)
			}
			for _, it := range items {
				if it.DocumentVersion != 2 || !it.Amount.Equal(money(150)) {
					p.add("position items mix versions", "%s: %s shows version %d amount %s, want version 2 amount 150.00", docID, pos, it.DocumentVersion, it.Amount)
				}
			}
		}
		var listed []wire.DocumentHeader
		listed, resp, err := GetPages[wire.DocumentHeader](ctx, admin, "/v1/funds/"+restateFund+"/documents")
		if err != nil || resp.Status != http.StatusOK {
			p.add("fund documents read failed", "%v %s", err, resp)
		} else {
			found := false
			for _, h := range listed {
				found = found || h.DocumentID == docID
			}
			if found != (winner == "restatement") {
				p.add("fund listing not the winner's", "%s (%s won): listed %v", docID, winner, found)
			}
		}
	}
	p.report(t, "after concurrent restatements and voids")
	t.Logf("restatement against void on two instances, %d documents: %v", docs, wins)
}
