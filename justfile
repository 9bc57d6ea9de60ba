# Everyday recipes. Nothing requires just: each recipe is one plain go command.

# List the recipes.
default:
    @just --list

# Lint, test and build.
all: lint test build

# Run every test under the race detector.
test:
    go test -race ./...

# Formatting and vet, as CI runs them.
lint:
    test -z "$(gofmt -l $(git ls-files '*.go'))"
    go vet ./...

# Build the binary into ./bin: static (CGO_ENABLED=0), as the Action builds it; with cgo, net and os/user link libc dynamically, which costs every process about a millisecond and 1.5 MB to start.
build:
    CGO_ENABLED=0 go build -o bin/the-loop ./cmd/the-loop

# Benchmarks: compile the shipped loops, check a generated repository.
bench:
    go test -run '^$' -bench . -benchmem ./...

# Load the webhook ingress: 5,000 signed deliveries for 50 items from 8 goroutines, 10% duplicates; then the same with a kill -9 of the server mid-way and a restart.
bench-serve:
    go run ./tools/loadwebhook
    go run ./tools/loadwebhook -kill

# Run check on the bundled example repository.
demo:
    go run ./cmd/the-loop check --all --repo examples/demo

# Fuzz every parser for a while each: every Fuzz target of every package, found by go test -list, so none is left out.
fuzz seconds="30":
    #!/usr/bin/env bash
    set -euo pipefail
    for pkg in $(go list ./...); do
        for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
            go test -run '^$' -fuzz "^${target}\$" -fuzztime {{seconds}}s "$pkg"
        done
    done

# Write into dir a repository of n copies of the original project's own work items (needs its git mirror, see internal/corpus).
corpus dir n="10000":
    mkdir -p {{dir}}
    THE_LOOP_CORPUS_REPO={{dir}} THE_LOOP_CORPUS_ITEMS={{n}} go test ./policy -run '^TestWriteCorpusRepo$' -count=1 >/dev/null

# Time whole `check --all` processes on 109, 1,000 and 10,000 copies of the original's work items.
bench-corpus runs="11":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    CGO_ENABLED=0 go build -o "$dir/the-loop" ./cmd/the-loop
    for n in 109 1000 10000; do
        mkdir -p "$dir/r$n"
        THE_LOOP_CORPUS_REPO="$dir/r$n" THE_LOOP_CORPUS_ITEMS=$n go test ./policy -run '^TestWriteCorpusRepo$' -count=1 >/dev/null
        go run ./tools/proctime -n {{runs}} -- "$dir/the-loop" check --all --repo "$dir/r$n"
    done

# Time the Python tool's `check --all` (in-process, through its test seam THE_LOOP_SERVICE_LOCAL=1) against this build's, in one interleaved run on 109 copies of its own work items (needs its mirror, and python3 with PyYAML).
bench-python runs="5":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    mirror=${THE_LOOP_PY_MIRROR:-/work/.mirror/MadaraUchiha-314+the-loop/repo}
    git -C "$mirror" archive HEAD cli | tar -x -C "$dir"
    mkdir -p "$dir/repo"
    THE_LOOP_CORPUS_REPO="$dir/repo" THE_LOOP_CORPUS_ITEMS=109 go test ./policy -run '^TestWriteCorpusRepo$' -count=1 >/dev/null
    CGO_ENABLED=0 go build -o "$dir/the-loop" ./cmd/the-loop
    go build -o "$dir/proctime" ./tools/proctime
    cd "$dir/repo"
    "$dir/proctime" -n {{runs}} -- env THE_LOOP_SERVICE_LOCAL=1 PYTHONPATH="$dir/cli" python3 -m the_loop check --all -- "$dir/the-loop" check --all

# Profile `check --all` over 10,000 copies of the original's work items: CPU and heap profiles, and the test binary they belong to, in dir (go tool pprof dir/the-loop.test dir/cpu.prof).
profile-check dir="/tmp/the-loop-profile":
    mkdir -p {{dir}}/repo
    THE_LOOP_CORPUS_REPO={{dir}}/repo THE_LOOP_CORPUS_ITEMS=10000 go test ./policy -run '^TestWriteCorpusRepo$' -count=1 >/dev/null
    THE_LOOP_CORPUS_REPO={{dir}}/repo go test ./cmd/the-loop -run '^$' -bench '^BenchmarkCheckAllCorpusEnv$' -benchtime 3x -benchmem -cpuprofile {{dir}}/cpu.prof -memprofile {{dir}}/mem.prof -o {{dir}}/the-loop.test

