#!/usr/bin/env bash
# Runs every Go test of the module exactly once, as make test does (inside
# scripts/with-dynamodb-local.sh), in three go test runs at the same time:
#
#   with -race     every test of every package, but the ones named in
#                  crash and norace below;
#   crash          the crash tests, without -race;
#   norace         the tests named in norace, without -race.
#
# The last two run each test in every package that declares one of that
# name. The crash tests take minutes each, so they have a run of their own:
# after the norace tests of their package they would finish last, and past
# go test's 14-minute timeout on a loaded machine.
#
# The race detector reports a data race only between goroutines that run
# while the test does, and it costs 3 to 5 times the CPU (the export's
# Parquet and ZSTD code the most); on this 2-core machine make test is
# CPU-bound, so what it spends there is wall time. A test runs without it
# only if one of these holds:
#
#   - it kills processes (DynamoDB Local, an export child) and checks what
#     survives across them (crash); it instruments nothing that it checks,
#     and with -race those two tests were a third of make test's time;
#   - it drives the code from one goroutine, one request or call after
#     another, nothing in it or in the server running beside them (the API
#     starts no goroutine of its own, and syscalls order one request after
#     the next for the race detector anyway), and it checks what comes out:
#     content, goldens, costs, bounds, a failed write's atomicity (norace).
#     The goroutines it passes through (the store's, the positions' and
#     the export's fan-outs, the export's scan, sink and dataset writers)
#     also run in tests that stay under -race.
#
# Everything about concurrency stays under -race: several goroutines,
# processes or instances, leases, claims, idempotency keys, deliverers, rate
# limits and in-flight bounds, writers racing an export. So do all tests of
# store, positions and webhooks, whose code starts those goroutines, and any
# test not named here: a new test runs with -race until someone names it.
#
# Before running anything the script checks that every name below is a
# test of some package, and that every test of every package falls in
# exactly one of the three runs (check_every_test_runs_once); with --check
# it stops there.
#
# With --fuzz FUZZTIME it also runs scripts/fuzz.sh FUZZTIME (make test's
# short fuzz pass), on the same DynamoDB Local, once the crash and norace
# runs have ended: beside the race run's last minutes, when it alone keeps
# the cores busy, rather than after it.
#
#	scripts/test.sh [--check | --fuzz FUZZTIME]
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
GO=${GO:-go}

check_only= fuzztime=
case ${1:-} in
"") ;;
--check) check_only=1 ;;
--fuzz)
	fuzztime=${2:-}
	[[ -n $fuzztime ]] || { echo "usage: $0 [--check | --fuzz FUZZTIME]" >&2; exit 2; }
	;;
*)
	echo "usage: $0 [--check | --fuzz FUZZTIME]" >&2
	exit 2
	;;
esac

# The crash tests, by name, and the tests of the largest input the limits
# admit (docs/limits.md), which write thousands of positions: minutes
# each, one request after another, so in this run of their own too.
crash=(
	TestRestatementSurvivesDynamoDBBeingKilled   # api
	TestExportSurvivesSIGKILL                    # export
	TestTheLargestNoticeTakesEveryPath # export
)

