package api

import (
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// This file is the route table: each operation says how gin serves it and
// what the OpenAPI document says of it, so the two cannot differ.
// routes() registers it, generateOpenAPI (openapi_gen.go) describes it,
// and the wire types it names define every schema.

// access is who may call an operation: it decides both the middleware in
// front of the handlers and the operation's security requirement.
type access int

const (
	accessNone     access = iota // no token, none checked: /livez, /readyz
	accessOptional               // public unless configured otherwise: the handlers check it
	accessOperator               // /metrics: an admin token of every fund unless configured public: the handlers check it
	accessAnyRole                // /v1: a valid token of either role, within its scope
	accessAdmin                  // /v1: admin tokens only (403 for an investor token)
)

// operation is one method on one path.
type operation struct {
	Method string
	Path   string // in gin's syntax: /v1/documents/:documentId
	ID     string // operationId
	Tag    string
	Access access
	// Handlers run after the middleware Access implies.
	Handlers             []gin.HandlerFunc
	Summary, Description string
	// Params names the query and header parameters (apiParameters); the
	// path's own are read from Path.
	Params    []string
	Body      *requestBody
	Responses []response // the successful ones
	// Errors are the error statuses beyond those Access implies, each with
	// what it means here ("" for the general description).
	Errors map[int]string
}

type requestBody struct {
	Type any // a value of the request's Go type
	Doc  string
	// Examples are the body's named examples (examples.go).
	Examples func() ([]example, error)
	// Media, for a body that is not JSON (Type nil): each media type it may
	// be sent as, with its example.
	Media map[string]any
}

// response is a successful answer; Body is a value of its Go type, an
// anyOf of several, or a *schema.
type response struct {
	Status  int
	Doc     string
	Body    any
	Media   string   // application/json when empty
	Headers []string // beyond X-Request-ID and, for /v1, Cache-Control (apiHeaders)
	Example any
	// Demo names the requests whose answers on the demo dataset are the
	// response's examples (examples.go).
	Demo []demoCall
	// OtherMedia are more media types of the same answer, each with its
	// example (a template as CSV or as XLSX).
	OtherMedia map[string]any
}

// anyOf is a body that is one of several Go types.
type anyOf []any

// errors is every error status the operation declares: those of Access
// and its own.
func (op operation) errors() map[int]string {
	out := map[int]string{http.StatusInternalServerError: ""}
	if op.Access == accessAnyRole || op.Access == accessAdmin {
		for _, s := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			out[s] = ""
		}
	}
	if op.Access == accessAdmin {
		out[http.StatusForbidden] = "An investor token: this route is for admin tokens (answered once the token is verified, before the path and query are checked)."
	}
	for s, d := range op.Errors {
		out[s] = d
	}
	if op.checksQuery() {
		out[http.StatusBadRequest] = withQueryRule(out[http.StatusBadRequest])
	}
	return out
}

