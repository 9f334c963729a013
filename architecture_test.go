// The rules of the package map (docs/architecture.md), held by the imports
// themselves: `go list` says who imports what, and this test fails on an
// import that crosses a boundary. It runs with every other test
// (make test).
package fundsvc_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/fundsvc/fundsvc"

// scanFile is a non-test file that may Scan the table: the store's
// stream of committed records, which the nightly export reads.
const scanFile = "store/stream.go"

// goPackage is what `go list -json` says of one package.
type goPackage struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) map[string]goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(out)
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, want := range []string{"fund", "store", "wire", "positions", "export", "api", "cmd/fundsvc", "cmd/fundsvc-iceberg", "cmd/internal/cli", "cmd/internal/icebergcli"} {
		if _, ok := pkgs[module+"/"+want]; !ok {
			t.Fatalf("go list did not list %s/%s: the test is not seeing the module", module, want)
		}
	}
	return pkgs
}

// rel is a package's path inside the module ("store", "cmd/fundsvc").
func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

// under reports whether package path p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// harness: cmd/ wires everything together; internal/ holds test harnesses
// and benchmarks, which talk to DynamoDB directly on purpose.
func harness(p string) bool { return under(p, "cmd") || under(p, "internal") }

// A boundary: the imports matching lib are allowed only in the packages
// allowed accepts.
type boundary struct {
	name    string
	lib     func(imp string) bool
	allowed func(pkg string) bool
}

var boundaries = []boundary{
	{
		name: "DynamoDB (guregu/dynamo, the AWS DynamoDB SDK) only in store, cmd/ and internal/ harnesses",
		lib: func(imp string) bool {
			return under(imp, "github.com/guregu/dynamo") || under(imp, "github.com/aws/aws-sdk-go-v2/service/dynamodb") ||
				under(imp, "github.com/aws/aws-sdk-go-v2/feature/dynamodb")
		},
		allowed: func(p string) bool { return p == "store" || harness(p) },
	},
	{
		name:    "the AWS SDK never in the domain (fund), the wire types (wire) or the API (api)",
		lib:     func(imp string) bool { return under(imp, "github.com/aws") },
		allowed: func(p string) bool { return p != "fund" && p != "wire" && p != "api" },
	},
	{
		name:    "gin only in api",
		lib:     func(imp string) bool { return under(imp, "github.com/gin-gonic") },
		allowed: func(p string) bool { return p == "api" },
	},
	{
		name:    "parquet-go only in export (and export/iceberg, whose schemas derive from export's Parquet schemas)",
		lib:     func(imp string) bool { return under(imp, "github.com/parquet-go") },
		allowed: func(p string) bool { return p == "export" || p == "export/iceberg" },
	},
	{
		name: "iceberg-go (and the Arrow it brings) only in export/iceberg",
		lib: func(imp string) bool {
			return under(imp, "github.com/apache/iceberg-go") || under(imp, "github.com/apache/arrow-go")
		},
		allowed: func(p string) bool { return p == "export/iceberg" },
	},
	{
		name:    "nothing imports api but the command line (cmd/), which serves it, and internal/apitest, the tests' harness that serves it in process",
		lib:     func(imp string) bool { return imp == module+"/api" },
		allowed: func(p string) bool { return p == "api" || under(p, "cmd") || p == "internal/apitest" },
	},
	{
		name:    "nothing outside cmd/ imports cmd/ (its shared command line is cmd/internal)",
		lib:     func(imp string) bool { return under(imp, module+"/cmd") },
		allowed: func(p string) bool { return under(p, "cmd") },
	},
	{
		name:    "the Iceberg publisher (export/iceberg) only in cmd/internal/icebergcli, which only cmd/fundsvc-iceberg links",
		lib:     func(imp string) bool { return imp == module+"/export/iceberg" },
		allowed: func(p string) bool { return p == "export/iceberg" || p == "cmd/internal/icebergcli" },
	},
	{
		name:    "cmd/internal/icebergcli only in cmd/fundsvc-iceberg: fundsvc stays without iceberg-go",
		lib:     func(imp string) bool { return imp == module+"/cmd/internal/icebergcli" },
		allowed: func(p string) bool { return p == "cmd/fundsvc-iceberg" },
	},
	{
		name:    "positions computes over the domain: of the module it imports fund only (its reads go through an interface store satisfies)",
		lib:     func(imp string) bool { return under(imp, module) && imp != module+"/fund" },
		allowed: func(p string) bool { return p != "positions" },
	},
	{
		name:    "the domain (fund) imports no other package of the module",
		lib:     func(imp string) bool { return under(imp, module) && imp != module+"/fund" },
		allowed: func(p string) bool { return p != "fund" },
	},
}

// TestPackageBoundaries checks every package's non-test imports. Tests are
// harnesses: an end-to-end test may start the API in process or reach
// DynamoDB Local directly.
func TestPackageBoundaries(t *testing.T) {
	pkgs := listPackages(t)
	for _, b := range boundaries {
		for path, p := range pkgs {
			for _, imp := range p.Imports {
				if b.lib(imp) && !b.allowed(rel(path)) {
					t.Errorf("%s imports %s; the rule: %s", rel(path), imp, b.name)
				}
			}
		}
	}
}

