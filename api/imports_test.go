package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/wire"
)

const xlsxMedia = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

// importTemplate downloads kind's template in format.
func importTemplate(t *testing.T, s *testServer, kind fund.Kind, format string) []byte {
	t.Helper()
	res := s.do(t, http.MethodGet, "/v1/imports/templates/"+string(kind)+"?format="+format, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("GET the %s %s template: %d\n%s", kind, format, res.Status, res.Body)
	}
	return res.Body
}

// postImport sends a file; query is "" or "?dryRun=true".
func postImport(t *testing.T, s *testServer, query, media string, file []byte, headers ...string) response {
	t.Helper()
	return s.do(t, http.MethodPost, "/v1/imports"+query, file, append([]string{"Content-Type", media}, headers...)...)
}

func reportOf(t *testing.T, r response) wire.ImportReport {
	t.Helper()
	var rep wire.ImportReport
	if err := json.Unmarshal(r.Body, &rep); err != nil {
		t.Fatalf("the answer is not an import report: %v\n%s", err, r.Body)
	}
	return rep
}

// latestDemo are the demo's documents of kind (every kind when ""), each at
// its latest version.
func latestDemo(kind fund.Kind) []fund.Document {
	return slices.DeleteFunc(fund.DemoLatest(), func(d fund.Document) bool { return kind != "" && d.Kind != kind })
}