# The other tests that run without the race detector, by name.
norace=(
	# api: one request after another (to one server, or to two on one
	# table), checking answers, costs and the table.
	TestHistoryReadsStayBoundedAsVersionsGrow
	TestBadInputChangesNothing
	TestInterruptedRestatementNeverMixesVersions
	TestQueryParametersAreAsStrictAsBodies
	TestAuthzMatrix
	TestAVoidedDocumentLeavesEveryFigureAndListing
	TestTheEventFeedCostsWhatItsDocsSay
	TestOpenAPINamesTheServerTheRequestReached
	TestAuthzVerifierConfigurations
	TestFundsAndInvestorsKnownOnlyFromDocuments
	TestOpenAPIGolden
	TestDemoFigures
	TestFanoutChargesAreWhatTheDocsSay
	TestARecordIsAnsweredAsItWasPut
	TestPerformanceRoutesCostWhatTheirDocsSay
	TestRecordRoutesCostWhatTheirDocsSay
	TestGoldenWireShapes
	TestBadRecordInputIsRefusedAndChangesNothing
	TestEachAccessPatternIsOneOperation
	TestAKnownAtReadCostsConstantReadUnits
	TestARecordAsKnownAtCostsConstantReadsAndIsCharged
	TestAFundListingAsKnownAtReadsTheLimitsThousandDocumentsAndRefusesOneMore
	TestImportTemplatesReadBackAsTheDemo
	TestImportDryRunAnswersEveryProblemAndWritesNothing
	TestImportCommitEqualsTheSameDocumentsPutAsJSON
	TestImportedFiguresEqualTheSameDocumentsPutAsJSONThroughTheExport
	TestImportOfAForeignFundsDocumentWritesNothing
	TestImportBounds
	TestAnImportIsReadAsItArrives
	TestImportReviewFilesAreAnsweredWithinBounds
	TestTheLargestImportIsCheckedAndCommittedWithinTheTimeouts
	TestDocumentRoutesReplayWhatTheyAnsweredAsKnownAt
	TestFanoutReadsReplayAsKnownAt
	TestFundAndInvestorRoutesReplayAsKnownAt
	TestPositionReadsReplayAsKnownAt
	TestFundPerformanceKnownAtSearchesEachDocumentOnce
	TestPositionChangesListTheVersionsThatMovedEachFigure
	TestPositionChangesDecideAccessOnTheLedger
	TestARefusalNeverReadsTheDocument
	TestAuthzCursorsAreBoundToThePrincipal
	TestAuthzAnInvestorInTwoFunds
	TestListsPaginate
	TestMetricsCountConsumedCapacity
	TestItemsCarryTheirStatedLinesAndTheMappedOnesOnRequest
	TestALargeWorkbookIsWrittenToDiskOnce
	TestEachLimitAdmitsItsValueAndRefusesOneMore
	TestEveryRequestStringIsBounded

	# cmd/internal/cli: one import after another; the second kills its
	# import process (a build with -race would run the child with it too).
	TestImportCommand
	TestImportKilledAndRunAgainWritesEachDocumentOnce

	# imports: files read one after another (the package starts no
	# goroutine), some written first by exceljs in a node process.
	TestTemplateReadBackIsTheDemo
	TestEveryPlantedErrorIsAnswered
	TestTheCheckIsLinearInTheFile
	TestAnAmountsExponentIsBoundedBeforeItIsWrittenOut
	TestFormulaCellsAreCountedWithinTheLimits
	TestProblemsAreCapped
	TestARowWiderThanASpreadsheetIsRefused
	TestSpreadsheetRealities
	TestAQuarterWrittenByExcelJSReadsBackExactly
	TestADryRunOfAnExcelJSFileFindsEveryPlantedError
	TestReadHoldsNotTheFileWhole

	# export: one export after another (the writes before it, or a failure
	# injected before it), checking the files, the snapshot and the views.
	TestIncrementalSnapshotEqualsAFullExport
	TestEveryTableSwitchesAtTheManifest
	TestSnapshotMatchesAPI
	TestFilesAreSortedRolledAndCompressed
	TestOnlyCommittedRowsAreExported
	TestIncrementalWithNothingChangedReusesEveryFile
	TestIncrementalSaysWhyItReadsTheSettleMargin
	TestSnapshotsFromBeforeSlotsAreMovedIntoSlots
	TestIncrementalFromAnotherSchemaVersionExportsInFull
	TestExportRereadsAVersionWhoseLatestViewIsBehind
	TestZstdCodecRoundTripsPagesOfEverySize
	TestIncrementalWithoutASnapshotExportsInFull
	TestPerformanceSQLMatchesAPI
	TestLimitsExportExactly
	TestKnownAtSQLMatchesTheAPIsAnswers
	TestAVoidedDocumentLeavesTheCurrentDatasets

	# export/iceberg: one run and commit after another.
	TestTablesMatchAPI
	TestRunCommitsAtomically
	TestAnEarlierDateNeverBecomesCurrent
	TestCommitModes
	TestSchemaBumpEvolvesTablesInTheRunsCommit
)

# The tests of each package, as go test finds them: every top-level
# function named Test, Fuzz or Example plus a name not starting in lower
# case, in the package's test files of this build (go list applies the
# build constraints). One line a test: import path, then name.
declared_tests() {
	"$GO" list -f '{{$d := .Dir}}{{.ImportPath}}{{range .TestGoFiles}} {{$d}}/{{.}}{{end}}{{range .XTestGoFiles}} {{$d}}/{{.}}{{end}}' ./... |
		while read -r pkg files; do
			[[ -n $files ]] || continue
			# shellcheck disable=SC2086 # files is a list of paths without spaces
			sed -nE 's/^func ((Test|Fuzz|Example)([^a-z(][A-Za-z0-9_]*)?)\(.*/\1/p' $files |
				grep -vx TestMain | LC_ALL=C sort -u | sed "s|^|$pkg |"
		done
}

fail_check() {
	echo "scripts/test.sh: $*" >&2
	exit 2
}

if ! declared=$(declared_tests); then
	fail_check "go list failed"
fi
[[ -n $declared ]] || fail_check "found no tests"

# pattern prints a go test -run/-skip pattern matching exactly the names
# given, as top-level test names.
pattern() {
	local IFS='|'
	echo "^($*)\$"
}

