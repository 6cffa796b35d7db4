#!/usr/bin/env bash
# Installs what pChronicle builds and tests with, once:
#   1. missing Debian 12 packages (apt-get; needs root or sudo),
#   2. (unless --deb-only) the pinned official-Lance oracle (npm @lancedb/lancedb 0.31.0 + apache-arrow 18.1.0)
#      into a cache directory ($PCH_CACHE, default .cache/ in the repository).
# Fails loudly when something cannot be installed: the compatibility suite never passes
# silently without its oracle.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${PCH_CACHE:-$PWD/.cache}

PKGS="gcc make libc6-dev libzstd-dev zstd libjansson-dev libjson-c-dev libcjson-dev b3sum libsqlite3-dev sqlite3
      clang libclang-rt-14-dev valgrind flatbuffers-compiler binutils python3 nodejs npm"
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

# The oracle: installed once per lockfile hash.
ORACLE_SRC=tests/compat/oracle
ORACLE=$CACHE/lance-oracle
stamp=$(cat "$ORACLE_SRC/package-lock.json" "$ORACLE_SRC/package.json" | sha256sum | cut -c1-16)
if [ ! -f "$ORACLE/.stamp-$stamp" ]; then
    echo "bootstrap: installing the official Lance oracle (npm @lancedb/lancedb 0.31.0) into $ORACLE"
    rm -rf "$ORACLE"; mkdir -p "$ORACLE"
    cp "$ORACLE_SRC/package.json" "$ORACLE_SRC/package-lock.json" "$ORACLE/"
    if ! (cd "$ORACLE" && npm ci --no-audit --no-fund --loglevel=error >npm.log 2>&1); then
        cat "$ORACLE/npm.log" >&2
        echo "bootstrap: ERROR: npm could not install the pinned Lance oracle; the compatibility suite cannot run" >&2
        exit 1
    fi
    touch "$ORACLE/.stamp-$stamp"
fi
# DuckDB's C library (npm @duckdb/node-api 1.5.6-r.1: its libduckdb.so) for the Arrow-stream
# consumer test (tests/cli/vortex_arrow.sh); installed once per lockfile hash.
DUCK_SRC=tests/compat/duckdb
DUCK=$CACHE/duckdb-consumer
stamp=$(cat "$DUCK_SRC/package-lock.json" "$DUCK_SRC/package.json" | sha256sum | cut -c1-16)
if [ ! -f "$DUCK/.stamp-$stamp" ]; then
    echo "bootstrap: installing DuckDB's C library (npm @duckdb/node-api 1.5.6-r.1) into $DUCK"
    rm -rf "$DUCK"; mkdir -p "$DUCK"
    cp "$DUCK_SRC/package.json" "$DUCK_SRC/package-lock.json" "$DUCK/"
    if ! (cd "$DUCK" && npm ci --no-audit --no-fund --loglevel=error >npm.log 2>&1); then
        cat "$DUCK/npm.log" >&2
        echo "bootstrap: ERROR: npm could not install the pinned DuckDB package; the Arrow-stream test cannot run" >&2
        exit 1
    fi
    touch "$DUCK/.stamp-$stamp"
fi
cp "$ORACLE_SRC/oracle.js" "$ORACLE/oracle.js"
node -e 'require(process.argv[1] + "/node_modules/@lancedb/lancedb")' "$ORACLE" \
    || { echo "bootstrap: ERROR: the Lance oracle does not load" >&2; exit 1; }