// icebergDeps are the packages the Iceberg publisher brings: iceberg-go,
// Arrow, the SQLite driver of its SQL catalog and the Glue client.
func icebergDep(p string) bool {
	return under(p, "github.com/apache/iceberg-go") || under(p, "github.com/apache/arrow-go") ||
		under(p, "modernc.org/sqlite") || under(p, "github.com/aws/aws-sdk-go-v2/service/glue")
}

// TestFundsvcLinksNoIceberg holds fundsvc to what serve and a Hive-style
// export need: none of the Iceberg publisher's packages is among the
// binary's dependencies, so none is compiled into it or initialised by it
// (iceberg-go's table/substrait alone allocates 33 MB at init). It checks
// fundsvc-iceberg, which must have them, with the same test.
func TestFundsvcLinksNoIceberg(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	var found []string
	for _, p := range deps("./cmd/fundsvc") {
		if icebergDep(p) || p == module+"/export/iceberg" {
			found = append(found, p)
		}
	}
	if len(found) > 0 {
		t.Errorf("cmd/fundsvc depends on the Iceberg publisher's %v", found)
	}
	var withIceberg int
	for _, p := range deps("./cmd/fundsvc-iceberg") {
		if icebergDep(p) {
			withIceberg++
		}
	}
	if withIceberg < 10 {
		t.Errorf("cmd/fundsvc-iceberg has %d of the Iceberg publisher's packages: the test would not see them in fundsvc", withIceberg)
	}
}

// TestTheRulesSeeViolations makes sure each boundary can fail: each names a
// package that would break it.
func TestTheRulesSeeViolations(t *testing.T) {
	for _, c := range []struct{ pkg, imp string }{
		{"api", "github.com/guregu/dynamo/v2"},
		{"positions", "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"},
		{"fund", "github.com/aws/smithy-go"},
		{"export", "github.com/gin-gonic/gin"},
		{"api", "github.com/parquet-go/parquet-go"},
		{"export", "github.com/apache/iceberg-go/table"},
		{"cmd/fundsvc", "github.com/apache/iceberg-go/catalog"},
		{"cmd/internal/cli", module + "/export/iceberg"},
		{"cmd/fundsvc", module + "/cmd/internal/icebergcli"},
		{"internal/multitest", module + "/api"},
		{"export", module + "/api"},
		{"internal/harness", module + "/cmd/fundsvc"},
		{"fund", module + "/store"},
		{"positions", module + "/store"},
	} {
		broken := false
		for _, b := range boundaries {
			if b.lib(c.imp) && !b.allowed(c.pkg) {
				broken = true
			}
		}
		if !broken {
			t.Errorf("%s importing %s breaks no rule", c.pkg, c.imp)
		}
	}
}

// dynamoScan matches a DynamoDB Scan in Go source: guregu's Table.Scan()
// or the SDK's Scan(ctx, …), a ScanInput built (not one named, as the
// capacity middleware's type switch names every operation's input), a
// Scan paginator, a parallel Scan. A Scan whose first argument is a
// pointer is database/sql's, reading a row (export/iceberg's SQL catalog).
var dynamoScan = regexp.MustCompile(`\.Scan\([^&]|ScanInput\{|NewScanPaginator|ParallelScan`)

// TestScanPatternTellsDynamoDBFromSQL holds dynamoScan to the calls it
// must and must not see.
func TestScanPatternTellsDynamoDBFromSQL(t *testing.T) {
	for src, want := range map[string]bool{
		`s.table.Scan().Consistent(true)`:            true,
		`client.Scan(ctx, &dynamodb.ScanInput{})`:    true,
		`in := &dynamodb.ScanInput{TableName: name}`: true,
		`dynamodb.NewScanPaginator(client, in)`:      true,
		`q.Scan(ctx, out)`:                           true,
		`db.QueryRowContext(ctx, q).Scan(&columns)`:  false,
		`case *dynamodb.ScanInput:`:                  false,
	} {
		if got := dynamoScan.MatchString(src); got != want {
			t.Errorf("%s: matched %t, want %t", src, got, want)
		}
	}
}

// TestServiceCodeNeverScans reads every non-test Go file of the module
// outside internal/ (where only test harnesses and benchmarks live) and
// fails if any calls a DynamoDB Scan: every read must be served by a key
// lookup or a Query. The exception is the nightly export's Scan, which
// the storage package runs for the export.
func TestServiceCodeNeverScans(t *testing.T) {
	exportScan := scanFile
	scan := dynamoScan
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "internal" || d.Name() == "tools" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if p := filepath.ToSlash(path); p == exportScan {
			if !scan.Match(src) {
				t.Errorf("%s no longer scans: update this test", path)
			}
			return nil
		}
		if loc := scan.FindIndex(src); loc != nil {
			line := strings.Count(string(src[:loc[0]]), "\n") + 1
			t.Errorf("%s:%d calls a Scan", path, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 15 {
		t.Fatalf("only %d Go files checked; the walk is not seeing the module", checked)
	}
}