# packages_declaring prints the packages that declare a test of one of the
# names given.
packages_declaring() {
	local -A want=()
	local name pkg
	for name; do want[$name]=1; done
	while read -r pkg name; do
		[[ -n ${want[$name]:-} ]] && echo "$pkg"
	done <<<"$declared" | LC_ALL=C sort -u
}

crash_re=$(pattern "${crash[@]}")
norace_re=$(pattern "${norace[@]}")
race_skip_re=$(pattern "${crash[@]}" "${norace[@]}")
mapfile -t race_pkgs < <("$GO" list ./...)
mapfile -t crash_pkgs < <(packages_declaring "${crash[@]}")
mapfile -t norace_pkgs < <(packages_declaring "${norace[@]}")

# check_every_test_runs_once fails unless every declared test runs in
# exactly one of the three go test runs, as their packages and patterns
# select it (the patterns match a name exactly when it is in the list they
# are made of), and every name in crash and norace is a declared test.
check_every_test_runs_once() {
	local -A race_pkg=() crash_pkg=() norace_pkg=() in_crash=() in_norace=() found=()
	local pkg name runs bad=0
	for pkg in "${race_pkgs[@]}"; do race_pkg[$pkg]=1; done
	for pkg in "${crash_pkgs[@]}"; do crash_pkg[$pkg]=1; done
	for pkg in "${norace_pkgs[@]}"; do norace_pkg[$pkg]=1; done
	for name in "${crash[@]}"; do in_crash[$name]=1; done
	for name in "${norace[@]}"; do in_norace[$name]=1; done
	while read -r pkg name; do
		found[$name]=1
		runs=0
		if [[ -n ${race_pkg[$pkg]:-} && -z ${in_crash[$name]:-}${in_norace[$name]:-} ]]; then
			runs=$((runs + 1))
		fi
		if [[ -n ${crash_pkg[$pkg]:-} && -n ${in_crash[$name]:-} ]]; then
			runs=$((runs + 1))
		fi
		if [[ -n ${norace_pkg[$pkg]:-} && -n ${in_norace[$name]:-} ]]; then
			runs=$((runs + 1))
		fi
		if ((runs != 1)); then
			echo "scripts/test.sh: $pkg $name would run $runs times" >&2
			bad=1
		fi
	done <<<"$declared"
	for name in "${crash[@]}" "${norace[@]}"; do
		if [[ -z ${found[$name]:-} ]]; then
			echo "scripts/test.sh: $name is no test of any package (renamed or removed? update this script's lists)" >&2
			bad=1
		fi
	done
	((bad == 0)) || exit 2
}
check_every_test_runs_once
echo "tests: $(wc -l <<<"$declared") in ${#race_pkgs[@]} packages; without -race: ${#crash[@]} crash tests, ${#norace[@]} more (scripts/test.sh's norace)" >&2
if [[ -n $check_only ]]; then
	exit 0
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/test-runs.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# timed runs a command and then says how long after the start it ended:
# the runs share 2 cores, and the last to end is what to shorten.
began=$(date +%s)
timed() {
	local name=$1 rc
	shift
	"$@"
	rc=$?
	echo "$name run: $(($(date +%s) - began)) s after the start" >&2
	return "$rc"
}

# The test binaries are linked without DWARF (-ldflags=-w): some 40 links
# a run, each a quarter cheaper (the api package's race binary: 4.4 CPU
# seconds instead of 5.8); a failure's stack trace has its files and lines
# all the same, only a debugger would miss it.
gotest=("$GO" test -ldflags=-w -count=1 -timeout 14m)

# The crash and norace runs, then the fuzz pass, in the background; each
# writes its output and exit status into $logs.
{
	timed crash "${gotest[@]}" -run "$crash_re" "${crash_pkgs[@]}" >"$logs/crash" 2>&1 &
	timed norace "${gotest[@]}" -run "$norace_re" "${norace_pkgs[@]}" >"$logs/norace" 2>&1
	echo $? >"$logs/norace.rc"
	wait $!
	echo $? >"$logs/crash.rc"
	if [[ -n $fuzztime ]]; then
		timed fuzz scripts/fuzz.sh "$fuzztime" >"$logs/fuzz" 2>&1
		echo $? >"$logs/fuzz.rc"
	fi
} &
side=$!
timed race "${gotest[@]}" -race -skip "$race_skip_re" "${race_pkgs[@]}"
race=$?
wait "$side"
echo "crash tests (without -race):"
cat "$logs/crash"
echo "tests named in scripts/test.sh's norace (without -race):"
cat "$logs/norace"
failed=$((race != 0 || $(cat "$logs/crash.rc") != 0 || $(cat "$logs/norace.rc") != 0))
if [[ -n $fuzztime ]]; then
	echo "fuzz pass (scripts/fuzz.sh $fuzztime):"
	cat "$logs/fuzz"
	((failed |= $(cat "$logs/fuzz.rc") != 0))
fi
exit "$failed"
