package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/wire"
	"github.com/xuri/excelize/v2"
)

// The import of a quarter's statements from a spreadsheet
// (POST /v1/imports): a file of -import-rows capital account statement rows
// in -import-documents documents, as CSV and as XLSX. Each is POSTed with
// dryRun=true and then for real to the service the bench runs, and timed.
// The service's peak resident memory (VmHWM of /proc/<pid>/status, which
// only grows) is read before the file is sent and after each answer; the
// peak is set back to the resident size before each file (resetPeakRSS).
// The service builds every document's rows before it writes any, so the
// peak is what an import costs.

// importName is the measurement's name, which -only selects.
const importName = "import: a quarter's statements from a spreadsheet"

// importRun is one file's measurement.
type importRun struct {
	format                  string
	rows, documents, bytes  int
	dryRun, commit          time.Duration
	hwmBefore, hwmDry, hwmC int64 // kB
	outcomes                string
}

// statementFile is a capital account statement file of rows rows in
// documents documents of fund fundID, built from the statement template's
// first row (so every column the template has is filled as the demo fills
// it, and every rule holds): each row another position and investor.
func statementFile(format, fundID, tag string, rows, documents int) ([]byte, error) {
	var tpl bytes.Buffer
	if err := imports.WriteTemplate(&tpl, fund.KindCapitalAccountStatement, imports.FormatCSV); err != nil {
		return nil, err
	}
	records, err := csv.NewReader(&tpl).ReadAll()
	if err != nil || len(records) < 2 {
		return nil, fmt.Errorf("the statement template: %d records, %v", len(records), err)
	}
	header, example := records[0], records[1]
	col := func(name string) int { return slices.Index(header, name) }
	docCol, fundCol, posCol, invCol := col(imports.DocumentIDHeader), col("fundId"), col("positionId"), col("investorId")
	if docCol < 0 || fundCol < 0 || posCol < 0 || invCol < 0 {
		return nil, fmt.Errorf("the statement template lacks an ID column: %v", header)
	}
	out := [][]string{header}
	for i := range rows {
		row := slices.Clone(example)
		row[docCol] = fmt.Sprintf("IMPORT_%s_%s_%03d", tag, format, i%documents)
		row[fundCol] = fundID
		row[posCol] = fmt.Sprintf("IMPORT_%s_%s_P%05d", tag, format, i)
		row[invCol] = fmt.Sprintf("IMPORT_%s_INV%05d", tag, i)
		out = append(out, row)
	}
	var b bytes.Buffer
	if format == imports.FormatCSV {
		w := csv.NewWriter(&b)
		if err := w.WriteAll(out); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	// XLSX as a spreadsheet holds it: amounts as number cells (their exact
	// decimal text), IDs, dates and words as text.
	number := make([]bool, len(header))
	for i, v := range example {
		_, err := fund.ParseMoney(v)
		number[i] = err == nil && i != docCol && i != posCol && i != invCol
	}
	f := excelize.NewFile()
	defer f.Close()
	sheet := f.GetSheetName(0)
	for r, row := range out {
		for c, v := range row {
			if v == "" {
				continue
			}
			cell, err := excelize.CoordinatesToCellName(c+1, r+1)
			if err != nil {
				return nil, err
			}
			if r > 0 && number[c] {
				err = f.SetCellDefault(sheet, cell, v)
			} else {
				err = f.SetCellStr(sheet, cell, v)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	if _, err := f.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// measureImport builds each format's file and POSTs it, dry run first.
func measureImport(ctx context.Context, svc *service, rows, documents int) ([]importRun, error) {
	tag := strconv.FormatInt(time.Now().Unix(), 36)
	media := map[string]string{imports.FormatCSV: "text/csv", imports.FormatXLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
	var runs []importRun
	for _, format := range []string{imports.FormatCSV, imports.FormatXLSX} {
		file, err := statementFile(format, "IMPORT_"+tag, tag, rows, documents)
		if err != nil {
			return nil, fmt.Errorf("build the %s file: %w", format, err)
		}
		run := importRun{format: format, rows: rows, documents: documents, bytes: len(file)}
		// Each file's own peak: the earlier file's would hide it.
		resetPeakRSS(svc)
		if run.hwmBefore, err = peakRSS(svc); err != nil {
			return nil, err
		}
		var rep wire.ImportReport
		if run.dryRun, rep, err = postImportFile(ctx, svc, "?dryRun=true", media[format], file); err != nil {
			return nil, err
		}
		if !rep.Valid || len(rep.Documents) != documents {
			return nil, fmt.Errorf("dry run of the %s file: valid %v, %d documents, %d problems (first: %+v)", format, rep.Valid, len(rep.Documents), len(rep.Problems), first(rep.Problems))
		}
		if run.hwmDry, err = peakRSS(svc); err != nil {
			return nil, err
		}
		if run.commit, rep, err = postImportFile(ctx, svc, "", media[format], file); err != nil {
			return nil, err
		}
		if run.hwmC, err = peakRSS(svc); err != nil {
			return nil, err
		}
		counts := map[string]int{}
		for _, d := range rep.Documents {
			counts[string(d.Outcome)]++
		}
		if counts[string(wire.ImportCreated)] != documents {
			return nil, fmt.Errorf("import of the %s file: outcomes %v, want %d created", format, counts, documents)
		}
		run.outcomes = fmt.Sprintf("%d created", documents)
		fmt.Printf("  %s: %d rows, %d bytes: dry run %s, commit %s, peak RSS %d → %d → %d kB\n", format, rows, len(file),
			run.dryRun.Round(time.Millisecond), run.commit.Round(time.Millisecond), run.hwmBefore, run.hwmDry, run.hwmC)
		runs = append(runs, run)
	}
	return runs, nil
}

func first(ps []wire.ImportProblem) any {
	if len(ps) == 0 {
		return nil
	}
	return ps[0]
}

// postImportFile POSTs file to /v1/imports with query and times the
// exchange, from the request's start to its answer read whole.
func postImportFile(ctx context.Context, svc *service, query, media string, file []byte) (time.Duration, wire.ImportReport, error) {
	var rep wire.ImportReport
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, svc.base+"/v1/imports"+query, bytes.NewReader(file))
	if err != nil {
		return 0, rep, err
	}
	req.Header.Set("Authorization", "Bearer "+svc.token)
	req.Header.Set("Content-Type", media)
	start := time.Now()
	resp, err := svc.client.Do(req)
	if err != nil {
		return 0, rep, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, rep, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, rep, fmt.Errorf("POST /v1/imports%s (%s): %d: %s", query, media, resp.StatusCode, truncate(body, 500))
	}
	return took, rep, json.Unmarshal(body, &rep)
}

// peakRSS is the service process's peak resident set size so far, in kB
// (VmHWM of /proc/<pid>/status, Linux).
func peakRSS(svc *service) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", svc.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("the service's peak memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", svc.cmd.Process.Pid)
}

// resetPeakRSS sets the service's VmHWM back to its current resident size
// ("5" into /proc/<pid>/clear_refs, Linux 4.0 and later); where that is
// refused, the peak read is the process's peak so far, which "before" shows.
func resetPeakRSS(svc *service) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", svc.cmd.Process.Pid), []byte("5"), 0)
}

// formatImport is the measurement's table, in Markdown.
func formatImport(o options, runs []importRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", importName)
	fmt.Fprintf(&b, "%d capital account statement rows in %d documents (the template's columns), POSTed once with dryRun=true and once for real; "+
		"the service's peak resident memory (VmHWM, set back to the resident size before each file) before the file and after each answer.\n\n", o.importRows, o.importDocs)
	b.WriteString("| file | bytes | dry run | commit | outcome | peak RSS before | after the dry run | after the commit |\n|---|---:|---:|---:|---|---:|---:|---:|\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %.1f MiB | %.1f MiB | %.1f MiB |\n", r.format, r.bytes,
			fmtMS(r.dryRun), fmtMS(r.commit), r.outcomes, float64(r.hwmBefore)/1024, float64(r.hwmDry)/1024, float64(r.hwmC)/1024)
	}
	return b.String()
}

func fmtMS(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}
