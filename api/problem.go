package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	fund.EINVALID:              http.StatusBadRequest,
	fund.ENOTFOUND:             http.StatusNotFound,
	fund.ECONFLICT:             http.StatusConflict,
	fund.EPRECONDITION:         http.StatusPreconditionFailed,
	fund.EPRECONDITIONREQUIRED: http.StatusPreconditionRequired,
	fund.EUNAUTHORIZED:         http.StatusUnauthorized,
	fund.EFORBIDDEN:            http.StatusForbidden,
	fund.EIDEMPOTENCY:          http.StatusUnprocessableEntity,
	fund.EUNAVAILABLE:          http.StatusServiceUnavailable,
	fund.EINTERNAL:             http.StatusInternalServerError,
	codeTooLarge:               http.StatusRequestEntityTooLarge,
	codeUnsupported:            http.StatusUnsupportedMediaType,
	codeNoRoute:                http.StatusNotFound,
	codeNoMethod:               http.StatusMethodNotAllowed,
}

// Codes that only the HTTP layer produces.
const (
	codeTooLarge    = wire.CodeTooLarge
	codeUnsupported = "unsupported_media_type"
	codeNoRoute     = "no_route"
	codeNoMethod    = "method_not_allowed"
)

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type      string `json:"type" doc:"'/problems/<code>', one per error code: 'invalid' (400), 'unauthorized' (401), 'forbidden' (403), 'not_found' (404), 'no_route' (404), 'method_not_allowed' (405), 'conflict' (409), 'precondition_failed' (412), 'too_large' (413), 'unsupported_media_type' (415), 'idempotency_key_reused' (422), 'invalid_file' (422: an import's file has problems, listed in 'problems'), 'rate_limited' (429), 'internal' (500), 'unavailable' (503)."`
	Title     string `json:"title" doc:"The HTTP reason phrase of 'status'."`
	Status    int    `json:"status" doc:"The HTTP status code."`
	Detail    string `json:"detail,omitempty" doc:"What went wrong, safe to show; internal errors say only that they were logged."`
	Instance  string `json:"instance,omitempty" doc:"The request path."`
	Field     string `json:"field,omitempty" doc:"The input to blame, when one is: a body field such as 'positions[3].capitalCall.amount' (or 'fundId' when the token does not cover that fund), a parameter such as 'limit' or 'documentId', a header such as 'If-Match', 'Content-Type' or 'Idempotency-Key', or 'body'."`
	RequestID string `json:"requestId,omitempty" doc:"The request's ID, also in the X-Request-ID header; quote it when reporting a problem."`
}

// writeError answers err as application/problem+json. Errors without a code
// are internal: logged with their detail, answered with a plain message. An
// unavailable store (the store translates DynamoDB's throttling) is logged
// with what lies underneath too.
func writeError(c *gin.Context, err error) {
	var e *fund.Error
	if !errors.As(err, &e) {
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			e = &fund.Error{Code: fund.EUNAVAILABLE, Message: "the request timed out"}
		default:
			e = &fund.Error{Code: fund.EINTERNAL, Message: "an internal error occurred; it has been logged"}
		}
		logger(c).Error("request failed", slog.String("error", err.Error()))
	} else if e.Code == fund.EUNAVAILABLE && err != error(e) {
		logger(c).Error("request failed", slog.String("error", err.Error()))
	}
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	p := Problem{
		Type: "/problems/" + e.Code, Title: http.StatusText(status), Status: status,
		Detail: e.Message, Instance: c.Request.URL.Path, Field: e.Field, RequestID: requestID(c),
	}
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "1")
	}
	c.Header("Content-Type", "application/problem+json")
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(status, p) // keeps the Content-Type set above
}
