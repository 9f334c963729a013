package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/imports"
	"github.com/fundsvc/fundsvc/store"
	"github.com/schollz/progressbar/v3"
)

// importFlags are the own flags of fundsvc import and import template.
type importFlags struct {
	dryRun    bool
	format    string
	createdBy string
	progress  string
}

const importDoc = "Works on the table directly with the operator's AWS credentials, as seed does: no token, every fund. " +
	"Checks FILE whole first (imports.Read streams it: the format from its extension, .csv or .xlsx, or --format); with any problem it prints " +
	"every one (sheet, row, column letter, header, message) and exits 1 having written nothing. Otherwise it commits each document " +
	"all or nothing, four at a time, reported in file order (created, restated, or unchanged when its content is its latest version's: run again after an " +
	"interruption, it writes only the rest), prints a summary with each refusal, and exits 1 if any document was refused. " +
	"Progress: a bar on a terminal; otherwise one JSON log line per document on standard error."

func registerImport(fs *flag.FlagSet, f *flags) {
	fs.BoolVar(&f.imports.dryRun, "dry-run", false, "check the file and print its problems; write nothing")
	fs.StringVar(&f.imports.format, "format", "", "the file's format, `csv|xlsx` (default from the file's extension)")
	fs.StringVar(&f.imports.createdBy, "created-by", "fundsvc import", "the `SUBJECT` the versions written record as their author (createdBy)")
	fs.StringVar(&f.imports.progress, "progress", "auto", "how progress is shown on standard error, `auto|bar|log`: auto draws a bar on a terminal and writes a JSON log line per document otherwise")
}

func registerImportTemplate(fs *flag.FlagSet, f *flags) {
	fs.StringVar(&f.imports.format, "format", imports.FormatCSV, "the template's format, `csv|xlsx`")
}

// writeImportTemplate writes the template of the kind its argument names.
func writeImportTemplate(_ context.Context, e invocation) error {
	if len(e.args) != 1 {
		return fmt.Errorf("import template: want one document KIND (%v), got %q", fund.Kinds, e.args)
	}
	if err := imports.WriteTemplate(e.stdout, fund.Kind(e.args[0]), e.f.imports.format); err != nil {
		return fmt.Errorf("import template: %w", err)
	}
	return nil
}

