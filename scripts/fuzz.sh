#!/usr/bin/env bash
# Runs every fuzz target of the module, one after another, each for FUZZTIME
# (a go test -fuzztime value such as 3s, 60s or 10000x). go test -fuzz takes
# one target of one package at a time, hence the loop. `make test` runs a
# short pass and `make fuzz` a long one.
#
#	scripts/fuzz.sh FUZZTIME [PACKAGE...]   (packages default to ./...)
#
# Test binaries whose TestMain starts DynamoDB Local run, like the rest of
# `make test`, inside scripts/with-dynamodb-local.sh, so that listing and
# every fuzz worker attach to one server instead of starting their own. Every
# target runs even after one fails; a failure ends the script non-zero and
# names each new crasher under testdata/fuzz/ and how to re-run it.
#
# FUZZMINIMIZETIME (default go test's 60s) bounds the minimizing of each new
# input, failing or merely interesting; a short pass sets it low, or
# minimizing a long input takes the whole pass.
set -euo pipefail

if (($# < 1)); then
	echo "usage: $0 FUZZTIME [PACKAGE...]" >&2
	exit 2
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ -z ${FUNDSVC_TEST_DYNAMODB_ENDPOINT:-} ]]; then
	exec scripts/with-dynamodb-local.sh scripts/fuzz.sh "$@"
fi

go=${GO:-go}
fuzztime=$1
minimize=${FUZZMINIMIZETIME:-60s}
shift
(($# > 0)) || set -- ./...

# deadline_only reports whether a failed fuzz run's log shows nothing but
# the coordinator's deadline race: "context deadline exceeded", and no
# failing input, panic or test error.
deadline_only() {
	grep -q 'context deadline exceeded' "$1" &&
		! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:|fuzz: minimizing' "$1"
}

# crashers lists the fuzz inputs in the package directories, one a line.
crashers() {
	find "${dirs[@]}" -path '*/testdata/fuzz/*' -type f 2>/dev/null | LC_ALL=C sort -u
}

mapfile -t dirs < <("$go" list -f '{{.Dir}}' "$@")

# go test -list runs each test binary (and its TestMain) to print its fuzz
# targets, then the package's "ok" line; one go test builds them all at once.
# It is given only the packages whose test files declare a function named
# Fuzz-something: building every other package's test binary took most of a
# short pass.
mapfile -t fuzzpkgs < <("$go" list -f '{{$d := .Dir}}{{.ImportPath}}{{range .TestGoFiles}} {{$d}}/{{.}}{{end}}{{range .XTestGoFiles}} {{$d}}/{{.}}{{end}}' "$@" |
	while read -r pkg files; do
		# shellcheck disable=SC2086 # files is a list of paths without spaces
		[[ -n $files ]] && grep -q '^func Fuzz' $files && echo "$pkg"
	done)
if ((${#fuzzpkgs[@]} == 0)); then
	echo "fuzz: no fuzz targets in $*" >&2
	exit 1
fi
if ! list=$("$go" test -run '^$' -list '^Fuzz' "${fuzzpkgs[@]}"); then
	printf '%s\n' "$list" >&2
	echo "fuzz: could not list the fuzz targets" >&2
	exit 1
fi
targets=() names=()
while IFS= read -r line; do
	case $line in
	Fuzz*) names+=("$line") ;;
	ok*)
		read -r _ pkg _ <<<"$line"
		for name in "${names[@]}"; do
			targets+=("$pkg $name")
		done
		names=()
		;;
	esac
done <<<"$list"

failed=()
for t in "${targets[@]}"; do
	read -r pkg target <<<"$t"
	before=$(crashers)
	echo "=== fuzz $pkg $target for $fuzztime" >&2
	# -run '^$': only the target; the package's tests run in go test ./...
	# Go 1.26's fuzz coordinator can fail a target with a bare "context
	# deadline exceeded" when -fuzztime ends while a worker is busy
	# (golang/go#75804, fixed in Go 1.27): no input is written and nothing
	# failed. Such a run, and only such a run, is repeated once; a real
	# failure always writes its input or prints what failed.
	for attempt in 1 2; do
		log=$(mktemp)
		status=0
		"$go" test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" 2>&1 | tee "$log" || status=$?
		if ((status == 0)); then
			rm -f "$log"
			break
		fi
		if ((attempt == 1)) && [[ "$(crashers)" == "$before" ]] && deadline_only "$log"; then
			echo "fuzz: $target stopped on Go's fuzztime deadline race (golang/go#75804), no input failed; once more" >&2
			rm -f "$log"
			continue
		fi
		rm -f "$log"
		failed+=("$pkg $target")
		break
	done
	# A failure writes its input to testdata/fuzz/<target>/; say where, and
	# how to run just that input again.
	while IFS= read -r file; do
		[[ -n $file ]] || continue
		echo "NEW CRASHER: ${file#"$PWD"/}" >&2
		echo "  re-run with: $go test -run '^$target\$/^$(basename "$file")\$' $pkg" >&2
		echo "  commit it with the fix, so it stays a regression test" >&2
	done < <(LC_ALL=C comm -13 <(echo "$before") <(crashers))
done

runs=${#targets[@]}
if ((runs == 0)); then
	echo "fuzz: no fuzz targets in $*" >&2
	exit 1
fi
if ((${#failed[@]} > 0)); then
	echo "FUZZ FAILED (${#failed[@]} of $runs targets):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $runs targets passed, $fuzztime each" >&2
