package multitest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// claimant is one (fund, investor) that races the others for a position ID.
type claimant struct{ fund, investor string }

// Different investors in one fund, one investor in different funds, and
// strangers: every way two documents can want one position ID.
var claimants = []claimant{
	{"FUND_A", "INV_1"}, {"FUND_A", "INV_2"}, {"FUND_B", "INV_1"}, {"FUND_B", "INV_3"}, {"FUND_C", "INV_4"},
}

// owned is what the acknowledged writes say about one position: who holds
// it and which document versions report it, with their capital calls.
type owned struct {
	fund, investor string
	docs           map[string]docCall // document ID → its acknowledged call
}

type docCall struct {
	version int
	amount  fund.Money
}

// claimModel is the state that the acknowledged writes, and only they,
// imply.
type claimModel struct {
	mu        sync.Mutex
	positions map[string]*owned     // position ID → owner and documents
	refused   map[string]string     // position ID only refused writes named → which
	named     map[string][]claimant // position ID → every (fund, investor) whose document named it
	acks      int
	refusals  int
}

func (m *claimModel) ack(c claimant, doc string, version int, pos string, amount fund.Money) {
	o := m.positions[pos]
	if o == nil {
		o = &owned{fund: c.fund, investor: c.investor, docs: map[string]docCall{}}
		m.positions[pos] = o
	}
	o.docs[doc] = docCall{version, amount}
}

// TestConcurrentFirstUseOfAPositionID races documents of different funds and
// investors, through different instances at once, for a position ID none of
// them has used before; each document also names a position of its own. One
// wins; afterwards every registry row, listing, summary and position read
// names only what acknowledged writes reported, a refused document left
// nothing behind (its own position can be used by a corrected document), and
// no principal of a losing fund or investor reads the position.
func TestConcurrentFirstUseOfAPositionID(t *testing.T) {
	const rounds = 30
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := Start(t, Options{Instances: 3})

	admins := map[string]*Client{}
	investors := map[string]*Client{}
	for _, cl := range claimants {
		if admins[cl.fund] == nil {
			admins[cl.fund] = c.Client(c.AdminToken(t, cl.fund))
		}
		if investors[cl.investor] == nil {
			investors[cl.investor] = c.Client(c.InvestorToken(t, cl.investor))
		}
	}
	m := &claimModel{positions: map[string]*owned{}, refused: map[string]string{}, named: map[string][]claimant{}}
	var p problems
	var losers []struct {
		who   claimant
		round int
		pos   string // the loser's own position, which nobody holds
	}

	for r := range rounds {
		contested := fmt.Sprintf("P%02d", r)
		type result struct {
			resp Response
			err  error
		}
		results := make([]result, len(claimants))
		m.named[contested] = claimants
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w, cl := range claimants {
			doc := document(cl.fund, fmt.Sprintf("round %d writer %d", r, w), "2026-01-15",
				fund.Position{ID: contested, InvestorID: cl.investor, CapitalCall: callOf(1000*(r+1) + w)},
				fund.Position{ID: fmt.Sprintf("Q%02d_%d", r, w), InvestorID: cl.investor, CapitalCall: callOf(500000 + 1000*r + w)})
			m.named[fmt.Sprintf("Q%02d_%d", r, w)] = []claimant{cl}
			client := admins[cl.fund].On(w + r)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resp, err := client.PutDocument(ctx, fmt.Sprintf("D%02d_%d", r, w), doc)
				results[w] = result{resp, err}
			}()
		}
		close(start)
		wg.Wait()

		winners := 0
		for w, cl := range claimants {
			res, docID := results[w], fmt.Sprintf("D%02d_%d", r, w)
			own := fmt.Sprintf("Q%02d_%d", r, w)
			switch {
			case res.err != nil:
				p.add("no answer", "round %d: PUT %s: %v", r, docID, res.err)
			case acknowledged(res.resp.Status):
				winners++
				m.acks++
				m.ack(cl, docID, res.resp.Version(), contested, money(1000*(r+1)+w))
				m.ack(cl, docID, res.resp.Version(), own, money(500000+1000*r+w))
			case res.resp.Status == http.StatusConflict:
				m.refusals++
				m.refused[own] = docID
				losers = append(losers, struct {
					who   claimant
					round int
					pos   string
				}{cl, r, own})
			default:
				p.add("write answered neither 2xx nor 409", "round %d: PUT %s (%s/%s): want 200, 201 or 409, got %s", r, docID, cl.fund, cl.investor, res.resp)
			}
		}
		if winners != 1 {
			p.add("not exactly one winner", "round %d: %d of %d writers of %s were acknowledged, want exactly 1", r, winners, len(claimants), contested)
		}
	}
	p.report(t, "racing writes")
	checks := checkClaims(ctx, t, &p, m, admins, investors)
	p.report(t, "after the races")

	// A refused write left no claim: each loser's own position can be
	// used by a corrected document of the same fund and investor, while
	// the contested position stays its winner's.
	retried := 0
	parallel(6, losers, func(l struct {
		who   claimant
		round int
		pos   string
	}) {
		docID := fmt.Sprintf("R%02d_%s_%s", l.round, l.who.fund, l.who.investor)
		doc := document(l.who.fund, "corrected "+docID, "2026-02-15", fund.Position{ID: l.pos, InvestorID: l.who.investor, CapitalCall: callOf(7)})
		resp, err := admins[l.who.fund].PutDocument(ctx, docID, doc)
		if err != nil || resp.Status != http.StatusCreated {
			p.add("corrected document refused (orphan claim)", "corrected document %s with %s/%s's own position %s, refused in round %d: want 201, got %v %s (an orphan claim?)",
				docID, l.who.fund, l.who.investor, l.pos, l.round, err, resp)
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		retried++
		delete(m.refused, l.pos)
		m.ack(l.who, docID, resp.Version(), l.pos, money(7))
	})
	for r := range rounds {
		contested := fmt.Sprintf("P%02d", r)
		o := m.positions[contested]
		if o == nil {
			continue
		}
		for _, cl := range claimants {
			if cl.fund == o.fund && cl.investor == o.investor {
				continue
			}
			doc := document(cl.fund, "late claim", "2026-03-15", fund.Position{ID: contested, InvestorID: cl.investor, CapitalCall: callOf(9)})
			docID := fmt.Sprintf("L%02d", r)
			resp, err := admins[cl.fund].PutDocument(ctx, docID, doc)
			if err != nil || resp.Status != http.StatusConflict {
				p.add("late claim of a held position not refused", "late claim of %s (held by %s/%s) by %s/%s: want 409, got %v %s", contested, o.fund, o.investor, cl.fund, cl.investor, err, resp)
			} else {
				m.refusals++
			}
			break
		}
	}
	p.report(t, "corrected and late writes")
	checks += checkClaims(ctx, t, &p, m, admins, investors)
	p.report(t, "after the corrected and late writes")

	t.Logf("first use of a position ID: %d rounds of %d writers on 3 instances: %d writes acknowledged, %d refused; %d corrected documents acknowledged; %d reads checked",
		rounds, len(claimants), m.acks, m.refusals, retried, checks)
}

