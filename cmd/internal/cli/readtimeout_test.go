package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/internal/dynamotest"
)

// TestARequestSlowerThanTheReadTimeoutsIsCutOffAndOneWithinThemIsServed
// runs serve with a read header timeout of 600 ms and a read timeout of
// 1.2 s (FUNDSVC_READ_HEADER_TIMEOUT, FUNDSVC_READ_TIMEOUT) and sends
// requests piece by piece, as a slow client does. Headers that arrive
// within the header timeout are served; headers that take twice as long
// are cut off at the header timeout, unanswered, though they would be
// complete later. A PUT whose body arrives within the read timeout is
// served (201); one whose body takes twice as long is cut off at the read
// timeout and never committed.
func TestARequestSlowerThanTheReadTimeoutsIsCutOffAndOneWithinThemIsServed(t *testing.T) {
	const header, whole = 600 * time.Millisecond, 1200 * time.Millisecond
	table := dynamotest.UniqueName(t, "cmd")
	getenv := withVars(env(t, table), map[string]string{
		"FUNDSVC_READ_HEADER_TIMEOUT": header.String(),
		"FUNDSVC_READ_TIMEOUT":        whole.String(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := run(ctx, []string{"table", "create"}, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	out, done := startServe(t, ctx, getenv)
	addr := strings.TrimPrefix(listeningAddr(t, out, done), "http://")
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	admin := mint(t, getenv, "--role", "admin", "--funds", "FUND_R")

	get := "GET /livez HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\nX-Pad: " + strings.Repeat("p", 100) + "\r\n\r\n"
	put := func(doc string) (head, body string) {
		b, _ := json.Marshal(map[string]any{"fundId": "FUND_R", "kind": "capital_call_notice", "title": "Slow " + doc, "asOf": "2025-01-31", "currency": "USD",
			"positions": []map[string]any{{"positionId": "P_" + doc, "investorId": "I1", "capitalCall": map[string]any{"amount": "100.00"}}}})
		head = "PUT /v1/documents/" + doc + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\nContent-Type: application/json\r\n" +
			"Authorization: Bearer " + admin + "\r\nContent-Length: " + strconv.Itoa(len(b)) + "\r\n\r\n"
		return head, string(b)
	}
	fastHead, fastBody := put("FAST")
	slowHead, slowBody := put("SLOW")
	for _, tc := range []struct {
		name   string
		first  string   // sent at once
		rest   []string // then one piece every gap
		gap    time.Duration
		want   int           // the answer's status; 0: the connection closed unanswered
		cutoff time.Duration // the timeout that cuts it off; 0: none
	}{
		{"headers in three pieces within the header timeout are served", "", split(get, 3), 100 * time.Millisecond, http.StatusOK, 0},
		{"headers taking twice the header timeout are cut off at it, unanswered", "", split(get, 12), 2 * header / 12, 0, header},
		{"a body in three pieces within the read timeout is served", fastHead, split(fastBody, 3), 100 * time.Millisecond, http.StatusCreated, 0},
		{"a body taking twice the read timeout is cut off at it, answered 400", slowHead, split(slowBody, 12), 2 * whole / 12, http.StatusBadRequest, whole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, took := slowExchange(t, addr, tc.first, tc.rest, tc.gap)
			t.Logf("status %d after %s: %s", status, took.Round(time.Millisecond), body)
			if status != tc.want {
				t.Fatalf("answered %d after %s, want %d (0: the connection closed unanswered)\n%s", status, took.Round(time.Millisecond), tc.want, body)
			}
			if tc.cutoff > 0 && (took < tc.cutoff || took > 2*tc.cutoff) {
				t.Errorf("cut off after %s, want at the timeout of %s", took.Round(time.Millisecond), tc.cutoff)
			}
			if status == http.StatusBadRequest {
				var p struct{ Type, Field string }
				if err := json.Unmarshal(body, &p); err != nil || p.Type != "/problems/invalid" || p.Field != "body" {
					t.Errorf("the answer to a body cut off: %s, want /problems/invalid naming the body", body)
				}
			}
		})
	}
	// The body cut off was never read whole, so nothing was committed.
	res, err := http.DefaultClient.Do(withBearer(t, http.MethodGet, "http://"+addr+"/v1/documents/SLOW", admin))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET the document whose body was cut off: %d, want 404", res.StatusCode)
	}
}

// split cuts s into n pieces of about the same length.
func split(s string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, s[i*len(s)/n:(i+1)*len(s)/n])
	}
	return out
}

// slowExchange dials addr, writes first at once and then each of rest
// one gap after the other, stopping when the server answers or closes the
// connection, and reads the answer. It returns the answer's status and
// body, 0 if the connection closed unanswered, and how long after the dial
// either happened.
func slowExchange(t *testing.T, addr, first string, rest []string, gap time.Duration) (status int, body []byte, took time.Duration) {
	t.Helper()
	start := time.Now()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(start.Add(30 * time.Second))
	type answer struct {
		status int
		body   []byte
		at     time.Time
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- answer{0, nil, time.Now()}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answered <- answer{res.StatusCode, b, time.Now()}
	}()
	if _, err := io.WriteString(conn, first); err != nil {
		t.Fatal(err)
	}
	tick := time.NewTicker(gap)
	defer tick.Stop()
	for _, piece := range rest {
		select {
		case a := <-answered:
			return a.status, a.body, a.at.Sub(start)
		case <-tick.C:
		}
		if _, err := io.WriteString(conn, piece); err != nil {
			break // the server closed the connection: the reader says when
		}
	}
	a := <-answered
	return a.status, a.body, a.at.Sub(start)
}

func withBearer(t *testing.T, method, url, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}
