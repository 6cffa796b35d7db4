#!/usr/bin/env bash
# Installs what pChronicle builds and tests with, once:
#   1. missing Debian 12 packages (apt-get; needs root or sudo),
#   2. (unless --deb-only) the S3 test server's packages (ceph-mon, ceph-osd, radosgw, curl) and the
#      pinned official-Lance oracle (npm @lancedb/lancedb 0.31.0 + apache-arrow 18.1.0)
#      into a cache directory ($PCH_CACHE, default .cache/ in the repository).
# Fails loudly when something cannot be installed: the compatibility suite never passes
# silently without its oracle.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${PCH_CACHE:-$PWD/.cache}

PKGS="gcc make libc6-dev libzstd-dev zstd libjansson-dev libjson-c-dev libcjson-dev b3sum libsqlite3-dev sqlite3
      libcurl4-openssl-dev libssl-dev clang libclang-rt-14-dev valgrind flatbuffers-compiler binutils python3 nodejs npm
      time gnuplot-nox"
missing=()
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs/npm and python3 may come from outside Debian (a newer one on the PATH): accept it.
drop=()
command -v node >/dev/null && command -v npm >/dev/null && drop+=(nodejs npm)
command -v python3 >/dev/null && drop+=(python3)
if [ ${#drop[@]} -gt 0 ] && [ ${#missing[@]} -gt 0 ]; then
    tmp=(); for p in "${missing[@]}"; do [[ " ${drop[*]} " == *" $p "* ]] || tmp+=("$p"); done
    missing=("${tmp[@]+"${tmp[@]}"}")
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: installing Debian packages: ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ "${1:-}" = "--deb-only" ] && exit 0

# The S3 test server (tests/s3/rgw.sh): a one-node Ceph radosgw from Debian's packages, and
# curl (its readiness probe and the tests' independent uploads with --aws-sigv4).
TEST_PKGS="ceph-mon ceph-osd radosgw curl"
missing=()
for p in $TEST_PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: installing the S3 test server's packages: ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm_pinned SRC DEST WHAT: npm ci of SRC's package.json + package-lock.json into DEST, once per
# lockfile hash (a stamp file); fails loudly when npm cannot install it.
npm_pinned() {
    local src=$1 dest=$2 what=$3 stamp
    stamp=$(cat "$src/package-lock.json" "$src/package.json" | sha256sum | cut -c1-16)
    [ -f "$dest/.stamp-$stamp" ] && return 0
    echo "bootstrap: installing $what into $dest"
    rm -rf "$dest"; mkdir -p "$dest"
    cp "$src/package.json" "$src/package-lock.json" "$dest/"
    if ! (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >npm.log 2>&1); then
        cat "$dest/npm.log" >&2
        echo "bootstrap: ERROR: npm could not install $what" >&2
        exit 1
    fi
    touch "$dest/.stamp-$stamp"
}

# The official Lance oracle (the compatibility suite) and DuckDB's C library (npm
# @duckdb/node-api 1.5.6-r.1: its libduckdb.so, for the Arrow-stream consumer test
# tests/cli/vortex_arrow.sh).
ORACLE_SRC=tests/compat/oracle
ORACLE=$CACHE/lance-oracle
npm_pinned "$ORACLE_SRC" "$ORACLE" "the official Lance oracle (npm @lancedb/lancedb 0.31.0)"
npm_pinned tests/compat/duckdb "$CACHE/duckdb-consumer" "DuckDB's C library (npm @duckdb/node-api 1.5.6-r.1)"
cp "$ORACLE_SRC/oracle.js" "$ORACLE/oracle.js"
node -e 'require(process.argv[1] + "/node_modules/@lancedb/lancedb")' "$ORACLE" \
    || { echo "bootstrap: ERROR: the Lance oracle does not load" >&2; exit 1; }