// checkClaims reads every listing, summary and position as every principal
// and compares them with the model. It returns how many reads it checked.
func checkClaims(ctx context.Context, t *testing.T, p *problems, m *claimModel, admins, investors map[string]*Client) int {
	t.Helper()
	var mu sync.Mutex
	reads := 0
	count := func(n int) { mu.Lock(); reads += n; mu.Unlock() }

	// The fund registries: exactly the acknowledged positions of each fund.
	for f, admin := range admins {
		want := map[string]string{} // position → investor
		for pos, o := range m.positions {
			if o.fund == f {
				want[pos] = o.investor
			}
		}
		rows, resp, err := GetPages[wire.RegisteredPosition](ctx, admin, "/v1/funds/"+f+"/positions?limit=7")
		count(1)
		if err != nil || resp.Status != http.StatusOK {
			p.add("listing failed", "GET /v1/funds/%s/positions: %v %s", f, err, resp)
			continue
		}
		compareRegistry(p, "fund "+f+" registry", rows, want, func(r wire.RegisteredPosition) (string, string) { return r.InvestorID, r.FundID }, f, m)
	}
	// The investors' listings, as the investor and as each fund's admin.
	for inv, portal := range investors {
		want := map[string]string{} // position → fund
		for pos, o := range m.positions {
			if o.investor == inv {
				want[pos] = o.fund
			}
		}
		rows, resp, err := GetPages[wire.RegisteredPosition](ctx, portal, "/v1/investors/"+inv+"/positions?limit=7")
		count(1)
		if err != nil || (resp.Status != http.StatusOK && !(resp.Status == http.StatusNotFound && len(want) == 0)) {
			p.add("listing failed", "investor %s: GET /v1/investors/%s/positions: %v %s", inv, inv, err, resp)
		} else {
			compareRegistry(p, "investor "+inv+"'s own listing", rows, want, func(r wire.RegisteredPosition) (string, string) { return r.FundID, r.InvestorID }, inv, m)
		}
		for f, admin := range admins {
			wantF := map[string]string{}
			for pos, fnd := range want {
				if fnd == f {
					wantF[pos] = f
				}
			}
			rows, resp, err := GetPages[wire.RegisteredPosition](ctx, admin, "/v1/investors/"+inv+"/positions")
			count(1)
			if err != nil || (resp.Status != http.StatusOK && !(resp.Status == http.StatusNotFound && len(wantF) == 0)) {
				p.add("listing failed", "admin of %s: GET /v1/investors/%s/positions: %v %s", f, inv, err, resp)
				continue
			}
			compareRegistry(p, "admin of "+f+"'s listing of investor "+inv, rows, wantF, func(r wire.RegisteredPosition) (string, string) { return r.FundID, r.InvestorID }, inv, m)
		}
		// The investor's summary: its positions, each with the money of
		// acknowledged documents only, page by page (at most 50 a page).
		var positions []wire.PositionSummary
		path, failed := "/v1/investors/"+inv+"/summary", false
		for {
			var sum wire.InvestorSummary
			resp, err = portal.GetJSON(ctx, path, &sum)
			count(1)
			if err != nil || resp.Status != http.StatusOK {
				if !(resp.Status == http.StatusNotFound && len(want) == 0) {
					p.add("investor summary failed", "investor %s: GET %s: %v %s", inv, path, err, resp)
				}
				failed = true
				break
			}
			positions = append(positions, sum.Positions...)
			if sum.Next == "" {
				break
			}
			path = "/v1/investors/" + inv + "/summary?cursor=" + url.QueryEscape(sum.Next)
		}
		if failed {
			continue
		}
		seen := map[string]bool{}
		for _, s := range positions {
			seen[s.PositionID] = true
			o := m.positions[s.PositionID]
			if o == nil || o.investor != inv {
				p.add("investor summary holds a position acknowledged writes did not give the investor", "investor %s's summary holds position %s (%s/%s, paid in %s, documents %v), which no acknowledged write gave it (refused: %s)",
					inv, s.PositionID, s.FundID, s.InvestorID, s.Called, s.Documents, m.refused[s.PositionID])
				continue
			}
			compareSummary(p, "investor "+inv+"'s summary", s, s.PositionID, o)
		}
		for pos := range want {
			if !seen[pos] {
				p.add("investor summary lacks an acknowledged position", "investor %s's summary lacks its position %s", inv, pos)
			}
		}
	}

	// Every position ever named, as every principal: the owner's admin
	// and investor read exactly the acknowledged documents; everyone else
	// gets 404, as for a position that does not exist.
	var all []string
	for pos := range m.positions {
		all = append(all, pos)
	}
	for pos := range m.refused {
		if m.positions[pos] == nil {
			all = append(all, pos)
		}
	}
	type principal struct {
		name           string
		cl             *Client
		fund, investor string
	}
	parallel(6, all, func(pos string) {
		o := m.positions[pos]
		// Whoever named the position, and its owner: the principals a
		// leak of this position would reach.
		var principals []principal
		seen := map[string]bool{}
		for _, cl := range append(slices.Clone(m.named[pos]), claimant{o.fundOrEmpty(), o.investorOrEmpty()}) {
			if cl.fund != "" && !seen["F"+cl.fund] {
				seen["F"+cl.fund] = true
				principals = append(principals, principal{"admin of " + cl.fund, admins[cl.fund], cl.fund, ""})
			}
			if cl.investor != "" && !seen["I"+cl.investor] {
				seen["I"+cl.investor] = true
				principals = append(principals, principal{"investor " + cl.investor, investors[cl.investor], "", cl.investor})
			}
		}
		for _, pr := range principals {
			mine := o != nil && (pr.fund == o.fund || pr.investor == o.investor)
			if !mine {
				for _, route := range []string{"", "/summary", "/cashflows"} {
					// A 200 is a problem that names what was read.
					get(ctx, p, pr.cl, pr.name+" (not theirs)", "/v1/positions/"+pos+route, http.StatusNotFound, nil)
				}
				count(3)
				continue
			}
			items, resp, err := GetPages[wire.PositionItem](ctx, pr.cl, "/v1/positions/"+pos+"?limit=3")
			if err != nil || resp.Status != http.StatusOK {
				p.add("position read failed", "%s: GET /v1/positions/%s: %v %s", pr.name, pos, err, resp)
			} else {
				got := map[string]bool{}
				for _, it := range items {
					want, ok := o.docs[it.DocumentID]
					if !ok || it.FundID != o.fund || it.InvestorID != o.investor || it.DocumentVersion != want.version || !it.Amount.Equal(want.amount) {
						p.add("position read shows an unacknowledged document", "%s: position %s (held by %s/%s) shows %s of document %s v%d (%s/%s, %s), want only acknowledged documents %v",
							pr.name, pos, o.fund, o.investor, it.Kind, it.DocumentID, it.DocumentVersion, it.FundID, it.InvestorID, it.Amount, o.docs)
					}
					got[it.DocumentID] = true
				}
				for doc := range o.docs {
					if !got[doc] {
						p.add("position read lacks an acknowledged document", "%s: position %s lacks acknowledged document %s", pr.name, pos, doc)
					}
				}
			}
			var s wire.PositionSummary
			if get(ctx, p, pr.cl, pr.name, "/v1/positions/"+pos+"/summary", http.StatusOK, &s) {
				compareSummary(p, pr.name+"'s position summary", s, pos, o)
			}
			var cf wire.Cashflows
			if get(ctx, p, pr.cl, pr.name, "/v1/positions/"+pos+"/cashflows", http.StatusOK, &cf) {
				if cf.FundID != o.fund || cf.InvestorID != o.investor {
					p.add("cash flows name another owner", "%s: cash flows of %s name %s/%s, want %s/%s", pr.name, pos, cf.FundID, cf.InvestorID, o.fund, o.investor)
				}
				var paid fund.Money
				for _, f := range cf.Cashflows {
					if want, ok := o.docs[f.DocumentID]; !ok || f.Version != want.version {
						p.add("cash flows count an unacknowledged document", "%s: cash flows of %s count document %s v%d, want only %v", pr.name, pos, f.DocumentID, f.Version, o.docs)
					}
					paid = paid.Add(f.Amount)
				}
				if want := o.paidIn(); !paid.Equal(want) {
					p.add("cash flows add up wrong", "%s: cash flows of %s add up to %s, want %s", pr.name, pos, paid, want)
				}
			}
			count(3)
		}
	})
	return reads
}

