#!/usr/bin/env bash
# install.sh REF DEST: put the-loop at DEST from the release REF names, or
# say that it must be built.
#
# The GitHub Action runs this first. When REF (the action's own ref) is a
# release tag, vMAJOR.MINOR.PATCH with an optional pre-release, it downloads
# that release's archive for this runner (RUNNER_OS, RUNNER_ARCH), checks
# its sha256 against the release's checksums.txt, and only then unpacks the
# binary to DEST. Anything else (a branch, a commit, a moving major tag
# such as v1, which has no release of its own) prints source=build, and the
# action builds from its checkout instead.
#
# A checksum that does not match, a release with no archive for this
# runner, or a checksums.txt with no line for it stops here, nonzero, with
# the reason: a binary that was not verified is never put at DEST.
#
# The answer is a line source=release or source=build on stdout, and in
# $GITHUB_OUTPUT when it is set. THE_LOOP_RELEASE_URL replaces the base the
# releases are downloaded from ($GITHUB_SERVER_URL/the-loop/the-loop/releases/download).
set -euo pipefail

ref=${1:?usage: install.sh REF DEST}
dest=${2:?usage: install.sh REF DEST}

say() { printf '%s\n' "$1"; if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s\n' "$1" >>"$GITHUB_OUTPUT"; fi; }
fail() { printf 'the-loop: %s\n' "$1" >&2; printf '::error title=the-loop::%s\n' "$1"; exit 1; }

if ! [[ $ref =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  say source=build
  exit 0
fi

case ${RUNNER_OS:-} in
  Linux) os=linux ;;
  macOS) os=darwin ;;
  Windows) os=windows ;;
  *) fail "no release archive for RUNNER_OS '${RUNNER_OS:-}': releases are built for Linux, macOS and Windows" ;;
esac
case ${RUNNER_ARCH:-} in
  X64) arch=amd64 ;;
  ARM64) arch=arm64 ;;
  *) fail "no release archive for RUNNER_ARCH '${RUNNER_ARCH:-}': releases are built for X64 and ARM64" ;;
esac

# GoReleaser's names, as .goreleaser.yaml sets them: the version is the
# tag without its v.
ext=tar.gz bin=the-loop
if [ "$os" = windows ]; then ext=zip bin=the-loop.exe; fi
archive="the-loop_${ref#v}_${os}_${arch}.${ext}"
base=${THE_LOOP_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/the-loop/the-loop/releases/download}
base="${base%/}/$ref"

work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/the-loop-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fetch URL FILE: curl where the runner has it, wget otherwise. A 404 is a
# failure, not a page saved as the file.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 3 --retry-delay 1 -o "$2" "$1" || fail "cannot download $1 (curl exit $?)"
  elif command -v wget >/dev/null 2>&1; then
    wget -q --tries=3 -O "$2" "$1" || fail "cannot download $1 (wget exit $?)"
  else
    fail "cannot download $1: neither curl nor wget is on PATH"
  fi
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    openssl dgst -sha256 -r "$1" | cut -d' ' -f1
  fi
}

fetch "$base/checksums.txt" "$work/checksums.txt"
# Each line is "SUM  NAME" (two spaces, as sha256sum writes it); a name
# may be marked binary with a leading '*'.
want=$(awk -v name="$archive" '$2 == name || $2 == "*" name { print $1; exit }' "$work/checksums.txt")
if [ -z "$want" ]; then
  fail "checksums.txt of $ref has no line for $archive; refusing to run a binary that cannot be verified"
fi
fetch "$base/$archive" "$work/$archive"
got=$(sha256 "$work/$archive")
if [ "$got" != "$want" ]; then
  fail "$archive: sha256 $got does not match $want in checksums.txt of $ref; refusing to run it"
fi

mkdir "$work/x"
if [ "$ext" = zip ]; then
  if command -v unzip >/dev/null 2>&1; then
    unzip -q "$work/$archive" "$bin" -d "$work/x"
  else
    # Windows' own tar (bsdtar) reads zip archives; Git Bash's GNU tar does not.
    "${SYSTEMROOT:-C:/Windows}/System32/tar.exe" -xf "$work/$archive" -C "$work/x" "$bin"
  fi
else
  tar -xzf "$work/$archive" -C "$work/x" "$bin"
fi
[ -f "$work/x/$bin" ] || fail "$archive holds no $bin"
# Into place by a rename beside DEST: a run that stops half-way leaves no
# half-written binary where the next step would run it.
mkdir -p "$(dirname "$dest")"
cp "$work/x/$bin" "$dest.tmp"
chmod 755 "$dest.tmp"
mv -f "$dest.tmp" "$dest"
echo "the-loop: $archive of $ref, sha256 $got verified against checksums.txt" >&2
say source=release
