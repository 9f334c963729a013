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
	fund.ELIMIT:                http.StatusConflict,
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

// Problem is the problem+json body (wire.Problem), named here as the api
// writes it everywhere.
type Problem = wire.Problem

// writeError answers err as application/problem+json (problemOf).
func writeError(c *gin.Context, err error) {
	p := problemOf(c, err)
	if p.Status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "1")
	}
	c.Header("Content-Type", "application/problem+json")
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(p.Status, p) // keeps the Content-Type set above
}

// problemOf is err as the problem answering it. Errors without a code are
// internal: logged with their detail, answered with a plain message (or
// as unavailable when the request's context ended). An unavailable store
// (the store translates DynamoDB's throttling) is logged with what lies
// underneath too.
func problemOf(c *gin.Context, err error) Problem {
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
	return Problem{
		Type: "/problems/" + e.Code, Title: http.StatusText(status), Status: status,
		Detail: e.Message, Instance: c.Request.URL.Path, Field: e.Field, RequestID: requestID(c),
	}
}