func (o *owned) fundOrEmpty() string {
	if o == nil {
		return ""
	}
	return o.fund
}

func (o *owned) investorOrEmpty() string {
	if o == nil {
		return ""
	}
	return o.investor
}

func (o *owned) paidIn() fund.Money {
	var sum fund.Money
	for _, d := range o.docs {
		sum = sum.Add(d.amount)
	}
	return sum
}

// compareRegistry compares listed rows with want (position → the other
// party: investor for a fund's registry, fund for an investor's listing).
// ids returns a row's other party and its own party, which must be self.
func compareRegistry(p *problems, what string, rows []wire.RegisteredPosition, want map[string]string, ids func(wire.RegisteredPosition) (other, own string), self string, m *claimModel) {
	seen := map[string]bool{}
	for _, r := range rows {
		other, own := ids(r)
		if seen[r.PositionID] {
			p.add("listing names a position twice", "%s lists position %s twice", what, r.PositionID)
		}
		seen[r.PositionID] = true
		w, ok := want[r.PositionID]
		switch {
		case !ok:
			holder := "nobody"
			if o := m.positions[r.PositionID]; o != nil {
				holder = o.fund + "/" + o.investor
			}
			p.add("listing holds a row no acknowledged write made", "%s lists position %s as %s/%s, which no acknowledged write reported (held by %s; refused document: %s)",
				what, r.PositionID, r.FundID, r.InvestorID, holder, m.refused[r.PositionID])
		case other != w || own != self:
			p.add("listing names the wrong owner", "%s lists position %s as %s/%s, want %s", what, r.PositionID, r.FundID, r.InvestorID, w)
		}
	}
	for pos := range want {
		if !seen[pos] {
			p.add("listing lacks an acknowledged position", "%s lacks position %s", what, pos)
		}
	}
}

// compareSummary checks a position summary against the acknowledged
// documents of the position.
func compareSummary(p *problems, what string, s wire.PositionSummary, pos string, o *owned) {
	if s.PositionID != pos || s.FundID != o.fund || s.InvestorID != o.investor {
		p.add("summary names the wrong owner", "%s of %s names %s %s/%s, want %s/%s", what, pos, s.PositionID, s.FundID, s.InvestorID, o.fund, o.investor)
	}
	if want := o.paidIn(); !s.Called.Equal(want) {
		p.add("summary adds up money of unacknowledged data", "%s of %s: paid in %s, want %s from %v", what, pos, s.Called, want, o.docs)
	}
	got := map[string]int{}
	for _, d := range s.Documents {
		got[d.DocumentID] = d.Version
	}
	for doc, d := range o.docs {
		if got[doc] != d.version {
			p.add("summary lacks an acknowledged document version", "%s of %s: document %s at version %d, want %d", what, pos, doc, got[doc], d.version)
		}
	}
	for doc, v := range got {
		if _, ok := o.docs[doc]; !ok {
			p.add("summary counts an unacknowledged document", "%s of %s counts document %s v%d, which no acknowledged write reported", what, pos, doc, v)
		}
	}
}
