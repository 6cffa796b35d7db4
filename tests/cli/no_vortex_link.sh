#!/usr/bin/env bash
# ARCHITECTURE.md §3 / RFC-0006 §3.6: the pchronicle program links no Vortex code.
# (PCH_VALGRIND_SKIP: this inspects the binary, it runs nothing.)
set -eu
cd "$(dirname "$0")/../.."
bin=${PCH_BUILD:-build}/pchronicle
[ -x "$bin" ] || { echo "no_vortex_link: missing $bin"; exit 1; }
if nm "$bin" | grep -i vortex; then
    echo "no_vortex_link: $bin contains Vortex symbols"; exit 1
fi
nm "$bin" | grep -q pch_lance_dataset_open || { echo "no_vortex_link: nm sees no pch_ symbols (stripped?)"; exit 1; }
echo "no_vortex_link: ok"
