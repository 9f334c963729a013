package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/gin-gonic/gin"
)

// Imports: a quarter's notices and statements from a CSV or
// XLSX file (package imports reads it), checked whole before anything is
// written, then written one document at a time through the commit protocol,
// as PUT /v1/documents/{documentId} writes each.

// The media types of an import's file and of its templates.
const (
	mediaCSV  = "text/csv"
	mediaXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

// codeImportInvalid is the problem code of a file with problems sent
// without dryRun: 422, nothing written, the problems in the body.
const codeImportInvalid = "invalid_file"

func init() { statusOf[codeImportInvalid] = http.StatusUnprocessableEntity }

// keyReleaseIdempotencyKey, set on the gin context, tells idempotent not to
// store the answer but to release its key, as it does for a 409 or a 5xx:
// an import whose documents were refused for a conflict or on the server's
// side is answered 200 with the report, and repeating it must run again.
const keyReleaseIdempotencyKey = "fundsvc.releaseIdempotencyKey"

// importLimits are the limits of an imported file: Options.ImportLimits,
// with the byte limit never above the server's body limit (the bound of
// the bodies in flight and of what an Idempotency-Key holds).
func (s *server) importLimits() imports.Limits {
	l := s.opts.ImportLimits
	if l.MaxBytes <= 0 || (s.maxBody > 0 && l.MaxBytes > s.maxBody) {
		l.MaxBytes = s.maxBody
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = imports.DefaultLimits.MaxBytes
	}
	if l.MaxPositions <= 0 {
		l.MaxPositions = s.maxPositions
	}
	if l.MaxRows <= 0 {
		l.MaxRows = imports.DefaultLimits.MaxRows // the check's charge is taken for it
	}
	return l
}

// getImportTemplate answers a document kind's import template.
func (s *server) getImportTemplate(c *gin.Context) {
	in := s.params(c)
	kind := in.kindAt("documentKind")
	format := in.oneOf("format")
	if !in.ok() {
		return
	}
	media := map[string]string{imports.FormatCSV: mediaCSV + "; charset=utf-8", imports.FormatXLSX: mediaXLSX}[format]
	var b bytes.Buffer
	if err := imports.WriteTemplate(&b, kind, format); err != nil {
		writeError(c, err)
		return
	}
	c.Header("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": string(kind) + "." + format}))
	c.Data(http.StatusOK, media, b.Bytes())
}

// importFormat is the format of the file the request's Content-Type names.
func importFormat(c *gin.Context) (string, error) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	switch {
	case err == nil && mt == mediaCSV:
		return imports.FormatCSV, nil
	case err == nil && mt == mediaXLSX:
		return imports.FormatXLSX, nil
	}
	return "", &fund.Error{Code: codeUnsupported, Field: "Content-Type", Message: "send the file as " + mediaCSV + " or " + mediaXLSX}
}

// importRowsPerToken is how many rows of a file its check costs one
// rate-limit token: a document's PUT costs one, and checking 100 rows
// costs about what it does.
const importRowsPerToken = 100

// importRowTokens is the charge of checking rows rows: one token per
// importRowsPerToken, at least one.
func importRowTokens(rows int) int {
	return max(1, (rows+importRowsPerToken-1)/importRowsPerToken)
}

// postImport checks a file of documents and, unless dryRun, writes each.
func (s *server) postImport(c *gin.Context) {
	in := s.params(c)
	dryRun := in.oneOf("dryRun") == "true"
	if !in.ok() {
		return
	}
	format, err := importFormat(c)
	if err != nil {
		writeError(c, err)
		return
	}
	lim := s.importLimits()
	p := principal(c)

	// The check, dry run or not, is charged by its rows before it reads:
	// the rows the limit admits (the request's own token paid for the
	// first importRowsPerToken), and once the file is read, those it did
	// not hold are given back.
	held := 0
	if s.limiter != nil {
		if held = importRowTokens(lim.MaxRows) - 1; held > 0 {
			if wait := s.limiter.take(p.scope(), held); wait > 0 {
				writeChargeError(c, &rateLimitedError{wait: wait})
				return
			}
		}
	}
	// The check reads and writes nothing, so the request timeout bounds
	// it, as it bounds a read; the writes after it have the write timeout.
	ctx := c.Request.Context()
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	file, err := imports.Read(ctx, c.Request.Body, format, lim)
	if s.limiter != nil {
		s.limiter.refund(p.scope(), held-(importRowTokens(file.Rows)-1))
	}
	var le *imports.LimitError
	switch {
	case errors.As(err, &le):
		writeError(c, &fund.Error{Code: codeTooLarge, Field: "body", Message: fmt.Sprintf("the file holds more %s than the import limit of %d", le.Limit, le.Max)})
		return
	case err != nil && ctx.Err() != nil && !errors.As(err, new(*fund.Error)):
		within := "the request's deadline"
		if s.timeout > 0 {
			within = fmt.Sprintf("the request timeout (FUNDSVC_REQUEST_TIMEOUT, %s)", s.timeout)
		}
		writeError(c, &fund.Error{Code: fund.EUNAVAILABLE, Field: "body", Message: fmt.Sprintf(
			"the file's check did not end within %s: it had read %d data rows; nothing was written", within, file.Rows)})
		return
	case err != nil:
		writeError(c, err)
		return
	}

	// Authorization before anything is written: every document's fund.
	var foreign []string
	for _, d := range file.Documents {
		if d.Problems == 0 && !viewer(c).Administers(d.Document.FundID) {
			foreign = append(foreign, fmt.Sprintf("%s (fund %s)", d.ID, d.Document.FundID))
		}
	}
	if len(foreign) > 0 {
		writeError(c, &fund.Error{Code: fund.EFORBIDDEN, Field: "fundId",
			Message: "your token does not cover the fund of documents " + strings.Join(foreign, ", ") + "; nothing was written"})
		return
	}

	report := reportOf(file, format, dryRun)
	if dryRun {
		c.JSON(http.StatusOK, report)
		return
	}
	if !report.Valid {
		c.Header("Content-Type", "application/problem+json")
		c.Header("Cache-Control", "no-store")
		c.AbortWithStatusJSON(http.StatusUnprocessableEntity, importRefusal{
			Problem: Problem{Type: "/problems/" + codeImportInvalid, Title: http.StatusText(http.StatusUnprocessableEntity),
				Status: http.StatusUnprocessableEntity, Detail: fmt.Sprintf("the file has %d problems; nothing was written (see problems)", len(report.Problems)+report.MoreProblems),
				Instance: c.Request.URL.Path, Field: "body", RequestID: requestID(c)},
			ImportProblems: report.ImportProblems, Documents: report.Documents})
		return
	}
	// Charged as a PUT per document, before anything is written: the
	// request paid for the first when its token was verified.
	if s.limiter != nil && len(file.Documents) > 1 {
		if wait := s.limiter.take(p.scope(), len(file.Documents)-1); wait > 0 {
			writeChargeError(c, &rateLimitedError{wait: wait})
			return
		}
	}
	s.commitImport(c, file, &report)
	c.JSON(http.StatusOK, report)
}