# Time whole start-up processes against a hello-world Go binary (issue 13): --version, --help, and graph show outside any repository and in the demo.
bench-start runs="41":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    mkdir "$dir/hello"
    printf 'module hello\n\ngo 1.22\n' > "$dir/hello/go.mod"
    printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' > "$dir/hello/main.go"
    (cd "$dir/hello" && go build -o "$dir/hello-world" .)
    CGO_ENABLED=0 go build -o "$dir/the-loop" ./cmd/the-loop
    go build -o "$dir/proctime" ./tools/proctime
    demo="$PWD/examples/demo"
    cd "$dir"
    ./proctime -n {{runs}} -- ./hello-world -- ./the-loop --version -- ./the-loop --help \
        -- ./the-loop graph show -- ./the-loop graph show --repo "$demo"

# Time whole `check --all` processes on a generated 200-item repository.
bench-process runs="21":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    THE_LOOP_BENCH_REPO="$dir" go test ./policy -run TestWriteBenchRepo -count=1 >/dev/null
    CGO_ENABLED=0 go build -o "$dir/the-loop" ./cmd/the-loop
    go run ./tools/proctime -n {{runs}} -- "$dir/the-loop" check --all --repo "$dir"

# Time whole `check` processes against `grep -rL SPDX` on 10,000 generated files.
bench-licence runs="41":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    THE_LOOP_BENCH_LICENCE_REPO="$dir" go test ./policy -run TestWriteLicenceRepo -count=1 >/dev/null
    CGO_ENABLED=0 go build -o "$dir/the-loop" ./cmd/the-loop
    go run ./tools/proctime -n {{runs}} -- "$dir/the-loop" check issue-1 --repo "$dir" -- grep -rL SPDX "$dir/src"

# Time a .star rule over 10,000 JSON records against conftest running the same rule in Rego (installs conftest v0.71.1 into a temporary directory; the first time takes a few minutes).
bench-conftest runs="21":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    GOBIN="$dir/bin" go install github.com/open-policy-agent/conftest@v0.71.1
    THE_LOOP_BENCH_RECORDS_REPO="$dir/repo" go test ./policy -run '^TestWriteRecordsRepo$' -count=1 >/dev/null
    CGO_ENABLED=0 go build -o "$dir/the-loop" ./cmd/the-loop
    go run ./tools/proctime -n {{runs}} -- "$dir/the-loop" check issue-1 --repo "$dir/repo" \
        -- "$dir/bin/conftest" test --no-color --policy "$dir/repo/policy" "$dir/repo/records"

# Time whole `check --changed --base main` processes, and the GitHub Action's command line (with --rules-from), on a 2,000-item git repository whose branch touches three items.
bench-changed runs="41":
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    bin=$(mktemp -d)
    THE_LOOP_BENCH_CHANGED_REPO="$dir" go test ./policy -run TestWriteChangedBenchRepo -count=1 >/dev/null
    CGO_ENABLED=0 go build -o "$bin/the-loop" ./cmd/the-loop
    go run ./tools/proctime -n {{runs}} -- "$bin/the-loop" check --changed --base main --repo "$dir" \
        -- "$bin/the-loop" check --changed --base main --rules-from main --format github --repo "$dir"

# Validate .goreleaser.yaml and make a snapshot release of HEAD in a temporary clone, never in this tree (installs GoReleaser v2.15.1 there; cross-building six targets cold takes minutes).
release-snapshot:
    #!/usr/bin/env bash
    set -euo pipefail
    dir=$(mktemp -d)
    GOBIN="$dir/bin" go install github.com/goreleaser/goreleaser/v2@v2.15.1
    git clone -q . "$dir/src"
    cd "$dir/src"
    git describe --tags >/dev/null 2>&1 || git tag v0.0.0   # GoReleaser names a snapshot after the last tag
    "$dir/bin/goreleaser" check
    "$dir/bin/goreleaser" release --snapshot --clean
    ls -l "$dir/src/dist"
