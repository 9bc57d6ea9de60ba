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

# Fuzz every parser for a while each.
fuzz seconds="30":
    go test -run '^$' -fuzz '^FuzzCompile$' -fuzztime {{seconds}}s ./graph
    go test -run '^$' -fuzz '^FuzzCompileTree$' -fuzztime {{seconds}}s ./graph
    go test -run '^$' -fuzz '^FuzzParseState$' -fuzztime {{seconds}}s ./graph
    go test -run '^$' -fuzz '^FuzzLoadHarnessConfig$' -fuzztime {{seconds}}s ./policy
    go test -run '^$' -fuzz '^FuzzSchemaValidator$' -fuzztime {{seconds}}s ./policy
    go test -run '^$' -fuzz '^FuzzSchemaValidatorBytes$' -fuzztime {{seconds}}s ./policy
    go test -run '^$' -fuzz '^FuzzMermaid$' -fuzztime {{seconds}}s ./builtins
    go test -run '^$' -fuzz '^FuzzParseEnvelope$' -fuzztime {{seconds}}s ./builtins
    go test -run '^$' -fuzz '^FuzzReadFile$' -fuzztime {{seconds}}s ./repo
    go test -run '^$' -fuzz '^FuzzParseRef$' -fuzztime {{seconds}}s ./graph
    go test -run '^$' -fuzz '^FuzzItemOf$' -fuzztime {{seconds}}s ./channels
    go test -run '^$' -fuzz '^FuzzVocabularyParse$' -fuzztime {{seconds}}s ./channels

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
