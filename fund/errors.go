package fund

import (
	"errors"
	"fmt"
)

// Error codes: the whole vocabulary of failures a caller can act on. The api
// package maps each to one HTTP status; every other error is internal.
const (
	EINVALID              = "invalid"                // the request is malformed or breaks a rule
	ENOTFOUND             = "not_found"              // no such resource (or not visible to the caller)
	ECONFLICT             = "conflict"               // the request conflicts with the stored state
	EPRECONDITION         = "precondition_failed"    // If-Match named a version that is not current
	EPRECONDITIONREQUIRED = "precondition_required"  // a write that must be conditional came without If-Match
	EUNAUTHORIZED         = "unauthorized"           // no valid bearer token
	EFORBIDDEN            = "forbidden"              // the token's role may not use this route
	EIDEMPOTENCY          = "idempotency_key_reused" // an Idempotency-Key was sent again with another request
	ELIMIT                = "limit_exceeded"         // a count the server bounds (named in the message) is at its limit
	EUNAVAILABLE          = "unavailable"            // the store is throttling or unreachable; retry later
	EINTERNAL             = "internal"
)

// Error is a failure with a code from the vocabulary above and a message that
// is safe to show to the client.
type Error struct {
	Code    string
	Message string
	// Field names the offending input, when one field is to blame.
	Field string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error blaming field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or EINTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or
// err's text.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
