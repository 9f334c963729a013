package api

import (
	"github.com/fundsvc/fundsvc/wire"

	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
	"github.com/gin-gonic/gin"
)

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 255

// idempotent makes a write safe to repeat. With an Idempotency-Key header,
// the first response (status, headers that matter, body) is stored in the
// table per principal, for a day; a repeat of the same request gets it byte
// for byte and writes nothing; the same key with another request is 422;
// while the first is still running, 409. A request that failed on the
// server's side (5xx), met a conflict (409), panicked, or is an import with
// a document refused for either reason releases its key, so repeating it
// runs it again; one whose process died keeps the key for its
// lease, then may be repeated. A request that outlives its lease (stalled)
// and whose key a repeat took over stores nothing: the repeat's answer is
// the key's.
func (s *server) idempotent(c *gin.Context) {
	key := c.GetHeader("Idempotency-Key")
	if key == "" {
		c.Next()
		return
	}
	if !validIdempotencyKey(key) {
		writeError(c, fund.Invalid("Idempotency-Key", "must be 1 to %d printable ASCII characters, such as a UUID", maxIdempotencyKey))
		return
	}
	h := sha256.New()
	for _, part := range []string{c.Request.Method, c.Request.URL.Path, c.GetHeader("Content-Type"), c.GetHeader("If-Match")} {
		h.Write([]byte(part + "\n"))
	}
	if q := c.Request.URL.RawQuery; q != "" { // POST /v1/imports?dryRun=true is another request than without
		h.Write([]byte("?" + q + "\n"))
	}
	body, err := spoolBody(io.TeeReader(http.MaxBytesReader(c.Writer, c.Request.Body, s.maxBody), h))
	if err != nil {
		writeError(c, wire.JSONError(err))
		return
	}
	defer body.Close()
	c.Request.Body = body
	hash := hex.EncodeToString(h.Sum(nil))

	ctx := c.Request.Context()
	scope := principal(c).scope()
	owner, replay, err := s.docs.BeginIdempotent(ctx, scope, key, hash, time.Now(), s.idemLease, s.idemTTL)
	if err != nil {
		writeError(c, err)
		return
	}
	if replay != nil {
		for k, v := range replay.Header {
			c.Header(k, v)
		}
		c.Header("Idempotent-Replayed", "true")
		c.Status(replay.Status)
		_, _ = c.Writer.Write(replay.Body)
		c.Abort()
		return
	}

	// The write records which request made it, so that a repeat after a lost
	// answer returns that version instead of adding one.
	rctx := context.WithValue(c.Request.Context(), keyRequestIdentity, store.IdempotentRequest(scope, key))
	c.Request = c.Request.WithContext(context.WithValue(rctx, keyRequestOwner, owner))
	rec := &recorder{ResponseWriter: c.Writer}
	c.Writer = rec
	// The request's context may be over; the record must still be settled.
	settle := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	}
	defer func() {
		// A panicking handler would otherwise hold the key until its lease
		// ends; release it, then let gin's recovery answer 500.
		if v := recover(); v != nil {
			sctx, cancel := settle()
			defer cancel()
			if err := s.docs.AbandonIdempotent(sctx, scope, key, owner); err != nil {
				logger(c).Error("idempotency key of a panicking request not released; it stays locked until its lease ends", slog.String("error", err.Error()))
			}
			logger(c).Error("panic in an idempotent request; its key is released", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			panic(v)
		}
	}()
	c.Next()

	sctx, cancel := settle()
	defer cancel()
	status := rec.Status()
	// A server error or a conflict may pass; the repeat should run again.
	if status >= 500 || status == http.StatusConflict || c.GetBool(keyReleaseIdempotencyKey) {
		err = s.docs.AbandonIdempotent(sctx, scope, key, owner)
	} else {
		header := map[string]string{}
		for _, k := range []string{"Content-Type", "Cache-Control", "ETag", "Location"} {
			if v := rec.Header().Get(k); v != "" {
				header[k] = v
			}
		}
		err = s.docs.FinishIdempotent(sctx, scope, key, owner, store.Replay{Status: status, Header: header, Body: rec.body.Bytes()}, time.Now(), s.idemTTL)
	}
	switch {
	case fund.ErrorCode(err) == fund.ECONFLICT:
		// This request outlived its lease and a repeat took the key over; the
		// repeat's answer is the one replayed.
		logger(c).Warn("idempotency key taken over by a repeat; this request's answer was not stored", slog.String("error", err.Error()))
	case err != nil:
		logger(c).Error("idempotency record not settled; the key stays locked until its lease ends", slog.String("error", err.Error()))
	}
}

// spoolInMemory is the largest body spoolBody holds in memory.
const spoolInMemory = 1 << 20

// spoolBody reads r to its end, so that the request can be hashed before
// it runs, and returns its bytes to read again: from memory up to
// spoolInMemory, from a temporary file beyond (an import's file), which
// Close removes. Its own rather than a library's: it is a dozen lines over
// os.CreateTemp.
func spoolBody(r io.Reader) (io.ReadCloser, error) {
	head, err := io.ReadAll(io.LimitReader(r, spoolInMemory+1))
	if err != nil {
		return nil, err
	}
	if len(head) <= spoolInMemory {
		return io.NopCloser(bytes.NewReader(head)), nil
	}
	f, err := os.CreateTemp("", "fundsvc-body-*")
	if err != nil {
		return nil, err
	}
	spooled := &spooledBody{f}
	if _, err = f.Write(head); err == nil {
		if _, err = io.Copy(f, r); err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
	}
	if err != nil {
		spooled.Close()
		return nil, err
	}
	return spooled, nil
}

// spooledBody is a body spooled to a temporary file.
type spooledBody struct{ *os.File }

// Close closes and removes the file.
func (b *spooledBody) Close() error {
	return errors.Join(b.File.Close(), os.Remove(b.Name()))
}

func validIdempotencyKey(k string) bool {
	if len(k) > maxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// recorder keeps a copy of the response body as it is written.
type recorder struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) WriteString(s string) (int, error) {
	r.body.WriteString(s)
	return r.ResponseWriter.WriteString(s)
}