// importFormat is the format --format names, else the one of path's
// extension.
func importFormat(path, format string) (string, error) {
	format = cmp.Or(format, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if format != imports.FormatCSV && format != imports.FormatXLSX {
		return "", fmt.Errorf("import: the format of %s is %q: want csv or xlsx (name the file .csv or .xlsx, or pass --format)", path, format)
	}
	return format, nil
}

// runImport reads the file its argument names and, unless --dry-run or the
// file has problems, commits its documents through the shared loop
// (imports.Commit) as an administrator of every fund.
func runImport(ctx context.Context, e invocation) error {
	f := e.f.imports
	if len(e.args) != 1 {
		return fmt.Errorf("import: want one FILE (flags before it), got %q", e.args)
	}
	if f.progress != "auto" && f.progress != "bar" && f.progress != "log" {
		return fmt.Errorf("import: --progress %q: want auto, bar or log", f.progress)
	}
	if strings.TrimSpace(f.createdBy) == "" {
		return errors.New("import: --created-by: want a subject")
	}
	path := e.args[0]
	format, err := importFormat(path, f.format)
	if err != nil {
		return err
	}
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer in.Close()
	// The command's limits are the route's defaults but for the positions
	// of one document, which follow FUNDSVC_MAX_POSITIONS as the store does.
	file, err := imports.Read(ctx, in, format, imports.Limits{MaxPositions: e.cfg.MaxPositions})
	if err != nil {
		return fmt.Errorf("import %s: %w", path, err)
	}
	if len(file.Errors) > 0 {
		for _, p := range file.Errors {
			fmt.Fprintf(e.stdout, "%s\n", problemLine(p))
		}
		if file.MoreProblems > 0 {
			fmt.Fprintf(e.stdout, "and %d more problems\n", file.MoreProblems)
		}
		return fmt.Errorf("import %s: %d problems; nothing was written", path, len(file.Errors)+file.MoreProblems)
	}
	if f.dryRun {
		positions := 0
		for _, d := range file.Documents {
			positions += len(d.Rows)
		}
		fmt.Fprintf(e.stdout, "dry run of %s: no problems; %d documents, %d positions would be written (nothing was written)\n", path, len(file.Documents), positions)
		return nil
	}

	s, err := open(ctx, e.cfg, e.getenv)
	if err != nil {
		return err
	}
	return commitFile(ctx, e, s, file, path)
}

// commitFile commits file's documents and prints what each did.
func commitFile(ctx context.Context, e invocation, s *store.Store, file *imports.File, path string) error {
	f, stderr := e.f.imports, e.p.stderr()
	// An operator's view: every fund, as seed writes.
	docs := s.As(fund.Operator)
	write := func(ctx context.Context, d fund.Document) (int, bool, error) {
		d.CreatedBy = f.createdBy
		if e.cfg.WriteTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, e.cfg.WriteTimeout)
			defer cancel()
		}
		w, unchanged, err := docs.WriteUnlessUnchanged(ctx, d)
		return w.Document.Version, unchanged, err
	}
	total := len(file.Documents)
	var done func(i int, o imports.Outcome)
	var bar *progressbar.ProgressBar
	if f.progress == "bar" || f.progress == "auto" && isTerminal(stderr) {
		bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("import"),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionOnCompletion(func() { fmt.Fprintln(stderr) }))
		done = func(int, imports.Outcome) { _ = bar.Add(1) }
	} else {
		// As the service logs: JSON through slog, one line a document.
		log := slog.New(slog.NewJSONHandler(stderr, nil))
		done = func(i int, o imports.Outcome) {
			attrs := []any{"document_id", file.Documents[i].ID, "outcome", o.Result, "version", o.Version, "n", i + 1, "total", total}
			if o.Err != nil {
				log.Warn("document refused", append(attrs, "error", o.Err.Error())...)
				return
			}
			log.Info("document imported", attrs...)
		}
	}
	var refusals []string
	sum, err := imports.Commit(ctx, file, write, func(i int, o imports.Outcome) {
		done(i, o)
		if o.Err != nil {
			refusals = append(refusals, fmt.Sprintf("  %s (rows %s): %s", file.Documents[i].ID, rowList(file.Documents[i].Rows), refusalMessage(o.Err)))
		}
	})
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return fmt.Errorf("import %s: %w", path, err)
	}
	fmt.Fprintf(e.stdout, "imported %s: %d documents: %d created, %d restated, %d unchanged, %d refused\n",
		path, total, sum.Created, sum.Restated, sum.Unchanged, sum.Refused)
	for _, r := range refusals {
		fmt.Fprintln(e.stdout, r)
	}
	if sum.Refused > 0 {
		if ctx.Err() != nil {
			return fmt.Errorf("import %s: interrupted; %d documents were not written: run the import again to write them", path, sum.Refused)
		}
		return fmt.Errorf("import %s: %d documents refused (the others were written)", path, sum.Refused)
	}
	return nil
}

// problemLine is one problem of a file as the command prints it.
func problemLine(p imports.CellError) string {
	at := p.ColumnLetter + fmt.Sprint(p.Row)
	if p.ColumnLetter == "" {
		at = "no such column"
	}
	if p.Sheet != "" {
		at = p.Sheet + "!" + at
	}
	return fmt.Sprintf("row %d, %s, column %q: %s", p.Row, at, p.Column, p.Message)
}

// refusalMessage is why a document was refused, as PUT would say it: a
// coded error's message, or the error itself.
func refusalMessage(err error) string {
	var e *fund.Error
	if errors.As(err, &e) {
		if e.Field != "" {
			return fmt.Sprintf("%s (%s: %s)", e.Message, e.Code, e.Field)
		}
		return fmt.Sprintf("%s (%s)", e.Message, e.Code)
	}
	return err.Error()
}

func rowList(rows []int) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = fmt.Sprint(r)
	}
	return strings.Join(parts, ", ")
}
