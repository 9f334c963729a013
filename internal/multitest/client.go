package multitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
)

// Client sends requests with one bearer token to a cluster's instances:
// each request to the next instance in turn (round robin, shared by every
// client of the cluster, so concurrent callers spread too), or every
// request to one instance (On). Its methods are safe for concurrent use.
type Client struct {
	c     *Cluster
	token string
	pin   int // instance every request goes to; -1 for round robin
}

// Client returns a round-robin client that sends token.
func (c *Cluster) Client(token string) *Client { return &Client{c: c, token: token, pin: -1} }

// On returns a client with the same token that sends every request to
// instance i (modulo the number of instances).
func (cl *Client) On(i int) *Client {
	return &Client{c: cl.c, token: cl.token, pin: i % len(cl.c.instances)}
}

// Response is an answer, read whole.
type Response struct {
	Instance int // which instance answered
	Status   int
	Header   http.Header
	Body     []byte
}

// Version is the document version the ETag names, or 0.
func (r Response) Version() int {
	v, _ := strconv.Atoi(strings.Trim(r.Header.Get("ETag"), `"`))
	return v
}

// String describes the answer for test messages: instance, status and the
// start of the body.
func (r Response) String() string {
	body := string(r.Body)
	if len(body) > 400 {
		body = body[:400] + "…"
	}
	return fmt.Sprintf("instance %d: %d %s", r.Instance, r.Status, body)
}

// Do sends one request; body, when not nil, is sent as JSON. header adds
// request headers (may be nil). An error means no answer was had.
func (cl *Client) Do(ctx context.Context, method, path string, body any, header http.Header) (Response, error) {
	i := cl.pin
	if i < 0 {
		i = int(cl.c.next.Add(1) % uint64(len(cl.c.instances)))
	}
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Response{}, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.c.instances[i].base+path, r)
	if err != nil {
		return Response{}, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Authorization", "Bearer "+cl.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.c.http.Do(req)
	if err != nil {
		return Response{Instance: i}, fmt.Errorf("%s %s on instance %d: %w", method, path, i, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{Instance: i}, fmt.Errorf("%s %s on instance %d: read the answer: %w", method, path, i, err)
	}
	return Response{Instance: i, Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// PutDocument creates or restates document id, without If-Match, with the
// request that stores d's content (its server-owned fields are not sent).
func (cl *Client) PutDocument(ctx context.Context, id string, d wire.DocumentVersion) (Response, error) {
	return cl.Do(ctx, http.MethodPut, "/v1/documents/"+url.PathEscape(id), RequestOf(d), nil)
}

// RequestOf is the request that stores d's content as a document's next
// version.
func RequestOf(d wire.DocumentVersion) wire.DocumentRequest {
	var act *fund.CapitalActivity
	if d.CapitalActivity != nil {
		act = &d.CapitalActivity.CapitalActivity
	}
	return wire.DocumentRequest{DocumentFields: d.DocumentFields, CapitalActivity: act, Positions: wire.PositionsOf(d.Positions...)}
}

// GetJSON reads path and, when the answer is 200 and v is not nil, decodes
// its body into v. A 200 whose body does not decode is an error.
func (cl *Client) GetJSON(ctx context.Context, path string, v any) (Response, error) {
	resp, err := cl.Do(ctx, http.MethodGet, path, nil, nil)
	if err != nil || resp.Status != http.StatusOK || v == nil {
		return resp, err
	}
	if err := json.Unmarshal(resp.Body, v); err != nil {
		return resp, fmt.Errorf("GET %s: decode the answer: %w: %s", path, err, resp.Body)
	}
	return resp, nil
}

// GetPages reads every page of a paginated list, following next (each page
// from the next instance, so cursors travel between instances), and returns
// the items. It fails unless every page is 200; status is the first page's
// answer, so that a 404 of the whole list can be told apart.
func GetPages[T any](ctx context.Context, cl *Client, path string) ([]T, Response, error) {
	var all []T
	var first Response
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	cursor := ""
	for n := 0; ; n++ {
		p := path
		if cursor != "" {
			p += sep + "cursor=" + url.QueryEscape(cursor)
		}
		var page wire.Page[T]
		resp, err := cl.GetJSON(ctx, p, &page)
		if n == 0 {
			first = resp
		}
		if err != nil {
			return nil, first, err
		}
		if resp.Status != http.StatusOK {
			if n == 0 {
				return nil, first, nil
			}
			return nil, first, fmt.Errorf("GET %s: page %d: %s", p, n+1, resp)
		}
		all = append(all, page.Items...)
		if page.Next == "" {
			return all, first, nil
		}
		if n > 1000 {
			return nil, first, fmt.Errorf("GET %s: more than 1000 pages", path)
		}
		cursor = page.Next
	}
}