// editCSV rewrites a CSV file: edit gets the header and each data row.
func editCSV(t *testing.T, file []byte, edit func(header, row []string, n int)) []byte {
	t.Helper()
	records, err := csv.NewReader(bytes.NewReader(file)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(records); i++ {
		edit(records[0], records[i], i)
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.WriteAll(records); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func setCell(header, row []string, column, value string) {
	row[slices.Index(header, column)] = value
}

func TestImportTemplatesReadBackAsTheDemo(t *testing.T) {
	s := newServer(t, false)
	for _, kind := range fund.Kinds {
		for _, format := range []string{imports.FormatCSV, imports.FormatXLSX} {
			t.Run(fmt.Sprintf("the %s template as %s reads back as the demo's documents", kind, format), func(t *testing.T) {
				res := s.do(t, http.MethodGet, "/v1/imports/templates/"+string(kind)+"?format="+format, nil)
				if res.Status != http.StatusOK {
					t.Fatalf("status %d\n%s", res.Status, res.Body)
				}
				mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
				if want := map[string]string{"csv": "text/csv", "xlsx": xlsxMedia}[format]; mt != want {
					t.Errorf("Content-Type %q, want %s", res.Header.Get("Content-Type"), want)
				}
				_, params, err := mime.ParseMediaType(res.Header.Get("Content-Disposition"))
				if err != nil || params["filename"] != string(kind)+"."+format {
					t.Errorf("Content-Disposition %q, want the filename %s.%s", res.Header.Get("Content-Disposition"), kind, format)
				}
				f, err := imports.Read(t.Context(), bytes.NewReader(res.Body), format, imports.Limits{})
				if err != nil || len(f.Errors) > 0 {
					t.Fatalf("read back: %v %v", err, f)
				}
				want := latestDemo(kind)
				if len(f.Documents) != len(want) {
					t.Fatalf("%d documents, want the demo's %d", len(f.Documents), len(want))
				}
				for i, d := range f.Documents {
					got, _ := json.Marshal(wire.RequestOf(d.Document))
					w, _ := json.Marshal(wire.RequestOf(want[i]))
					if d.ID != want[i].ID || !bytes.Equal(got, w) {
						t.Errorf("document %s reads back as\n%s\nwant %s\n%s", d.ID, got, want[i].ID, w)
					}
				}
			})
		}
	}
	for _, path := range []string{"/v1/imports/templates/capital_call?format=csv", "/v1/imports/templates/capital_call_notice?format=ods"} {
		t.Run("GET "+path+" is 400", func(t *testing.T) {
			res := s.do(t, http.MethodGet, path, nil)
			if res.Status != http.StatusBadRequest || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") {
				t.Errorf("status %d, Content-Type %q\n%s", res.Status, res.Header.Get("Content-Type"), res.Body)
			}
		})
	}
}

// TestAnImportIsReadAsItArrives sends a 32 MiB file, the demo's notices
// then blank rows, and takes the live heap as its last bytes are sent
// (the process's: the client's and the server's, a few MiB of noise):
// the route reads the file as it arrives (through a temporary file when
// an Idempotency-Key needs it whole first), so little of it is held then.
func TestAnImportIsReadAsItArrives(t *testing.T) {
	const size = 32 << 20
	env := fundtest.New(t)
	s := startAPI(t, env, func(o *api.Options) {
		o.MaxBodyBytes, o.MaxBodyBytesInFlight = 2*size, 2*size
		o.ImportLimits = imports.Limits{MaxBytes: 2 * size}
	})
	t.Setenv("TMPDIR", t.TempDir()) // the spooled body, removed when the request ends
	file := importTemplate(t, s, fund.KindCapitalCallNotice, "csv")
	blank := []byte(strings.Repeat(" ", 2000) + strings.Repeat(",", 39) + "\r\n")
	for _, key := range []string{"", "streamed-import"} {
		t.Run("Idempotency-Key "+key, func(t *testing.T) {
			probe := &fundtest.HeapProbe{R: io.MultiReader(bytes.NewReader(file), &fundtest.Repeated{Line: blank, N: size / len(blank)})}
			before := fundtest.LiveHeap()
			res := s.do(t, http.MethodPost, "/v1/imports?dryRun=true", probe, "Content-Type", "text/csv", "Idempotency-Key", key)
			if rep := reportOf(t, res); res.Status != http.StatusOK || !rep.Valid || len(rep.Documents) != len(latestDemo(fund.KindCapitalCallNotice)) {
				t.Fatalf("dry run: %d, want 200 with the demo's notices\n%s", res.Status, res.Body)
			}
			if probe.Bytes < size || probe.AtEnd == 0 {
				t.Fatalf("sent %d bytes to the end (%v), want over %d: the test proves nothing", probe.Bytes, probe.AtEnd != 0, size)
			}
			if held := probe.AtEnd - before; held > size/4 {
				t.Errorf("the server held %d KiB of a %d KiB file when its last bytes were sent; want under %d KiB", held>>10, size>>10, size/4>>10)
			}
			if left, err := os.ReadDir(os.Getenv("TMPDIR")); err != nil || len(left) > 0 {
				t.Errorf("temporary files left behind: %v %v", left, err)
			}
		})
	}
}

func TestImportDryRunAnswersEveryProblemAndWritesNothing(t *testing.T) {
	s := newServer(t, false)
	file := editCSV(t, importTemplate(t, s, fund.KindCapitalCallNotice, "csv"), func(h, row []string, n int) {
		switch n {
		case 1:
			setCell(h, row, "capitalCall.amount", "12x.50")
		case 2:
			setCell(h, row, "capitalCall.dueDate", "2025-02-30")
		}
	})
	res := postImport(t, s, "?dryRun=true", "text/csv", file)
	if res.Status != http.StatusOK {
		t.Fatalf("dry run: %d, want 200 (a dry run is a successful check)\n%s", res.Status, res.Body)
	}
	rep := reportOf(t, res)
	if rep.Valid || !rep.DryRun || len(rep.Problems) != 2 {
		t.Fatalf("valid %v, dryRun %v, %d problems; want both planted problems\n%s", rep.Valid, rep.DryRun, len(rep.Problems), res.Body)
	}
	for i, want := range []struct {
		row    int
		column string
	}{{2, "capitalCall.amount"}, {3, "capitalCall.dueDate"}} {
		p := rep.Problems[i]
		if p.Row != want.row || p.Column != want.column || p.ColumnLetter == "" || p.Message == "" || p.DocumentID == "" || !strings.Contains(p.Field, want.column) {
			t.Errorf("problem %d is %+v, want row %d column %s with its letter, message, document and field", i, p, want.row, want.column)
		}
	}
	invalid := 0
	for _, d := range rep.Documents {
		if d.Outcome == wire.ImportInvalid {
			invalid++
		} else if d.Outcome != wire.ImportReady {
			t.Errorf("document %s: outcome %q in a dry run", d.DocumentID, d.Outcome)
		}
	}
	if invalid == 0 || len(rep.Documents) != len(latestDemo(fund.KindCapitalCallNotice)) {
		t.Errorf("documents %+v: want every document, the broken ones invalid", rep.Documents)
	}

	commit := postImport(t, s, "", "text/csv", file)
	if commit.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(commit.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("commit of a file with problems: %d %q, want 422 problem+json\n%s", commit.Status, commit.Header.Get("Content-Type"), commit.Body)
	}
	var refusal struct {
		Type     string
		Problems []wire.ImportProblem
	}
	if err := json.Unmarshal(commit.Body, &refusal); err != nil || refusal.Type != "/problems/invalid_file" || !slices.Equal(refusal.Problems, rep.Problems) {
		t.Errorf("the 422 is %s, want /problems/invalid_file with the dry run's problems", commit.Body)
	}

	clean := importTemplate(t, s, fund.KindCapitalCallNotice, "csv")
	if dry := reportOf(t, postImport(t, s, "?dryRun=true", "text/csv", clean)); !dry.Valid || len(dry.Problems) != 0 || dry.Documents[0].Outcome != wire.ImportReady {
		t.Errorf("a dry run of the template: %+v", dry)
	}
	for _, d := range latestDemo(fund.KindCapitalCallNotice) {
		if r := s.do(t, http.MethodGet, "/v1/documents/"+d.ID+"/versions/latest", nil); r.Status != http.StatusNotFound {
			t.Errorf("%s after two dry runs and a refused import: %d, want 404 (nothing written)", d.ID, r.Status)
		}
	}
}

// everyPosition are the demo's positions.
var everyPosition = []string{"POSITION_1", "POSITION_2", "POSITION_3"}

// summaries reads every position's summary on a date, waiting (the pivot
// is a secondary index) until each answers 200 and none changes between
// two reads.
func summaries(t *testing.T, s *testServer) map[string]string {
	t.Helper()
	out := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range everyPosition {
		prev := ""
		for {
			r := s.do(t, http.MethodGet, "/v1/positions/"+p+"/summary?asOf=2025-12-31", nil)
			if r.Status == http.StatusOK && string(r.Body) == prev {
				out[p] = prev
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s summary: %d\n%s", p, r.Status, r.Body)
			}
			prev = string(r.Body)
			time.Sleep(20 * time.Millisecond) // polling a secondary index, with a deadline
		}
	}
	return out
}

// importedAndPutAsJSON imports the three templates (the demo's documents at
// their latest versions, as XLSX) into one fresh table and PUTs the same
// documents as JSON into another; every document must be created as
// version 1 in each. It returns both servers and the files imported.
func importedAndPutAsJSON(t *testing.T) (imported, putJSON *testServer, files map[fund.Kind][]byte) {
	t.Helper()
	imported, putJSON = newServer(t, false), newServer(t, false)
	for _, d := range latestDemo("") {
		if r := putJSON.do(t, http.MethodPut, "/v1/documents/"+d.ID, wire.RequestOf(d)); r.Status != http.StatusCreated {
			t.Fatalf("PUT %s: %d\n%s", d.ID, r.Status, r.Body)
		}
	}
	files = map[fund.Kind][]byte{}
	for _, kind := range fund.Kinds {
		files[kind] = importTemplate(t, imported, kind, "xlsx")
		res := postImport(t, imported, "", xlsxMedia, files[kind])
		if res.Status != http.StatusOK {
			t.Fatalf("import of the %s template: %d\n%s", kind, res.Status, res.Body)
		}
		for _, d := range reportOf(t, res).Documents {
			if d.Outcome != wire.ImportCreated || d.Version != 1 {
				t.Fatalf("%s: %s version %d, want created as version 1", d.DocumentID, d.Outcome, d.Version)
			}
		}
	}
	return imported, putJSON, files
}

func TestImportCommitEqualsTheSameDocumentsPutAsJSON(t *testing.T) {
	imported, putJSON, files := importedAndPutAsJSON(t)
	a, b := summaries(t, imported), summaries(t, putJSON)
	for _, p := range everyPosition {
		if a[p] != b[p] {
			t.Errorf("%s: imported\n%s\nput as JSON\n%s", p, a[p], b[p])
		}
	}

	t.Run("importing the same files again answers every document unchanged and adds no version", func(t *testing.T) {
		for _, s := range []*testServer{imported, putJSON} {
			for _, kind := range fund.Kinds {
				res := postImport(t, s, "", xlsxMedia, files[kind])
				if res.Status != http.StatusOK {
					t.Fatalf("import again: %d\n%s", res.Status, res.Body)
				}
				for _, d := range reportOf(t, res).Documents {
					if d.Outcome != wire.ImportUnchanged || d.Version != 1 {
						t.Errorf("%s: %s version %d, want unchanged at version 1", d.DocumentID, d.Outcome, d.Version)
					}
				}
			}
		}
		for _, d := range latestDemo("") {
			r := imported.do(t, http.MethodGet, "/v1/documents/"+d.ID+"/versions", nil)
			var v wire.Versions
			if err := json.Unmarshal(r.Body, &v); err != nil || r.Status != http.StatusOK || len(v.Versions) != 1 || v.Latest.Version != 1 {
				t.Errorf("%s versions: %d\n%s", d.ID, r.Status, r.Body)
			}
		}
	})

	t.Run("an import cut short is completed by running it again, the written documents unchanged", func(t *testing.T) {
		calls := latestDemo(fund.KindCapitalCallNotice)
		first := editCSV(t, importTemplate(t, imported, fund.KindCapitalCallNotice, "csv"), func(h, row []string, _ int) {
			setCell(h, row, "documentId", "RESUME_"+row[slices.Index(h, "documentId")])
			setCell(h, row, "title", "Resumed import")
		})
		// The first document alone, as if the import had stopped after it.
		var cut bytes.Buffer
		lines := strings.SplitAfter(string(first), "\n")
		for _, l := range lines {
			if !strings.HasPrefix(l, "RESUME_") || strings.HasPrefix(l, "RESUME_"+calls[0].ID+",") {
				cut.WriteString(l)
			}
		}
		if r := postImport(t, imported, "", "text/csv", cut.Bytes()); r.Status != http.StatusOK || reportOf(t, r).Documents[0].Outcome != wire.ImportCreated {
			t.Fatalf("the first part: %d\n%s", r.Status, r.Body)
		}
		rep := reportOf(t, postImport(t, imported, "", "text/csv", first))
		for i, d := range rep.Documents {
			want := wire.ImportCreated
			if i == 0 {
				want = wire.ImportUnchanged
			}
			if d.Outcome != want || d.Version != 1 {
				t.Errorf("%s: %s version %d, want %s at version 1", d.DocumentID, d.Outcome, d.Version, want)
			}
		}
	})

	t.Run("a restated document is restated, and a position of another investor is refused 409 while the others are written", func(t *testing.T) {
		file := editCSV(t, importTemplate(t, imported, fund.KindCapitalCallNotice, "csv"), func(h, row []string, n int) {
			if row[slices.Index(h, "documentId")] == latestDemo(fund.KindCapitalCallNotice)[0].ID {
				setCell(h, row, "title", "Restated by an import")
			} else if n == len(latestDemo(fund.KindCapitalCallNotice)[0].Positions)+1 {
				setCell(h, row, "documentId", "STOLEN")
				setCell(h, row, "investorId", "INVESTOR_9")
			}
		})
		rep := reportOf(t, postImport(t, imported, "", "text/csv", file))
		outcomes := map[string]wire.ImportedDocument{}
		for _, d := range rep.Documents {
			outcomes[d.DocumentID] = d
		}
		if d := outcomes[latestDemo(fund.KindCapitalCallNotice)[0].ID]; d.Outcome != wire.ImportRestated || d.Version != 2 {
			t.Errorf("the retitled document: %+v, want restated as version 2", d)
		}
		if d := outcomes["STOLEN"]; d.Outcome != wire.ImportRefused || d.Error == nil || d.Error.Status != http.StatusConflict {
			t.Errorf("the document of a position registered to another investor: %+v, want refused 409", d)
		}
		if r := imported.do(t, http.MethodGet, "/v1/documents/STOLEN/versions/latest", nil); r.Status != http.StatusNotFound {
			t.Errorf("the refused document: %d, want 404 (nothing of it written)", r.Status)
		}
	})
}

func TestImportOfAForeignFundsDocumentWritesNothing(t *testing.T) {
	s := newServer(t, false)
	file := editCSV(t, importTemplate(t, s, fund.KindDistributionNotice, "csv"), func(h, row []string, _ int) {
		if row[slices.Index(h, "documentId")] == latestDemo(fund.KindDistributionNotice)[1].ID {
			setCell(h, row, "fundId", "FUND_Z")
		}
	})
	asA := token(t, api.Principal{Subject: "admin-of-fund-a", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	for _, query := range []string{"", "?dryRun=true"} {
		res := postImport(t, s, query, "text/csv", file, "Authorization", "Bearer "+asA)
		var p problemBody
		_ = json.Unmarshal(res.Body, &p)
		foreign := latestDemo(fund.KindDistributionNotice)[1].ID
		if res.Status != http.StatusForbidden || p.Type != "/problems/forbidden" || !strings.Contains(p.Detail, foreign+" (fund FUND_Z)") {
			t.Errorf("POST /v1/imports%s with a FUND_Z document by the admin of FUND_A: %d\n%s", query, res.Status, res.Body)
		}
	}
	for _, d := range latestDemo(fund.KindDistributionNotice) {
		if r := s.do(t, http.MethodGet, "/v1/documents/"+d.ID+"/versions/latest", nil); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404: nothing of the file may be written", d.ID, r.Status)
		}
	}
	if r := postImport(t, s, "", "text/csv", importTemplate(t, s, fund.KindDistributionNotice, "csv"), "Authorization", "Bearer "+asA); r.Status != http.StatusOK {
		t.Errorf("control: the file of FUND_A only by the admin of FUND_A: %d\n%s", r.Status, r.Body)
	}
}

func TestImportBounds(t *testing.T) {
	env := fundtest.New(t)
	s := startAPI(t, env, func(o *api.Options) { o.ImportLimits = imports.Limits{MaxBytes: 4096, MaxDocuments: 2} })
	calls := importTemplate(t, s, fund.KindCapitalCallNotice, "csv")            // three documents
	big := append(append(bytes.Repeat([]byte(" "), 4096), "\r\n"...), calls...) // the file is read as it comes: the byte limit first
	for _, c := range []struct {
		name, media string
		file        []byte
		status      int
		detail      string
	}{
		{"a file over the byte limit is 413", "text/csv", big, http.StatusRequestEntityTooLarge, "more bytes than the import limit of 4096"},
		{"a workbook over the byte limit is 413", xlsxMedia, importTemplate(t, s, fund.KindCapitalCallNotice, "xlsx"), http.StatusRequestEntityTooLarge, "more bytes than the import limit of 4096"},
		{"a file over the document limit is 413", "text/csv", calls, http.StatusRequestEntityTooLarge, "more documents than the import limit of 2"},
		{"a JSON body is 415", "application/json", calls, http.StatusUnsupportedMediaType, "text/csv"},
		{"an XLSX that is not a workbook is 400", xlsxMedia, calls, http.StatusBadRequest, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := postImport(t, s, "", c.media, c.file)
			var p problemBody
			_ = json.Unmarshal(res.Body, &p)
			if res.Status != c.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/problem+json") || !strings.Contains(p.Detail, c.detail) {
				t.Errorf("status %d, want %d with %q\n%s", res.Status, c.status, c.detail, res.Body)
			}
		})
	}
	for _, d := range latestDemo(fund.KindCapitalCallNotice) {
		if r := s.do(t, http.MethodGet, "/v1/documents/"+d.ID+"/versions/latest", nil); r.Status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404 (nothing written)", d.ID, r.Status)
		}
	}
}

func TestImportIdempotencyKeyReplaysTheReport(t *testing.T) {
	s := newServer(t, false)
	file := importTemplate(t, s, fund.KindCapitalAccountStatement, "csv")
	first := postImport(t, s, "", "text/csv", file, "Idempotency-Key", "import-key-1")
	again := postImport(t, s, "", "text/csv", file, "Idempotency-Key", "import-key-1")
	if first.Status != http.StatusOK || again.Status != http.StatusOK || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(first.Body, again.Body) {
		t.Fatalf("first %d, repeat %d (replayed %q)\n%s\n%s", first.Status, again.Status, again.Header.Get("Idempotent-Replayed"), first.Body, again.Body)
	}
	if d := reportOf(t, again).Documents[0]; d.Outcome != wire.ImportCreated {
		t.Errorf("the replayed report says %s, want the first answer's created", d.Outcome)
	}
	other := postImport(t, s, "?dryRun=true", "text/csv", file, "Idempotency-Key", "import-key-1")
	if other.Status != http.StatusUnprocessableEntity {
		t.Errorf("the key with another request: %d, want 422\n%s", other.Status, other.Body)
	}
}