// operations is the whole API surface.
func (s *server) operations() []operation {
	return []operation{
		{
			Method: http.MethodGet, Path: "/livez", ID: "livez", Tag: "ops", Access: accessNone,
			Handlers:    []gin.HandlerFunc{s.livez},
			Summary:     "Liveness",
			Description: "Answers 200 while the process serves HTTP, with the build that is running; touches no dependency. Needs no token (`security: []`).",
			Responses: []response{
				{Status: 200, Doc: "The process is alive.", Body: healthBody("ok"), Example: healthExample("ok")},
			},
		},
		{
			Method: http.MethodGet, Path: "/readyz", ID: "readyz", Tag: "ops", Access: accessNone,
			Handlers:    []gin.HandlerFunc{s.readyz},
			Summary:     "Readiness",
			Description: "Answers 200, with the build that is running, when DynamoDB answers and the table exists (one GetItem of a key no item has, never a Scan, bounded to 2 s), 503 otherwise. Needs no token (`security: []`).",
			Responses: []response{
				{Status: 200, Doc: "DynamoDB answers and the table exists.", Body: healthBody("ready"), Example: healthExample("ready")},
			},
			Errors: map[int]string{
				503: "Not ready (problem type `/problems/unavailable`); the detail says why: `the server is shutting down`, `DynamoDB is not reachable` (no connection could be opened), `DynamoDB did not answer within 2s`, `the table does not exist`, or `the table is not readable` (any other error, logged).",
			},
		},
		{
			Method: http.MethodGet, Path: "/metrics", ID: "getMetrics", Tag: "ops", Access: accessOperator,
			Handlers:    append(s.metricsAccess(), gin.WrapH(s.metrics.Handler())),
			Summary:     "Prometheus metrics",
			Description: "Metrics in the Prometheus text exposition format: `fundsvc_build_info{version,revision,goversion}` (always 1: which build is running), `fundsvc_http_requests_total{method,route,status}`, `fundsvc_http_request_duration_seconds{method,route}` (labelled by route template, `unmatched` for unknown paths), `fundsvc_dynamodb_capacity_units_total{operation,kind}` (the DynamoDB read and write units the process consumed), `fundsvc_position_item_answers_total{source}` (the position read's items answered from its memo, `memo`, or decoded and encoded, `encoded`), the bounds of writes in flight (`fundsvc_write_body_bytes_held`, `fundsvc_write_waiting_writers`, `fundsvc_writes_refused_total{reason}`), webhook delivery's when it runs, and the Go and process collectors. The series count every fund's requests and capacity, so their rise and fall tells when any fund ingests and how much: by default this route needs an admin token whose `funds` claim is `[\"*\"]` (401 without a valid token, 403 for any other token). `FUNDSVC_PUBLIC_METRICS=true` opens it to anyone (no token is then checked). Prometheus scrapes the metrics listener instead: `FUNDSVC_METRICS_LISTEN` (off by default) names a second address, meant for a private network, where `GET /metrics` serves the same series with no token.",
			Responses: []response{
				{Status: 200, Doc: "The metrics, as `text/plain; version=0.0.4; charset=utf-8; escaping=underscores` unless the request's Accept header negotiates another Prometheus exposition format.", Body: &schema{Type: "string"}, Media: "text/plain", Demo: []demoCall{{Path: "/metrics", MetricFamily: "fundsvc_http_requests_total"}}},
			},
			Errors: map[int]string{
				401: "Unless the server sets `FUNDSVC_PUBLIC_METRICS=true`: no valid bearer token.",
				403: "Unless the server sets `FUNDSVC_PUBLIC_METRICS=true`: a valid token that is not an admin's of every fund (`funds: [\"*\"]`).",
			},
		},
		{
			Method: http.MethodGet, Path: "/openapi.json", ID: "getOpenAPI", Tag: "ops", Access: accessOptional,
			Handlers:    []gin.HandlerFunc{s.openUnless(s.opts.PublicOpenAPI), s.openAPI},
			Summary:     "This OpenAPI document",
			Description: "Serves this document as embedded in the binary, but for `servers`, which names first the URL the request reached (its Host, when that is a host name or an IP address with an optional port, and the scheme of its connection, or the `X-Forwarded-Proto` of a proxy in FUNDSVC_TRUSTED_PROXIES), then the relative `/`. Public by default; when the server sets `FUNDSVC_PUBLIC_OPENAPI=false`, it needs a valid token of either role (401 otherwise). A token sent to a public route is not checked.",
			Responses: []response{
				{Status: 200, Doc: "The OpenAPI 3.1 document.", Body: &schema{Type: "object"}, Demo: []demoCall{{Path: "/openapi.json", ThisDocument: true}}},
			},
			Errors: map[int]string{
				401: "Only when the server sets `FUNDSVC_PUBLIC_OPENAPI=false`: no valid bearer token.",
			},
		},
		{
			Method: http.MethodPut, Path: "/v1/documents/:documentId", ID: "putDocument", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.idempotent, s.putDocument},
			Summary:     "Create or restate a document",
			Description: "Stores the body as the document's next version: version 1 (201) for a new document, N+1 (200) for a restatement. Admin tokens only (403 for an investor token); the body's `fundId` must be a fund the token covers (403, `field` `fundId`, checked once the body is parsed, before the document's other rules), and an existing document of a fund the token does not cover is answered 404. The version records the token's subject (`sub`) as `createdBy`. The latest items are replaced and an immutable record of the version is kept, so past versions stay readable under `/versions`. A reader never sees a mix of two versions, however many positions the document holds: the version's items are written first and the version is committed last, in one transaction. If a call fails midway, readers keep seeing the previous version whole (or, once it is committed, the new one), and retrying the same body completes an interrupted version instead of adding another (its `createdBy` stays that of the call that began it; but a retry that still sends the old If-Match gets 412 once the version was committed). With an `Idempotency-Key`, repeating the request is safe: the repeat replays the first answer byte for byte, with `Idempotent-Replayed: true`, and writes nothing (see the parameter). The response is the stored version, normalized: defaults filled in, positions sorted by ID.",
			Params:      []string{"If-Match", "Idempotency-Key"},
			Body: &requestBody{Type: wire.DocumentRequest{}, Doc: "The whole document. Content-Type must be `application/json` or a `+json` type (415 otherwise); the body may hold at most FUNDSVC_MAX_BODY_BYTES (16 MiB by default, 413 beyond).",
				Examples: documentRequestExamples},
			Responses: []response{
				{Status: 200, Doc: "The document was restated; the body is the new version, with `changes`: the positions it added, removed and changed against the version it replaced, in all and per item type.", Body: wire.WrittenVersion{}, Headers: []string{"ETag", "Location", "Idempotent-Replayed"}, Demo: []demoCall{{Write: demoRestatement}}},
				{Status: 201, Doc: "The document was created as version 1 (no `changes`: it replaces no version).", Body: wire.WrittenVersion{}, Headers: []string{"ETag", "Location", "Idempotent-Replayed"}, Demo: []demoCall{{Write: demoCreation}}},
			},
			Errors: map[int]string{
				400: "`documentId` or a body field is invalid, If-Match is neither a version nor `*`, `Idempotency-Key` is not 1 to 255 visible ASCII characters, or the body is not exactly one JSON object of this schema (unknown fields included).",
				403: "An investor token (this route is for admin tokens), or the body's `fundId` is a fund the admin token does not cover (`field` `fundId`; checked once the body is parsed, before the document's other rules).",
				404: "The document exists in a fund the token does not cover. (An ID that does not exist is created instead, 201.)",
				409: "The document was voided (DELETE): a voided document is never restated; send the corrected document under a new ID. Or the document belongs to another fund than the body's `fundId` (a document never changes fund; this answer comes only when the token covers both funds, otherwise it is 403 or 404), a position ID is registered in the fund to another investor (`field` `positions`), too many writers raced for the document at once (retry), or a request with the same Idempotency-Key is still running (retry shortly).",
				412: "If-Match named a version that is not the current one (or `*` for a document that does not exist or belongs to a fund the token does not cover), or another writer committed first.",
				413: "",
				415: "",
				422: "",
			},
		},
		{
			Method: http.MethodDelete, Path: "/v1/documents/:documentId", ID: "voidDocument", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.idempotent, s.deleteDocument},
			Summary:     "Void a document",
			Description: "Voids a document sent by mistake: stores its next version, which keeps the document-level fields of the version it replaces (fund, kind, title, asOf, currency), reports no position and no capital activity, and has `status` `voided`. It is committed like a restatement, in one transaction (a reader sees the document before or after the void, never a mix), and records the token's subject as `createdBy`. From then on every figure (summaries, cash flows, performance, reconciliation), every listing (the fund's documents, the position routes) and the export's current data leave the document out, while every version stays readable under `/versions` and `/versions/{version}`, the voided one listed first (newest first); the overview shows the voided version. If-Match is required (428 without it) and must name the current version (or be `*`); 412 otherwise, also when another writer commits first. Voiding a document that is voided already writes nothing and answers that void again (200, the same body), whatever If-Match names, so repeating a DELETE is safe. A voided document is never restated (PUT is 409). Admin tokens only; a document of a fund the token does not cover is answered 404 like an unknown one, decided from its commit head before anything is written.",
			Params:      []string{"If-Match", "Idempotency-Key"},
			Responses: []response{
				{Status: 200, Doc: "The document is voided; the body is the voided version, with `changes` against the version it replaced (every position it reported, removed).", Body: wire.WrittenVersion{}, Headers: []string{"ETag", "Idempotent-Replayed"}, Demo: []demoCall{{Write: demoVoid}}},
			},
			Errors: map[int]string{
				400: "`documentId` is not a valid ID, If-Match is neither a version nor `*`, or `Idempotency-Key` is not 1 to 255 visible ASCII characters.",
				404: "No document with this ID, or the document belongs to a fund the token does not cover (the same answer).",
				409: "Too many writers raced for the document at once (retry), or a request with the same Idempotency-Key is still running (retry shortly).",
				412: "If-Match named a version that is not the current one, or another writer committed first.",
				422: "",
				428: "",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/documents/:documentId", ID: "getDocument", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getOverview},
			Summary:     "Document overview",
			Description: "The document grouped as documents (the latest version and the earlier ones), capital activities (the latest version's and the earlier ones') and positions (`{positionId: capitalCalls, distributions, unfundedCommitments}`), paginated by position. The first page comes from one Query of the document's latest view (for an admin whose token names some funds, after one GetItem of the document's commit head, which decides authorization before the read) and lists the 20 latest earlier versions in `documents.earlier` and `capitalActivities.earlier` (`/versions` pages through all of them), which the commit head carries: the Query reads no history record, so the first page costs the same however many versions the document has (one read unit for a small document at one version or at 1,000). If that read catches the latest view while a restatement rewrites it, the committed version is read from its own immutable records instead. Later pages read the same committed version, pinned in the cursor, so a client paging through a large document sees one version throughout, even if the document is restated meanwhile. With `knownAt`: the version known then (the latest committed at or before it), read from its own immutable records after one GetItem of the commit head, then, when a later version is the latest, one Query of the document's instant index and one GetItem of the version's record, whatever the number of versions, with the 20 versions below it as `documents.earlier` and `capitalActivities.earlier` (from the head when it carries them, otherwise two Queries of at most 20 history records), none committed later; the ETag is the version shown. Every page echoes its `basis` (`asOf` null: this route takes none), and the cursor pins it. Admin tokens only; a document of a fund the token does not cover is answered 404 like an unknown one, decided from the commit head before any other read.",
			Params:      []string{"limit", "cursor", "knownAt", "transactions"},
			Responses: []response{
				{Status: 200, Doc: "The overview page.", Body: wire.Overview{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/documents/DOC001"}}},
			},
			Errors: map[int]string{
				400: "`documentId` is not a valid ID. Or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal. Or `knownAt` is not an RFC 3339 instant, or is later than the server's clock, or differs from the one the `cursor` pins. Or `transactions` is neither `stated` nor `all`.",
				404: "No document with this ID, or the document belongs to a fund the token does not cover (the same answer), or, with `knownAt`, its first version was committed after `knownAt` (the same answer again).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/documents/:documentId/versions", ID: "listDocumentVersions", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getVersions},
			Summary:     "Document versions",
			Description: "Without `from` and `to`: the latest version's record, and every version's record (each `latest` or `superseded`, the latest among them), newest first, a page at a time (`limit`, `cursor`, `next`), with the latest version as ETag. With `from` and/or `to`: only the version records whose asOf lies between them (every version of the end date included), newest first, a page at a time, without `latest` and without ETag. The latest record is read first (one GetItem), then one Query per page of at most `limit`+1 version records and one Query of their events, which give each listed version its `committedAt` and its `supersededAt` (the next version's commit instant), so the cost of a page does not grow with the number of versions; with `from` or `to`, the records outside the dates are read and left out, up to three Queries a page, so a page may hold fewer than `limit` records and still have a `next`. The cursor pins the version the first page showed as the latest: later pages list the versions below it, whatever was committed since. With `knownAt`, the rule is the same as of that instant: only the versions committed at or before `knownAt` are listed, and the latest of them, the version known then, is `latest` (its record is `latest`, its status `latest`, and it is the ETag), even if later versions superseded it since; it is found with one GetItem of the commit head, then, when a later version is the latest, one Query of the document's instant index and one GetItem of the version's record, whatever the number of versions. Every page echoes its `basis` (`asOf` null: this route takes none). Admin tokens only; a document of a fund the token does not cover is answered 404 like an unknown one, before its history is read.",
			Params:      []string{"from", "to", "limit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The versions. ETag is set only without `from` and `to`.", Body: wire.Versions{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/documents/DOC007/versions"}}},
			},
			Errors: map[int]string{
				400: "`documentId` is not a valid ID. Or `from`/`to` is not a date, or `to` is before `from`. Or `knownAt` is not an RFC 3339 instant, or is later than the server's clock, or differs from the one the `cursor` pins.",
				404: "No document with this ID, or the document belongs to a fund the token does not cover (the same answer), or, with `knownAt`, its first version was committed after `knownAt` (the same answer again).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/documents/:documentId/versions/:version", ID: "getDocumentVersion", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getVersion},
			Summary:     "One version of a document",
			Description: "A number returns that version whole, positions included, read from its immutable records (what was reported then, however often the document was restated since). `latest` returns the latest document record only, without capital activity and positions. With `knownAt`: `latest` is the version known then (the latest committed at or before `knownAt`, with `status` `latest` even if superseded since), and a version committed after `knownAt` is 404 as a version the document does not have; found with one GetItem of the commit head, then, when a later version is the latest, one Query of the document's instant index and one GetItem of the version's record, whatever the number of versions. The answer echoes its `basis` (`asOf` null: this route takes none). Admin tokens only; a document of a fund the token does not cover is answered 404 like an unknown one.",
			Params:      []string{"knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The version (a DocumentVersionRead for a number, a DocumentHeaderRead with `status` `latest` for `latest`).", Body: anyOf{wire.DocumentVersionRead{}, wire.DocumentHeaderRead{}}, Headers: []string{"ETag"}, Demo: []demoCall{{Name: "number", Path: "/v1/documents/DOC007/versions/1"}, {Name: "latest", Path: "/v1/documents/DOC007/versions/latest"}}},
			},
			Errors: map[int]string{
				400: "`documentId` is not a valid ID. Or `version` is neither a number from 1 nor `latest`. Or `knownAt` is not an RFC 3339 instant, or is later than the server's clock.",
				404: "No document with this ID or no such version of it (with `knownAt`, none committed by then), or the document belongs to a fund the token does not cover (the same answer).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/documents/:documentId/positions/:positionId", ID: "getDocumentPosition", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getDocumentPosition},
			Summary:     "One position in a document",
			Description: "The position's items in the document's current committed version, read by their exact keys together with the commit head (falling back to the version's own records mid-restatement), with that version as ETag. With `itemType`: the one item of that type, read by its exact key from the latest view; the response then carries the item's version but no ETag. With `knownAt`: the items of the version known then (the latest committed at or before it), read from that version's own records after one GetItem of the commit head, then, when a later version is the latest, one Query of the document's instant index and one GetItem of the version's record, whatever the number of versions. The answer echoes its `basis` (`asOf` null: this route takes none). Admin tokens only; a document of a fund the token does not cover is answered 404 like an unknown one.",
			Params:      []string{"itemType", "knownAt", "transactions"},
			Responses: []response{
				{Status: 200, Doc: "The position's items. ETag is set only without `itemType`.", Body: wire.DocumentPosition{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/documents/DOC006/positions/POSITION_3"}}},
			},
			Errors: map[int]string{
				400: "`documentId` or `positionId` is not a valid ID, or `itemType` is not an item type. Or `knownAt` is not an RFC 3339 instant, or is later than the server's clock. Or `transactions` is neither `stated` nor `all`.",
				404: "No document with this ID (with `knownAt`, none committed by then), the document reports nothing (or nothing of `itemType`) for this position, or the document belongs to a fund the token does not cover (the same answer).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/documents/:documentId/capital", ID: "getDocumentCapital", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getCapital},
			Summary:     "Capital activity and capital calls of a document",
			Description: "The capital activity and the capital calls of the current committed version, and the earlier versions' capital activities, newest first, a page at a time (`limit`, `cursor`, `next`). The first page holds the version's capital activity and capital calls, read with one Query over the `CAPITAL_` sort keys (falling back to the version's own records mid-restatement), and the first `limit` earlier capital activities, read with one Query of at most `limit`+1 history records; later pages continue with the earlier capital activities of the same version, pinned in the cursor, one such Query each. So the cost of a page does not grow with the number of versions. With `knownAt`: the version known then (the latest committed at or before it), found with one GetItem of the commit head, then, when a later version is the latest, one Query of the document's instant index and one GetItem of the version's record, whatever the number of versions; its capital activity and capital calls are read from its own records, and the earlier capital activities are those of the versions below it. Every page echoes its `basis` (`asOf` null: this route takes none), and the cursor pins it. Admin tokens only; a document of a fund the token does not cover is answered 404 like an unknown one.",
			Params:      []string{"limit", "cursor", "knownAt", "transactions"},
			Responses: []response{
				{Status: 200, Doc: "The capital entities.", Body: wire.Capital{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/documents/DOC004/capital"}}},
			},
			Errors: map[int]string{
				400: "`documentId` is not a valid ID. Or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal. Or `knownAt` is not an RFC 3339 instant, or is later than the server's clock, or differs from the one the `cursor` pins. Or `transactions` is neither `stated` nor `all`.",
				404: "No document with this ID, or the document belongs to a fund the token does not cover (the same answer), or, with `knownAt`, its first version was committed after `knownAt` (the same answer again).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/documents/:documentId/analysis", ID: "getDocumentAnalysis", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getAnalysis},
			Summary:     "Per-position analysis of a document",
			Description: "For every position of the current committed version: how many capital calls, distributions and unfunded commitments it reports and their exact totals. All numbers come from one version. Not paginated. With `knownAt`: the version known then (the latest committed at or before it), read from its own records after one GetItem of the commit head, then, when a later version is the latest, one Query of the document's instant index and one GetItem of the version's record, whatever the number of versions. The answer echoes its `basis` (`asOf` null: this route takes none). Admin tokens only; a document of a fund the token does not cover is answered 404 like an unknown one.",
			Params:      []string{"knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The analysis.", Body: wire.Analysis{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/documents/DOC004/analysis"}}},
			},
			Errors: map[int]string{
				400: "`documentId` is not a valid ID. Or `knownAt` is not an RFC 3339 instant, or is later than the server's clock.",
				404: "No document with this ID, or the document belongs to a fund the token does not cover (the same answer), or, with `knownAt`, its first version was committed after `knownAt` (the same answer again).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/documents/:documentId/reconciliation", ID: "getDocumentReconciliation", Tag: "documents", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getDocumentReconciliation},
			Summary:     "A document's statements reconciled with the notices",
			Description: "For each capital account statement in the document's latest version, a page of positions at a time: the statement's contributions (A.1 row 13) and distributions (row 14, as a positive amount) against the sum of the typed lines of the calls and distributions the position's notices date in the statement's period (by due date and payment date, both period days included), and the statement's ending unfunded commitment (A.2 row 114) against the one computed from the commitment and each line's effect up to the period end, each with its difference (statement − notices). The notices count at their latest version dated on or before the statement's period end. Admin tokens only. Reads: one GetItem of the document's head (a document of a fund the token does not cover is answered 404 then, like an unknown one), one Query of the page's statements (at most 50 a page), then the reads of a position summary per statement, 8 at a time. The position reads are from a secondary index, so they are eventually consistent. Rate limit: charged `limit` + 2 tokens before anything is read (429 if the token's bucket is empty), the statements the page does not hold given back once it is listed: a page costs 2 plus its statements. A fan-out read: 503 when the server computes as many as it may at once. With `knownAt`: the statements of the document's version known then (the latest committed at or before it: one GetItem of the commit head, which decides authorization, then, when a later version is the latest, one Query of the document's instant index and one GetItem of the version's record), read from that version's own partition (one Query of the page's positions), each reconciled with the notices as known at the same instant: per statement, one Query of the position's ledger (the documents that ever reported it, at most 200) and one Query of each such document's version known then, each other document's version found once for the whole page (as above), not once per statement. Charged as without `knownAt`, plus one token for the document's search, then, before they are read, one per ledger document of each statement and one per other document searched. Every page echoes its `basis` (`asOf` null: this route takes none). A later page is read as known at its first page's instant, which the cursor pins, `knownAt` or not. After a first page read from the latest versions, each fund of the page is asked once whether a document of it was committed since (one Query of its event feed, one token charged whatever the bucket holds): the positions of a fund that was not are read from the latest versions, as the first page read them, and those of one that was are read as known at the instant, as with `knownAt`.",
			Params:      []string{"fanoutLimit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "One page of reconciliations; a document without statements answers an empty list.", Body: wire.DocumentReconciliation{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/documents/DOC007/reconciliation"}}},
			},
			Errors: map[int]string{
				400: "`documentId` is not a valid ID, or `limit` is not a whole number from 1 to 50, or `cursor` was not issued by this query to this principal, or `knownAt` is not an RFC 3339 instant, is later than the server's clock, or differs from the one the cursor pins (checked before the document is read). Or, with `knownAt`, a statement's position has been reported by more than 200 documents.",
				404: "No document with this ID, or the document belongs to a fund the token does not cover (the same answer), or, with `knownAt`, its first version was committed after `knownAt` (the same answer again).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/funds", ID: "listFunds", Tag: "funds", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.listFunds},
			Summary:     "Funds",
			Description: "The funds the token may read, each with its record, or its ID alone while it has none (a fund that documents name but no administrator has described yet). An admin token of every fund (`*`) lists every fund from the funds' registry (a secondary index, eventually consistent), shard by shard and by fund ID within a shard, with at most 12 Queries a page; an admin token of some funds lists those of them that exist, by fund ID; an investor token the funds it holds positions of, by fund ID, with one Query of a secondary index. Then one BatchGet of the page's records. A page may hold fewer than `limit` funds while `next` is present. With `knownAt`: the funds that had a record or a committed document then (for an investor token, those it held a position of then), each with its record's version in force then; each fund without a record then costs one Query of its event feed per month back from `knownAt` until one holds an event, and each record replaced since a binary search (see the fund); the caller is charged one token per request, each paid for before it is made (429 when the bucket is empty then).",
			Params:      []string{"limit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "One page of funds.", Body: wire.Page[wire.Fund]{}, Demo: []demoCall{{Path: "/v1/funds"}}},
			},
			Errors: map[int]string{
				400: "`limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal.",
			},
		},
		{
			Method: http.MethodPut, Path: "/v1/funds/:fundId", ID: "putFund", Tag: "funds", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.idempotent, s.putFund},
			Summary:     "Create or replace a fund's record",
			Description: "Stores the body as the fund's record: version 1 (201) for the first, N+1 (200) for a replacement, recording the token's subject as `updatedBy`. Admin tokens only, for the funds the token covers (404 otherwise, as for a fund that does not exist, decided before the body is read). A fund may have a record before any document names it, and documents may name a fund that has none. `If-Match` works as for documents: `\"<version>\"` replaces only that version, `\"0\"` only creates, `*` only replaces; without it, concurrent writers are serialized and no version is lost. Each version is kept, written in one transaction with the record and stamped with the table's clock, so a GET with `knownAt` answers the version in force then. A body that breaks a rule changes nothing.",
			Params:      []string{"If-Match", "Idempotency-Key"},
			Body:        &requestBody{Type: wire.FundRequest{}, Doc: "The whole record. Content-Type must be `application/json` or a `+json` type (415 otherwise)."},
			Responses: []response{
				{Status: 200, Doc: "The record was replaced; the body is the new version.", Body: wire.Fund{}, Headers: []string{"ETag", "Location", "Idempotent-Replayed"}, Example: demoFundRecord(2)},
				{Status: 201, Doc: "The record was created as version 1.", Body: wire.Fund{}, Headers: []string{"ETag", "Location", "Idempotent-Replayed"}, Example: demoFundRecord(1)},
			},
			Errors: map[int]string{
				400: "`fundId` or a body field is invalid, If-Match is neither a version nor `*`, or the body is not exactly one JSON object of this schema (unknown fields included).",
				404: "A fund the admin token does not cover, whether or not it exists (decided before the body is read).",
				409: "Too many writers raced for the record (retry), or a request with the same Idempotency-Key is still running.",
				412: "If-Match named a version that is not the current one (or `*` for a fund without a record), or another writer replaced the record first.",
				413: "",
				415: "",
				422: "",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/funds/:fundId", ID: "getFund", Tag: "funds", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getFund},
			Summary:     "A fund",
			Description: "The fund's record, with its version as ETag, or its ID alone (no ETag) while it has none but documents name it. An admin token reads the funds it covers (decided before any read); an investor token the funds it holds positions of (one BatchGet of its note in the fund). Then one consistent BatchGet of the fund's item and record. With `knownAt`: the record's version in force then, or the ID alone while the fund had a committed document but no record then; 404 for a fund that had neither (whatever it has now). A record replaced since costs one Query of its instant index and one GetItem of the version in force then, whatever the number of versions; a fund without a record then, one GetItem and one Query of its event feed per month back from `knownAt` until one holds an event. Records written before versions were kept count from their `updatedAt`. The caller is charged one token per request, each paid for before it is made (429 when the bucket is empty then). No ETag with `knownAt`.",
			Params:      []string{"knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The fund.", Body: wire.Fund{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/funds/FUND_A"}}},
			},
			Errors: map[int]string{
				400: "`fundId` is not a valid ID.",
				404: "No record and no document of this fund, or a fund the token may not read (the same answer).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/funds/:fundId/documents", ID: "listFundDocuments", Tag: "funds", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.listFundDocuments},
			Summary:     "A fund's documents",
			Description: "The latest record of each of the fund's documents, by asOf then document ID, read with one Query of the fund partition per page. `kind` filters after the read, so a page may hold fewer than `limit` records, even none, while `next` is present. Admin tokens only, for the funds the token covers. With `knownAt`: each document first committed by then, at its version known then (its asOf, title, kind, status then; a document voided then is left out, as the listing leaves voided documents out), by that asOf then document ID: it reads every document of the fund (its index, one Query per 1 MB; the documents voided since, from the fund's event feed since `knownAt`, one Query per month and 1 MB; their heads, one BatchGet per 100; for each document restated or voided since, one Query of its instant index and one GetItem of the version's record), at most 1,000 documents (400 beyond), and charges the caller one token per request, on every page, each group of requests paid for before it is made (the months of the fund's feed up front; 429 when the bucket is empty then, what is not used given back). A `knownAt` before the event feed's start is before anything: 404, as a fund that had no document then, after at most one GetItem.",
			Params:      []string{"from", "to", "kind", "limit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "One page of document records.", Body: wire.Page[wire.DocumentHeader]{}, Demo: []demoCall{{Path: "/v1/funds/FUND_A/documents"}}},
			},
			Errors: map[int]string{
				400: "`fundId` is not a valid ID, `from`/`to` is not a date or `to` is before `from`, `kind` is unknown, or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal.",
				404: "The fund is not one the token covers, whether or not it exists (answered after `fundId`, `from`, `to` and `kind` are checked, before `limit` and `cursor`); or the first page is empty and the fund has never had a document.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/events", ID: "listEvents", Tag: "events", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.listEvents},
			Summary:     "The event feed",
			Description: "Every committed version of a document as an event (`document.created`, `document.restated`, `document.voided`), in commit order, replayable from the beginning: without `after`, the first page starts at the first event ever committed. Each event is the payload a webhook delivers (Standard Webhooks: `type`, `timestamp`, `data`, with the event's `id`), and its `data.versionPath` reads exactly the version it announces. The answer is complete up to its `watermark`, the settle margin (5 minutes) behind the server's clock: every version committed at or before it is listed, none later, and `next` resumes right after the last event listed, or at the watermark, so reading on from `next` never misses nor repeats an event. Scope: an admin token reads the events of the funds it covers; an investor token the events of documents that touch its positions, each listing only its own positions. `fund` keeps one fund's events (a fund an admin token does not cover is 404; for an investor token, the events of its positions in that fund), `type` one type. Cost (docs/events.md): for an admin of every fund, or of more than 16 funds (keeping its funds' events), Queries of the event index per UTC day per change shard between the cursor and the watermark; for an admin of at most 16 funds, or with `fund`, Queries per fund per UTC month; for an investor, first one Query of its positions per 1,000 positions, then as an admin of its positions' funds, keeping the events of its positions. Each Query reads up to 1,000 events when a filter may pass over some (`type`, an investor's view, some funds read from the index of every fund). A page makes at most 64 Queries and holds at most `limit` events and about 1 MiB of them (at least one event): it then ends with `more` true and `next` where every partition was read to, so a page may list fewer events than `limit`, or none, and a replay over empty periods, or over events a filter passes over, answers in bounded time.",
			Params:      []string{"after", "type", "fund", "limit"},
			Responses: []response{
				{Status: 200, Doc: "One page of the feed.", Body: wire.EventFeed{}, Demo: []demoCall{{Path: "/v1/events?limit=3"}}},
			},
			Errors: map[int]string{
				400: "`type` is not an event type, `fund` is not a valid ID, `limit` is not a whole number from 1 to 1000, or `after` was not issued by this query (the same `type` and `fund`) to this principal.",
				404: "`fund` names a fund an admin token does not cover, whether or not it exists (answered after `type` and `fund` are checked, before `limit` and `after`).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/funds/:fundId/positions", ID: "listFundPositions", Tag: "funds", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.listFundPositions},
			Summary:     "A fund's positions",
			Description: "The positions registered in the fund (each one fund plus one investor), by position ID, read with one Query of the fund partition per page. Admin tokens only, for the funds the token covers. With `knownAt`: the positions registered then (by `registeredAt`, the creation instant of the first document version that reported the position), filtered after the page's read, so a page may hold fewer than `limit` while `next` is present, with the names the funds' and investors' records gave them then.",
			Params:      []string{"limit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "One page of positions.", Body: wire.Page[wire.RegisteredPosition]{}, Demo: []demoCall{{Path: "/v1/funds/FUND_A/positions"}}},
			},
			Errors: map[int]string{
				400: "`fundId` is not a valid ID. Or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal.",
				404: "The fund is not one the token covers, whether or not it exists (answered after `fundId` is checked, before `limit` and `cursor`); or the first page is empty and the fund has never had a document.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/funds/:fundId/performance", ID: "getFundPerformance", Tag: "funds", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getFundPerformance},
			Summary:     "A fund's performance",
			Description: "The performance of every position of the fund on `asOf` (today, UTC, when absent), pooled per currency as ILPA's fund-level net IRR and TVPI pool the LPs' flows: paid-in, distributed and NAV are the positions' sums, the multiples divide the sums, and the IRR solves the pooled flows with the pooled NAV as the terminal value. When some position has no NAV, the pooled NAV is absent (`nav.status` `incomplete`, `positionsWithoutNav` counts them), and so are RVPI, TVPI and the IRR. The conventions are stated in the answer. Admin tokens only, for the funds the token covers. Reads: the fund's registry (at most 2,001 rows: a fund with more than 2,000 positions is 400, before any position is read), then the reads of a position summary per position, 8 at a time, from a secondary index, so eventually consistent. Rate limit: the request's token pays for the registry's Query (1 more for each further Query of it), then, once the registry is read and before any position is, one token per registered position is charged (429 if the token's bucket is empty then); a fund larger than the burst takes the bucket into debt. A fan-out read: 503, before anything is read, when the server computes as many as it may at once. With `knownAt` (and `asOf` its date when absent): every position as `/v1/positions/{positionId}/performance` reads it as known then, from its ledger rather than the secondary index (strongly consistent): per position, one Query of its ledger (the documents that ever reported it, at most 200) and one Query of each such document's version known then; each document's version known then is found once for the whole fund (one GetItem of its commit head, then, when a later version is the latest, one Query of its instant index and one GetItem of the version's record), not once per position, so a fund of 400 positions in 20 documents makes 20 searches. A registered position that no document's version then reports is left out. Charged as without `knownAt`, plus, before they are read, one token per ledger document of each position and one per document searched. The answer echoes its `basis`.",
			Params:      []string{"asOf", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The fund's performance per currency.", Body: wire.FundPerformance{}, Demo: []demoCall{{Path: "/v1/funds/FUND_A/performance?asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "`fundId` is not a valid ID, `asOf` is not a valid date, `knownAt` is not an RFC 3339 instant or is later than the server's clock, or the fund has more than 2,000 positions, or, with `knownAt`, a position has been reported by more than 200 documents.",
				404: "The fund has no position, or the token does not cover it (the same answer).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/investors", ID: "listInvestors", Tag: "investors", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.listInvestors},
			Summary:     "Investors",
			Description: "Investors, each with its record, or its ID alone while it has none (an investor that documents name but no administrator has described yet). With `fundId`: the investors holding positions of that fund, by investor ID, with one Query of the fund's partition, for an admin token that covers the fund. Without: every investor, from the investors' registry (a secondary index, eventually consistent), shard by shard and by investor ID within a shard, with at most 12 Queries a page, for an admin token of every fund only. Then one BatchGet of the page's records. A page may hold fewer than `limit` investors while `next` is present. Admin tokens only. With `knownAt`: the investors that had a record or a registered position then (with `fundId`: that held a position of the fund then, read from the fund's registry, one Query per 1 MB), each with its record's version in force then; the caller is charged one token per request, each paid for before it is made (429 when the bucket is empty then).",
			Params:      []string{"fundIdQuery", "limit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "One page of investors.", Body: wire.Page[wire.Investor]{}, Demo: []demoCall{{Path: "/v1/investors?fundId=FUND_A"}}},
			},
			Errors: map[int]string{
				400: "`fundId` is not a valid ID, or is absent while the token does not cover every fund; or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal.",
				404: "`fundId` is a fund the token does not cover (decided before any read), or a fund with neither a record nor a document.",
			},
		},
		{
			Method: http.MethodPut, Path: "/v1/investors/:investorId", ID: "putInvestor", Tag: "investors", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.idempotent, s.putInvestor},
			Summary:     "Create or replace an investor's record",
			Description: "Stores the body as the investor's record: version 1 (201) for the first, N+1 (200) for a replacement, recording the token's subject as `updatedBy`. Admin tokens only: an admin token of every fund writes any investor's record, even before a document names the investor; an admin token of some funds writes the records of the investors holding positions of them (one BatchGet of the investor's notes in its funds, before the body is read) and answers 404 for any other, as for an unknown investor. `If-Match` works as for funds. A body that breaks a rule changes nothing.",
			Params:      []string{"If-Match", "Idempotency-Key"},
			Body:        &requestBody{Type: wire.InvestorRequest{}, Doc: "The whole record. Content-Type must be `application/json` or a `+json` type (415 otherwise)."},
			Responses: []response{
				{Status: 200, Doc: "The record was replaced; the body is the new version.", Body: wire.Investor{}, Headers: []string{"ETag", "Location", "Idempotent-Replayed"}, Example: demoInvestorRecord(2)},
				{Status: 201, Doc: "The record was created as version 1.", Body: wire.Investor{}, Headers: []string{"ETag", "Location", "Idempotent-Replayed"}, Example: demoInvestorRecord(1)},
			},
			Errors: map[int]string{
				400: "`investorId` or a body field is invalid, If-Match is neither a version nor `*`, or the body is not exactly one JSON object of this schema (unknown fields included).",
				404: "An admin token of some funds names an investor holding no position of them.",
				409: "Too many writers raced for the record (retry), or a request with the same Idempotency-Key is still running.",
				412: "If-Match named a version that is not the current one (or `*` for an investor without a record), or another writer replaced the record first.",
				413: "",
				415: "",
				422: "",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/investors/:investorId", ID: "getInvestor", Tag: "investors", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getInvestor},
			Summary:     "An investor",
			Description: "The investor's record, with its version as ETag, or its ID alone (no ETag) while it has none but documents name it. An investor token reads its own; an admin token of every fund any; an admin token of some funds those holding positions of them (one BatchGet of the investor's notes in its funds, before the record is read). Then one consistent BatchGet of the record, and, when there is none, one Query of the investors' registry. With `knownAt`: the record's version in force then, or the ID alone while the investor had a registered position but no record then; 404 for an investor that had neither (whatever it has now). A record replaced since costs one Query of its instant index and one GetItem of the version in force then; an investor without a record then, one Query of its registry rows per 1 MB. The caller is charged one token per request, each paid for before it is made (429 when the bucket is empty then). No ETag with `knownAt`.",
			Params:      []string{"knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The investor.", Body: wire.Investor{}, Headers: []string{"ETag"}, Demo: []demoCall{{Path: "/v1/investors/INVESTOR_1"}}},
			},
			Errors: map[int]string{
				400: "`investorId` is not a valid ID.",
				404: "No record and no position of this investor, or one the token may not read (the same answer).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/investors/:investorId/positions", ID: "listInvestorPositions", Tag: "investors", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.listInvestorPositions},
			Summary:     "An investor's positions",
			Description: "The investor's positions across funds, by position ID. An investor token may name its own investor only (404 for any other); an admin token sees the investor's positions in the funds it covers, filtered after the read: each page costs at most two Queries (of up to 1,000 rows each for an admin who covers only some funds), so a page may hold fewer than `limit` items, even none, while `next` is present. Read from a secondary index, so it is eventually consistent: a write may take a moment to show. With `knownAt`: the positions registered then (by `registeredAt`), filtered after the page's read, with the names the records gave then; 404 as above when none of the first page's was registered then and no `next` follows.",
			Params:      []string{"limit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "One page of positions.", Body: wire.Page[wire.RegisteredPosition]{}, Demo: []demoCall{{Path: "/v1/investors/INVESTOR_1/positions"}}},
			},
			Errors: map[int]string{
				400: "`investorId` is not a valid ID. Or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal.",
				404: "An investor token names another investor (answered after `investorId` is checked, before `limit` and `cursor`); or the first page is empty and no `next` follows: the investor has no position or, for an admin token, none in the funds the token covers.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/investors/:investorId/summary", ID: "getInvestorSummary", Tag: "investors", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getInvestorSummary},
			Summary:     "An investor's positions summed up",
			Description: "The investor's positions summed up as `/v1/positions/{positionId}/summary` does, a page of positions at a time (`limit`, `cursor`, `next`), and totalled per currency over the positions of the page. An investor token may name its own investor only (404 for any other); an admin token sees the investor's positions in the funds it covers. At most two Queries list a page's positions (an admin who covers only some funds reads up to 1,000 rows each), then one more (rarely three) per position of the page. Each position counts only the items of the fund and investor its registry row names. Read from a secondary index, so it is eventually consistent: a write may take a moment to show. Rate limit: charged `limit` + 3 tokens before anything is read (429 if the token's bucket is empty), the positions the page does not hold given back once it is listed: a page costs 3 plus its positions. A fan-out read: 503 when the server computes as many as it may at once. With `knownAt` (and `asOf` its date when absent): each position of the page as `/v1/positions/{positionId}/summary` reads it as known then, from its ledger (strongly consistent): per position, one Query of its ledger (the documents that ever reported it, at most 200) and one Query of each such document's version known then; each document's version known then is found once for the whole page (one GetItem of its commit head, then, when a later version is the latest, one Query of its instant index and one GetItem of the version's record), not once per position. A registered position that no document's version then reports is left out, and the names are those the fund's and the investor's records gave them then (one BatchGet, and for each record replaced since one Query and one GetItem more, paid for before they are made). Charged as without `knownAt`, plus, before they are read, one token per ledger document of each position and one per document searched. Every page echoes its `basis`. A later page is read as known at its first page's instant, which the cursor pins, `knownAt` or not. After a first page read from the latest versions, each fund of the page is asked once whether a document of it was committed since (one Query of its event feed, one token charged whatever the bucket holds): the positions of a fund that was not are read from the latest versions, as the first page read them, and those of one that was are read as known at the instant, as with `knownAt`.",
			Params:      []string{"asOf", "fanoutLimit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The investor's positions and their totals per currency.", Body: wire.InvestorSummary{}, Demo: []demoCall{{Path: "/v1/investors/INVESTOR_1/summary?asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "`investorId` is not a valid ID, or `asOf` is not a valid date, or `limit` is not a whole number from 1 to 50, or `cursor` was not issued by this query to this principal, or `knownAt` is not an RFC 3339 instant, is later than the server's clock, or differs from the one the cursor pins (or `asOf` from the pinned one). Or, with `knownAt`, a position has been reported by more than 200 documents.",
				404: "An investor token names another investor; or no document reports any position of the investor that the token may read (with `knownAt`: no document's version known then).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/investors/:investorId/performance", ID: "getInvestorPerformance", Tag: "investors", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getInvestorPerformance},
			Summary:     "An investor's performance",
			Description: "The investor's positions' performance on `asOf` (today, UTC, when absent), each as `/v1/positions/{positionId}/performance` answers it, a page of positions at a time (`limit`, `cursor`, `next`), and pooled per currency over the positions of the page, never adding currencies. Scope, reads and the 503 as `/v1/investors/{investorId}/summary`, without the names: charged `limit` + 2 tokens up front, a page costs 2 plus its positions. `knownAt`, its reads and charge, the `basis` and the pinned cursor as there (`asOf` is `knownAt`'s date when absent).",
			Params:      []string{"asOf", "fanoutLimit", "cursor", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The investor's positions' performance and the pooled figures per currency.", Body: wire.InvestorPerformance{}, Demo: []demoCall{{Path: "/v1/investors/INVESTOR_1/performance?asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "`investorId` is not a valid ID, or `asOf` is not a valid date, or `limit` is not a whole number from 1 to 50, or `cursor` was not issued by this query to this principal, or `knownAt` is not an RFC 3339 instant, is later than the server's clock, or differs from the one the cursor pins (or `asOf` from the pinned one). Or, with `knownAt`, a position has been reported by more than 200 documents.",
				404: "An investor token names another investor; or no document reports any position of the investor that the token may read (with `knownAt`: no document's version known then).",
			},
		},
		{
			Method: http.MethodPost, Path: "/v1/webhooks", ID: "createWebhook", Tag: "webhooks", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.createWebhook},
			Summary:     "Subscribe an endpoint to events",
			Description: "Creates a webhook endpoint: every event of the feed committed from now on whose type and fund it subscribes to is POSTed to its URL, signed as Standard Webhooks 1.0 specifies (headers `webhook-id`, the event's ID and the same on every retry, `webhook-timestamp` and `webhook-signature`, `v1,<base64 HMAC-SHA256 of id.timestamp.body>`), at least once, and in version order per document (see docs/webhooks.md). The answer holds the signing secret (`secret`), shown this once: it is stored encrypted and never answered again. Admin tokens only; `funds` must be funds the token covers. A fund has at most FUNDSVC_WEBHOOK_MAX_ENDPOINTS (10) endpoints naming it, an endpoint of several funds counting once for each; the endpoints naming no fund (every fund) have a count of their own. The limit holds across instances: each count is raised in the transaction that creates the endpoint. The server must set FUNDSVC_WEBHOOK_SECRET_KEY (503 otherwise).",
			Body:        &requestBody{Type: wire.WebhookRequest{}, Doc: "The endpoint. Content-Type must be `application/json`."},
			Responses: []response{
				{Status: 201, Doc: "The endpoint was created; `secret` is shown this once.", Body: wire.Webhook{}, Headers: []string{"Location"}, Example: exampleCreatedWebhook()},
			},
			Errors: map[int]string{
				400: "A member is invalid: `url` not https (or plain http to a host other than loopback, or without FUNDSVC_WEBHOOK_ALLOW_LOOPBACK), naming a private, loopback or link-local address, carrying credentials; an unknown event type; an invalid fund ID, a fund named twice or more than 49 funds; or the body is not exactly one JSON object of this schema.",
				403: "An investor token, or `funds` names a fund the token does not cover, or leaves the funds out (every fund) and the token does not cover every fund (`field` `funds`).",
				409: "A fund it names already has FUNDSVC_WEBHOOK_MAX_ENDPOINTS endpoints (`/problems/limit_exceeded`, `field` `funds`, the detail naming the fund and the limit): delete one first. Nothing was created.",
				413: "", 415: "",
				503: "The server has no FUNDSVC_WEBHOOK_SECRET_KEY to encrypt secrets with.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/webhooks", ID: "listWebhooks", Tag: "webhooks", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.listWebhooks},
			Summary:     "List webhook endpoints",
			Description: "Every endpoint the token covers (each of whose funds it covers; an endpoint of every fund only to a token of every fund), with its state (`enabled`, and `disabledReason` when the server disabled it), never a secret. One Query of the endpoints' partition; never paginated (`next` is always absent).",
			Responses: []response{
				{Status: 200, Doc: "The endpoints.", Body: wire.Page[wire.Webhook]{}, Example: wire.Page[wire.Webhook]{Items: []wire.Webhook{exampleWebhook}}},
			},
			Errors: map[int]string{503: "The server has no FUNDSVC_WEBHOOK_SECRET_KEY."},
		},
		{
			Method: http.MethodGet, Path: "/v1/webhooks/:webhookId", ID: "getWebhook", Tag: "webhooks", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getWebhook},
			Summary:     "A webhook endpoint",
			Description: "The endpoint and its state, never its secret. An endpoint the token does not cover is answered 404 like an unknown one.",
			Responses: []response{
				{Status: 200, Doc: "The endpoint.", Body: wire.Webhook{}, Example: exampleWebhook},
			},
			Errors: map[int]string{
				400: "`webhookId` is not a valid ID.",
				404: "No endpoint with this ID, or one the token does not cover (the same answer).",
				503: "The server has no FUNDSVC_WEBHOOK_SECRET_KEY.",
			},
		},
		{
			Method: http.MethodPatch, Path: "/v1/webhooks/:webhookId", ID: "updateWebhook", Tag: "webhooks", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.patchWebhook},
			Summary:     "Change, pause, re-enable a webhook endpoint or rotate its secret",
			Description: "Replaces the members the body names. `enabled: true` re-enables an endpoint the server disabled and clears why; the events queued meanwhile are then delivered (nothing is dropped while an endpoint is disabled). `rotateSecret` makes a new secret, answered this once in `secret`; during the overlap every delivery carries two signatures in `webhook-signature`, space-separated, so a receiver may switch at its own pace. An update races with the server's own (disabling an endpoint) and with other updates: the second of two is 409, to be read and sent again.",
			Body:        &requestBody{Type: wire.WebhookPatch{}, Doc: "The members to change. Content-Type must be `application/json`."},
			Responses: []response{
				{Status: 200, Doc: "The endpoint as changed; `secret` only after a rotation.", Body: wire.Webhook{}, Example: exampleWebhook},
			},
			Errors: map[int]string{
				400: "`webhookId` is not a valid ID, or a member is invalid (as at creation; `rotateSecret.overlap` beyond 168h).",
				403: "An investor token, or `funds` names a fund the token does not cover.",
				404: "No endpoint with this ID, or one the token does not cover (the same answer).",
				409: "The endpoint changed since it was read (another update, or the server disabled it): read it and try again (`/problems/conflict`). Or `funds` adds a fund that already has FUNDSVC_WEBHOOK_MAX_ENDPOINTS endpoints (`/problems/limit_exceeded`, `field` `funds`); nothing was changed.",
				413: "", 415: "",
				503: "The server has no FUNDSVC_WEBHOOK_SECRET_KEY.",
			},
		},
		{
			Method: http.MethodDelete, Path: "/v1/webhooks/:webhookId", ID: "deleteWebhook", Tag: "webhooks", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.deleteWebhook},
			Summary:     "Delete a webhook endpoint",
			Description: "Deletes the endpoint: nothing more is delivered to it, including what it had queued, and its place in the count of each fund it names is free at once. Its cursor, delivery log and pending queue are deleted after the answer, in pages, by the instances that deliver (about a minute), and watched for an hour for what a delivery round in flight wrote (docs/webhooks.md).",
			Responses: []response{
				{Status: 200, Doc: "The endpoint was deleted; the body is what it was.", Body: wire.Webhook{}, Example: exampleWebhook},
			},
			Errors: map[int]string{
				400: "`webhookId` is not a valid ID.",
				404: "No endpoint with this ID, or one the token does not cover (the same answer).",
				409: "The endpoint changed three times while it was being deleted (the server marks endpoints that fail): try again.",
				503: "The server has no FUNDSVC_WEBHOOK_SECRET_KEY.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/webhooks/:webhookId/deliveries", ID: "listWebhookDeliveries", Tag: "webhooks", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.listWebhookDeliveries},
			Summary:     "An endpoint's delivery log",
			Description: "Every event queued for the endpoint, by event ID, with its status (pending, delivered, failed), its attempts (when; the answer's status code and latency, or `no answer` whatever the cause, so the log never tells how a connection failed) and, while pending, when the next attempt is due. One Query of the endpoint's partition per page.",
			Params:      []string{"limit", "cursor"},
			Responses: []response{
				{Status: 200, Doc: "One page of deliveries.", Body: wire.Page[wire.WebhookDelivery]{}, Example: wire.Page[wire.WebhookDelivery]{Items: []wire.WebhookDelivery{exampleDelivery}}},
			},
			Errors: map[int]string{
				400: "`webhookId` is not a valid ID, or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal.",
				404: "No endpoint with this ID, or one the token does not cover (the same answer).",
				503: "The server has no FUNDSVC_WEBHOOK_SECRET_KEY.",
			},
		},
		{
			Method: http.MethodPost, Path: "/v1/webhooks/:webhookId/deliveries/:eventId/redeliver", ID: "redeliverWebhook", Tag: "webhooks", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.redeliverWebhook},
			Summary:     "Deliver one event again",
			Description: "Puts an event delivered or given up back in the endpoint's queue, due now, with the same `webhook-id`; its attempts start again from the first of the retry schedule.",
			Responses: []response{
				{Status: 202, Doc: "The event is queued again.", Body: wire.WebhookDelivery{}, Example: exampleDelivery},
			},
			Errors: map[int]string{
				400: "`webhookId` is not a valid ID, or `eventId` is not an event ID.",
				404: "No endpoint with this ID or one the token does not cover, or the event was never queued for it.",
				409: "The event is still pending for the endpoint.",
				503: "The server has no FUNDSVC_WEBHOOK_SECRET_KEY.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/positions/:positionId", ID: "listPositionItems", Tag: "positions", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.listPositionItems},
			Summary:     "A position's items across documents",
			Description: "Every item the documents' latest versions report for the position, by item type then document ID; `itemType` keeps one type. An investor token reads the positions of its own investor, an admin token those of the funds it covers. Each item carries the document version it comes from; a position's items in one document are written together in one transaction. Read from a secondary index, so it is eventually consistent: a write may take a moment to show. With `knownAt` (an instant), read as known then: the position's documents are those its ledger lists (every document that has ever reported it, in any version), each at its latest version committed at or before `knownAt` (a document first committed later does not exist; one whose version then is a void or does not report the position does not count), the items of each document's version then, in the same order; a position no document's version then reports is 404, as an unknown one. Reads: one strongly consistent Query of the position's ledger, on which access is decided (a position the token may not read costs that Query, as an unknown one), then per document at most 2 GetItems and 2 Queries (its commit head, its instant index, the version's record and its items; two more when a restatement moved its date after `asOf`), 8 documents at a time. Rate limit: one token per document of the ledger, charged once access is decided and before any document is read. A position reported by more than 200 documents is 400 with `knownAt`. The answer's `basis` echoes what it was read on.",
			Params:      []string{"itemType", "knownAt", "limit", "cursor", "transactions"},
			Responses: []response{
				{Status: 200, Doc: "One page of items. With `itemType`, a position that has nothing of that type, or that does not exist, answers an empty page.", Body: wire.PositionItemsPage{}, Demo: []demoCall{{Path: "/v1/positions/POSITION_1?itemType=distribution&transactions=all"}}},
			},
			Errors: map[int]string{
				400: "`positionId` is not a valid ID, `itemType` is not an item type, or `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal. Or `transactions` is neither `stated` nor `all`.",
				404: "Without `itemType`, the first page is empty: no document reports anything for the position. Or the page holds an item the token may not read (another investor's, or, for an admin token, one of a fund the token does not cover): the whole page is then answered 404.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/positions/:positionId/capital-calls", ID: "listPositionCapitalCalls", Tag: "positions", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.listPositionCapitalCalls},
			Summary:     "A position's capital calls",
			Description: "The position's capital calls across the documents' latest versions, by document ID, paginated. An investor token reads the positions of its own investor, an admin token those of the funds it covers. Read from a secondary index, so it is eventually consistent: a write may take a moment to show. With `document`: the position's capital call in that document only, read through the entity-document index; the page then holds exactly one item and no `next`, and `limit` and `cursor` are ignored. With `knownAt` (an instant), read as known then: the position's documents are those its ledger lists (every document that has ever reported it, in any version), each at its latest version committed at or before `knownAt` (a document first committed later does not exist; one whose version then is a void or does not report the position does not count), the capital calls of each document's version then (with `document`, that document's); a position no document's version then reports is 404, as an unknown one. Reads: one strongly consistent Query of the position's ledger, on which access is decided (a position the token may not read costs that Query, as an unknown one), then per document at most 2 GetItems and 2 Queries (its commit head, its instant index, the version's record and its items; two more when a restatement moved its date after `asOf`), 8 documents at a time. Rate limit: one token per document of the ledger, charged once access is decided and before any document is read. A position reported by more than 200 documents is 400 with `knownAt`. The answer's `basis` echoes what it was read on.",
			Params:      []string{"document", "knownAt", "limit", "cursor", "transactions"},
			Responses: []response{
				{Status: 200, Doc: "One page of capital calls. Without `document`, a position that has no capital call, or that does not exist, answers an empty page.", Body: wire.PositionItemsPage{}, Demo: []demoCall{{Path: "/v1/positions/POSITION_1/capital-calls"}}},
			},
			Errors: map[int]string{
				400: "`positionId` or `document` is not a valid ID, or (without `document`) `limit` is not a whole number from 1 to 1000, or `cursor` was not issued by this query to this principal. Or `transactions` is neither `stated` nor `all`.",
				404: "With `document`: the position has no capital call in that document, or the token may not read it (another investor's, or, for an admin token, of a fund the token does not cover). Without `document`: the page holds a capital call the token may not read; the whole page is then answered 404.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/positions/:positionId/summary", ID: "getPositionSummary", Tag: "positions", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getPositionSummary},
			Summary:     "A position summed up",
			Description: "Commitment, paid-in (pending and completed), distributed (gross, withholding and net, by status), recallable, unfunded as reported and as computed with their difference, DPI, counts, and the document versions counted, all exact. One query of the position pivot; a document whose restatement moved its as-of date after `asOf` costs two more. Read from a secondary index, so it is eventually consistent: a write may take a moment to show. With `knownAt` (an instant), read as known then: the position's documents are those its ledger lists (every document that has ever reported it, in any version), each at its latest version committed at or before `knownAt` (a document first committed later does not exist; one whose version then is a void or does not report the position does not count), under the `asOf` rule among the versions committed by then (`asOf` defaults to `knownAt`'s date); a position no document's version then reports is 404, as an unknown one. Reads: one strongly consistent Query of the position's ledger, on which access is decided (a position the token may not read costs that Query, as an unknown one), then per document at most 2 GetItems and 2 Queries (its commit head, its instant index, the version's record and its items; two more when a restatement moved its date after `asOf`), 8 documents at a time. Rate limit: one token per document of the ledger, charged once access is decided and before any document is read. A position reported by more than 200 documents is 400 with `knownAt`. The answer's `basis` echoes what it was read on.",
			Params:      []string{"asOf", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The position's summary. A position whose documents are all dated after `asOf` answers zeros.", Body: wire.PositionSummary{}, Demo: []demoCall{{Path: "/v1/positions/POSITION_1/summary?asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "`positionId` is not a valid ID, or `asOf` is not a valid date.",
				404: "No document reports the position, or the token may not read it (another investor's, or, for an admin token, of a fund the token does not cover).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/positions/:positionId/cashflows", ID: "getPositionCashflows", Tag: "positions", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getPositionCashflows},
			Summary:     "A position's cash flows",
			Description: "The position's dated contributions and distributions in order, with cumulative totals of what was paid (`cumulativePaidIn`, `cumulativeDistributed`, `cumulativeNetCashflow`): the series an investor portal charts. Read as the summary is, and answered whole (a running total needs every flow before it). Read from a secondary index, so it is eventually consistent: a write may take a moment to show. With `knownAt` (an instant), read as known then: the position's documents are those its ledger lists (every document that has ever reported it, in any version), each at its latest version committed at or before `knownAt` (a document first committed later does not exist; one whose version then is a void or does not report the position does not count), under the `asOf` rule among the versions committed by then (`asOf` defaults to `knownAt`'s date); a position no document's version then reports is 404, as an unknown one. Reads: one strongly consistent Query of the position's ledger, on which access is decided (a position the token may not read costs that Query, as an unknown one), then per document at most 2 GetItems and 2 Queries (its commit head, its instant index, the version's record and its items; two more when a restatement moved its date after `asOf`), 8 documents at a time. Rate limit: one token per document of the ledger, charged once access is decided and before any document is read. A position reported by more than 200 documents is 400 with `knownAt`. The answer's `basis` echoes what it was read on.",
			Params:      []string{"asOf", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The position's cash flows, oldest first.", Body: wire.Cashflows{}, Demo: []demoCall{{Path: "/v1/positions/POSITION_1/cashflows?asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "`positionId` is not a valid ID, or `asOf` is not a valid date.",
				404: "No document reports the position, or the token may not read it.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/positions/:positionId/performance", ID: "getPositionPerformance", Tag: "positions", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getPositionPerformance},
			Summary:     "A position's performance",
			Description: "What the position is worth on `asOf` (today, UTC, when absent) and how it has performed: its NAV (the ending NAV of the latest capital account statement whose period ends on or before `asOf`, rolled forward by the flows dated after it, and the answer says so), paid-in, distributed, DPI, RVPI and TVPI (net), and the net IRR, with every dated flow and the terminal NAV used, so a portal can chart them and recompute each figure; and each statement reconciled with the notices of its period. The conventions are stated in the answer (`conventions`) and in docs/analytics.md. Read as the summary is: one Query of the position pivot, and two more for a document whose restatement moved its as-of date after `asOf`. Read from a secondary index, so it is eventually consistent. With `knownAt` (an instant), read as known then: the position's documents are those its ledger lists (every document that has ever reported it, in any version), each at its latest version committed at or before `knownAt` (a document first committed later does not exist; one whose version then is a void or does not report the position does not count), under the `asOf` rule among the versions committed by then (`asOf` defaults to `knownAt`'s date); a position no document's version then reports is 404, as an unknown one. Reads: one strongly consistent Query of the position's ledger, on which access is decided (a position the token may not read costs that Query, as an unknown one), then per document at most 2 GetItems and 2 Queries (its commit head, its instant index, the version's record and its items; two more when a restatement moved its date after `asOf`), 8 documents at a time. Rate limit: one token per document of the ledger, charged once access is decided and before any document is read. A position reported by more than 200 documents is 400 with `knownAt`. The answer's `basis` echoes what it was read on.",
			Params:      []string{"asOf", "knownAt"},
			Responses: []response{
				{Status: 200, Doc: "The position's performance.", Body: wire.PositionPerformance{}, Demo: []demoCall{{Path: "/v1/positions/POSITION_1/performance?asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "`positionId` is not a valid ID, or `asOf` is not a valid date.",
				404: "No document reports the position, or the token may not read it (another investor's, or, for an admin token, of a fund the token does not cover).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/positions/:positionId/summary/changes", ID: "getPositionSummaryChanges", Tag: "positions", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getPositionSummaryChanges},
			Summary:     "Why a position's summary moved",
			Description: "The document versions committed between two instants that changed the position's summary (`/v1/positions/{positionId}/summary`) on `asOf`, each with the figures it changed, before and after it, and its contribution to each money figure, exactly. DPI is a ratio: it is given before and after, without a contribution. " + changesReadDoc,
			Params:      []string{"changesFrom", "changesTo", "asOf"},
			Responses: []response{
				{Status: 200, Doc: "The versions that moved the summary, and every figure from `from` to `to`.", Body: wire.PositionFigureChanges{}, Demo: []demoCall{{Path: "/v1/positions/POSITION_1/summary/changes?from=2026-01-02T00:00:00Z&to=2026-01-02T03:10:00Z&asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "`positionId` is not a valid ID; `from` is absent; `from` or `to` is not an RFC 3339 instant, or is later than the server's clock; `from` is not before `to`; `asOf` is not a valid date; the position has been reported by more than 200 documents, or its documents committed more than 50 versions in the window.",
				404: "No document's version known in the window reports the position, or the token may not read it (another investor's, or, for an admin token, of a fund the token does not cover).",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/positions/:positionId/performance/changes", ID: "getPositionPerformanceChanges", Tag: "positions", Access: accessAnyRole,
			Handlers:    []gin.HandlerFunc{s.getPositionPerformanceChanges},
			Summary:     "Why a position's performance moved",
			Description: "The document versions committed between two instants that changed the position's performance (`/v1/positions/{positionId}/performance`) on `asOf`: its NAV, called, paid-in, outstanding, returned and distributed amounts, DPI, RVPI, TVPI and net IRR (rate and cumulative return), each version with the figures it changed, before and after it, and its contribution to each money figure, exactly. Multiples and the IRR are not additive: they are given before and after each version, without a contribution. " + changesReadDoc,
			Params:      []string{"changesFrom", "changesTo", "asOf"},
			Responses: []response{
				{Status: 200, Doc: "The versions that moved the performance, and every figure from `from` to `to`.", Body: wire.PositionFigureChanges{}, Demo: []demoCall{{Path: "/v1/positions/POSITION_1/performance/changes?from=2026-01-02T00:00:00Z&to=2026-01-02T03:10:00Z&asOf=2025-12-31"}}},
			},
			Errors: map[int]string{
				400: "As for the summary's changes.",
				404: "As for the summary's changes.",
			},
		},
		{
			Method: http.MethodGet, Path: "/v1/imports/templates/:documentKind", ID: "getImportTemplate", Tag: "imports", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.getImportTemplate},
			Summary:     "An import template",
			Description: "The template of a file of documents of this kind for `POST /v1/imports`: one row per position, a `documentId` column grouping the rows into documents, then one column per member of the document (`fundId`, `kind`, `title`, `asOf`, …), of the position and of the kind's items (line items and typed transaction lines flattened: `capitalCall.amount`, `capitalCall.transactions[1].amount`, `capitalAccount.beginningNav`), every column derived from the declared request types, never written by hand. The rows are the demo dataset's documents of that kind. As CSV (`format=csv`, the default) or XLSX (`format=xlsx`: amounts are number cells holding their exact decimal text; a second sheet, `Columns`, lists each column's header, description and example). Reads nothing from the table. Admin tokens only. See docs/imports.md.",
			Params:      []string{"format"},
			Responses: []response{
				{Status: 200, Doc: "The template, as `text/csv; charset=utf-8` or the XLSX media type, with a Content-Disposition filename (`<kind>.csv` or `<kind>.xlsx`).",
					Body: &schema{Type: "string"}, Media: mediaCSV, Headers: []string{"Content-Disposition"},
					Example: templateExample(fund.KindCapitalCallNotice), OtherMedia: map[string]any{mediaXLSX: xlsxExample}},
			},
			Errors: map[int]string{
				400: "`documentKind` is not a document kind, or `format` is neither `csv` nor `xlsx`.",
			},
		},
		{
			Method: http.MethodPost, Path: "/v1/imports", ID: "importDocuments", Tag: "imports", Access: accessAdmin,
			Handlers:    []gin.HandlerFunc{s.idempotent, s.postImport},
			Summary:     "Import documents from a CSV or XLSX file",
			Description: "Reads a file of documents laid out as the import template (`GET /v1/imports/templates/{documentKind}`; the first sheet of an XLSX, rows grouped into documents by `documentId`) and checks all of it before anything is written: each cell as PUT /v1/documents/{documentId} checks its field, with the same message, each problem placed by sheet, row, column header and letter, document and field (docs/imports.md). Every document must be of a fund the token covers (403, naming the documents and funds, before anything is written, dry run or not). With `dryRun=true` nothing is written and the answer is 200 whether or not the file has problems (a dry run is a successful check): `valid`, the problems at once (the first 1,000 by row then column; `moreProblems` counts the rest), and each document `ready` or `invalid`. Without it, a file with any problem is 422 (problem type `/problems/invalid_file`, with the same `problems`, `moreProblems` and `documents` as extension members) and nothing is written; a valid file's documents are written four at a time, each through the commit protocol as PUT writes it (all of a document or none of it), and the answer (200) reports each: `created`, `restated`, `unchanged` (the same content as its latest version: no version is added) or `refused`, with the problem PUT would have answered (a position registered to another investor: 409; a voided document: 409; an existing document of a fund the token does not cover: 404). So importing the same file twice adds no version, and an import cut short (a timeout, a lost connection) is completed by running it again: what was written answers `unchanged`, the rest is written. Each document's version records the token's subject as `createdBy`. Rate limit: the check, dry run or not, charges one token per 100 data rows, taken before the file is read for the most rows the limit admits (200 tokens for 20,000 rows) and given back for the rows the file did not hold, 429 if the bucket is empty; a write then charges one token per document (as many PUTs), taken before anything is written. The check ends within FUNDSVC_REQUEST_TIMEOUT (503 past it, naming the rows read; nothing written); the writes have FUNDSVC_WRITE_TIMEOUT. With an `Idempotency-Key`, a repeat replays the first answer and writes nothing, as on PUT; an import in which a document was refused with a 409 or a server error is not stored under the key, so repeating it runs it again (its written documents answer `unchanged`).",
			Params:      []string{"dryRun", "Idempotency-Key"},
			Body: &requestBody{Doc: "The file: Content-Type `text/csv` (UTF-8, with or without a byte order mark) or `application/vnd.openxmlformats-officedocument.spreadsheetml.sheet` (415 otherwise). Read as it arrives, never held whole (a CSV record by record, a workbook through a temporary file). At most FUNDSVC_MAX_BODY_BYTES (16 MiB by default) and the import's limits: 20,000 data rows, 500 documents (413 at the first the file reaches as it is read, naming it).",
				Media: map[string]any{mediaCSV: templateExample(fund.KindCapitalCallNotice), mediaXLSX: xlsxExample}},
			Responses: []response{
				{Status: 200, Doc: "The dry run's check (`dryRun` true: every document `ready` or `invalid`), or the import's outcome per document.", Body: wire.ImportReport{}, Headers: []string{"Idempotent-Replayed"}, Example: importReportExample()},
			},
			Errors: map[int]string{
				400: "`dryRun` is neither `true` nor `false`, `Idempotency-Key` is not 1 to 255 visible ASCII characters, the body is not a CSV or XLSX file that can be read, or a row holds more than 16,384 cells (column XFD; the detail names the row).",
				403: "An investor token (this route is for admin tokens), or a document of the file is of a fund the token does not cover (`field` `fundId`; the detail names the documents and their funds): nothing is written.",
				409: "A request with the same Idempotency-Key is still running (retry shortly).",
				413: "The file exceeds the byte, row or document limit; the detail names it.",
				415: "",
				422: "Without `dryRun`: the file has problems (problem type `/problems/invalid_file`, with `problems` and `documents` as extension members, as the dry run lists them); nothing is written. Or the Idempotency-Key was used with another request.",
			},
		},
	}
}
