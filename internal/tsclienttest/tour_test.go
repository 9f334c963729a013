package tsclienttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/internal/apitest"
	"github.com/fundsvc/fundsvc/internal/dynamotest"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"github.com/fundsvc/fundsvc/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

// The tour's sources, and the pinned tools that make tools installs
// (tools/package.json's devDependencies), relative to the repository root.
const (
	tourDir     = "clients/typescript"
	contract    = "api/openapi.json"
	nodeModules = "tools/node_modules"
	generator   = nodeModules + "/openapi-typescript/bin/cli.js"
	compiler    = nodeModules + "/typescript/bin/tsc"
	client      = nodeModules + "/openapi-fetch/package.json"
)

// tools finds the repository root and node, and fails t, saying what to
// do, when the pinned tools are not installed.
func tools(t *testing.T) (root, node string) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{generator, compiler, client} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatalf("%s is not installed: run make tools (%v)", f, err)
		}
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Fatalf("the tour needs Node.js: %v", err)
	}
	return root, node
}

// build generates the types of the document at doc with the pinned
// openapi-typescript into a scratch folder beside copies of the tour and its
// tsconfig.json and a link to tools/node_modules, and compiles the tour
// there with the pinned tsc. It returns the folder, whose out/tour.mjs is
// the compiled tour, or an error holding what the tool printed, with the
// tour's path as it is in the repository.
func build(ctx context.Context, root, node, doc, dir string) error {
	for _, f := range []string{"tour.mts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join(root, tourDir, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	if err := os.Symlink(filepath.Join(root, nodeModules), filepath.Join(dir, "node_modules")); err != nil {
		return err
	}
	// Every default of the contract is a request's (an absent currency
	// is USD, an absent status Pending), where the field may be left out;
	// openapi-typescript's default would make each of them required.
	if out, err := runNode(ctx, node, dir, nil, filepath.Join(root, generator), doc, "--default-non-nullable", "false", "-o", "openapi.ts"); err != nil {
		return fmt.Errorf("openapi-typescript %s: %w\n%s", doc, err, out)
	}
	if out, err := runNode(ctx, node, dir, nil, filepath.Join(root, compiler), "-p", "."); err != nil {
		return fmt.Errorf("tsc: %w\n%s", err, strings.ReplaceAll(out, "tour.mts(", tourDir+"/tour.mts("))
	}
	return nil
}

// runNode runs a script with node in dir, with env added to the
// environment, and returns what it printed on both streams.
func runNode(ctx context.Context, node, dir string, env []string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return out.String(), err
}

// demo serves the API on the demo dataset, on a fresh table (see
// apitest.Serve), and returns its URL, an admin token of FUND_A and a token
// of INVESTOR_1 (as make run prints them), and its logs.
func demo(t *testing.T) (url, admin, investor string, logs *fundtest.SyncBuffer) {
	t.Helper()
	env := fundtest.New(t)
	env.Seed(t)
	srv := apitest.Serve(t, env)
	admin = srv.Token(t, api.Principal{Subject: "tour-admin", Role: api.RoleAdmin, Funds: []string{"FUND_A"}})
	investor = srv.Token(t, api.Principal{Subject: "tour-investor", Role: api.RoleInvestor, Investor: "INVESTOR_1"})
	return srv.URL, admin, investor, srv.Logs
}

// tourPassed is the tour's last line when every check held.
var tourPassed = regexp.MustCompile(`(?m)^tour: (\d+) steps, (\d+) checks, all as docs/tour.md shows$`)

// TestTypeScriptTour runs the tour (docs/tour.md) with the TypeScript client:
// the types generated from the committed document, the tour type-checked
// and compiled with tsc, then run with node against the API on the demo.
// It fails on a type error (a field the tour reads that the document
// renamed or retyped) and on any answer that differs from the tour's
// figures; the tour prints each step and each difference.
func TestTypeScriptTour(t *testing.T) {
	t.Parallel()
	root, node := tools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	// Compile while the demo is seeded. Should t stop first, its context
	// stops the compile, which ends before its folder is removed.
	dir := t.TempDir()
	var compiled error
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	began := time.Now()
	wg.Go(func() { compiled = build(ctx, root, node, filepath.Join(root, contract), dir) })
	url, admin, investor, logs := demo(t)
	seeded := time.Since(began)
	wg.Wait()
	if compiled != nil {
		t.Fatal(compiled)
	}
	t.Logf("the demo seeded in %s, the tour compiled in %s", seeded.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))

	quarter, err := os.ReadFile(filepath.Join(root, "docs", "examples", "demo-2026q1-statements.csv")) // the tour's import
	if err != nil {
		t.Fatal(err)
	}
	out, err := runNode(ctx, node, dir, []string{"TOUR_URL=" + url, "ADMIN=" + admin, "INVESTOR=" + investor, "TOUR_IMPORT_CSV=" + string(quarter)}, filepath.Join("out", "tour.mjs"))
	if err != nil {
		t.Fatalf("the tour (%s/tour.mts) failed: %v\n%s\nthe API's log:\n%s", tourDir, err, out, logs.String())
	}
	m := tourPassed.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the tour exited 0 without its closing line %q:\n%s", tourPassed, out)
	}
	if m[1] == "0" || m[2] == "0" {
		t.Fatalf("the tour ran %s steps and %s checks:\n%s", m[1], m[2], out)
	}
	t.Logf("%s", out)
}

// TestTourFailsTscWhenTheContractDrifts holds the tour to typed field
// access: with one response field and one request field renamed in a copy
// of the document, tsc must fail on the tour's lines that use them. A tour
// that read its answers untyped would compile and pass TestTypeScriptTour
// without proving anything of the contract.
func TestTourFailsTscWhenTheContractDrifts(t *testing.T) {
	t.Parallel()
	root, node := tools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	b, err := os.ReadFile(filepath.Join(root, contract))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// The fund's document list names each document (documentId), and a
	// distribution's withholding is what the tour's correction changes.
	renames := []struct{ schema, field string }{{"DocumentHeader", "documentId"}, {"DistributionInput", "withholding"}}
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	for _, r := range renames {
		s, _ := schemas[r.schema].(map[string]any)
		props, _ := s["properties"].(map[string]any)
		if _, ok := props[r.field]; !ok {
			t.Fatalf("%s has no schema %s with a property %s: rename another field the tour reads", contract, r.schema, r.field)
		}
		props[r.field+"Renamed"] = props[r.field]
		delete(props, r.field)
		if req, ok := s["required"].([]any); ok {
			for i, f := range req {
				if f == r.field {
					req[i] = r.field + "Renamed"
				}
			}
		}
	}
	drifted := filepath.Join(t.TempDir(), "openapi.json")
	b, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(drifted, b, 0o644); err != nil {
		t.Fatal(err)
	}

	err = build(ctx, root, node, drifted, t.TempDir())
	if err == nil {
		t.Fatal("tsc compiled the tour against a document with DocumentHeader.documentId and DistributionInput.withholding renamed")
	}
	for _, want := range []string{
		"tsc: ",
		tourDir + "/tour.mts(",
		"Property 'documentId' does not exist",
		"'withholding' does not exist in type",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("tsc's failure lacks %q:\n%v", want, err)
		}
	}
}
