package wire

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type      string `json:"type" doc:"'/problems/<code>', one per error code: 'invalid' (400), 'unauthorized' (401), 'forbidden' (403), 'not_found' (404), 'no_route' (404), 'method_not_allowed' (405), 'conflict' (409), 'limit_exceeded' (409: a count the server bounds is at its limit, named in 'detail'), 'precondition_failed' (412), 'too_large' (413), 'unsupported_media_type' (415), 'idempotency_key_reused' (422), 'invalid_file' (422: an import's file has problems, listed in 'problems'), 'rate_limited' (429), 'internal' (500), 'unavailable' (503)."`
	Title     string `json:"title" doc:"The HTTP reason phrase of 'status'."`
	Status    int    `json:"status" doc:"The HTTP status code."`
	Detail    string `json:"detail,omitempty" doc:"What went wrong, safe to show; internal errors say only that they were logged."`
	Instance  string `json:"instance,omitempty" doc:"The request path."`
	Field     string `json:"field,omitempty" doc:"The input to blame, when one is: a body field such as 'positions[3].capitalCall.amount' (or 'fundId' when the token does not cover that fund), a parameter such as 'limit' or 'documentId', a header such as 'If-Match', 'Content-Type' or 'Idempotency-Key', or 'body'."`
	RequestID string `json:"requestId,omitempty" doc:"The request's ID, also in the X-Request-ID header; quote it when reporting a problem."`
}