// reportOf is the report of file before anything is written: its problems,
// and each document ready or invalid.
func reportOf(file *imports.File, format string, dryRun bool) wire.ImportReport {
	report := wire.ImportReport{DryRun: dryRun, Format: format, Sheet: file.Sheet, Valid: len(file.Errors) == 0,
		ImportProblems: wire.ImportProblems{Problems: make([]wire.ImportProblem, 0, len(file.Errors)), MoreProblems: file.MoreProblems},
		Documents:      make([]wire.ImportedDocument, 0, len(file.Documents))}
	for _, e := range file.Errors {
		report.Problems = append(report.Problems, wire.ImportProblem(e))
	}
	for _, d := range file.Documents {
		out := wire.ImportedDocument{DocumentID: d.ID, Rows: d.Rows, Positions: len(d.Rows), Outcome: wire.ImportReady}
		if d.Problems > 0 {
			out.Outcome = wire.ImportInvalid
		} else {
			out.FundID, out.Kind = d.Document.FundID, string(d.Document.Kind)
		}
		report.Documents = append(report.Documents, out)
	}
	return report
}

// importRefusal is the 422 answer of a file with problems: a problem with
// the report's problems (and how many more) and documents as extension
// members (RFC 9457).
type importRefusal struct {
	Problem
	wire.ImportProblems
	Documents []wire.ImportedDocument `json:"documents"`
}

// commitImport writes the file's documents (imports.Commit), each all or
// nothing through the commit protocol, and sets each one's outcome.
func (s *server) commitImport(c *gin.Context, file *imports.File, report *wire.ImportReport) {
	ctx := c.Request.Context()
	p := principal(c)
	docs := s.docs.As(latest(c))
	requestID, _ := ctx.Value(keyRequestIdentity).(string)
	requestOwner, _ := ctx.Value(keyRequestOwner).(string)
	release := false
	write := func(ctx context.Context, doc fund.Document) (int, bool, error) {
		doc.CreatedBy, doc.RequestID, doc.RequestOwner = p.Subject, requestID, requestOwner
		saved, unchanged, err := docs.WriteUnlessUnchanged(ctx, doc)
		return saved.Document.Version, unchanged, err
	}
	// The file was checked whole before (reportOf), so Commit has no
	// problems to refuse it for.
	_, _ = imports.Commit(ctx, file, write, func(i int, o imports.Outcome) {
		out := &report.Documents[i]
		out.Outcome, out.Version = o.Result, o.Version
		if o.Err != nil {
			out.Error = s.importError(c, o.Err)
			release = release || out.Error.Status >= 500 || out.Error.Status == http.StatusConflict
		}
	})
	if release {
		c.Set(keyReleaseIdempotencyKey, true)
	}
}

// importError is err as PUT would answer it (problemOf), without the
// instance and request ID, which are the import's own.
func (s *server) importError(c *gin.Context, err error) *wire.Problem {
	p := problemOf(c, err)
	if p.Status == http.StatusServiceUnavailable && !errors.As(err, new(*fund.Error)) {
		p.Detail += "; run the import again to write the rest" // the request's context ended
	}
	p.Instance, p.RequestID = "", ""
	return &p
}

// templateExample is kind's CSV template, the example of the routes' CSV
// bodies.
func templateExample(kind fund.Kind) string {
	var b bytes.Buffer
	if err := imports.WriteTemplate(&b, kind, imports.FormatCSV); err != nil {
		panic(fmt.Sprintf("api: the %s template: %v", kind, err))
	}
	return b.String()
}

// xlsxExample stands for a workbook in the OpenAPI document, which cannot
// hold its bytes.
const xlsxExample = "(binary: an XLSX workbook whose first sheet holds the same header and rows as the CSV example)"

// importReportExample is the dry run's answer for the capital call
// notices' template, as the route builds it.
func importReportExample() wire.ImportReport {
	file, err := imports.Read(context.Background(), strings.NewReader(templateExample(fund.KindCapitalCallNotice)), imports.FormatCSV, imports.Limits{})
	if err != nil {
		panic(fmt.Sprintf("api: the import example: %v", err))
	}
	return reportOf(file, imports.FormatCSV, true)
}
