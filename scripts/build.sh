#!/usr/bin/env bash
# Builds the extension and installs it into the system PostgreSQL 15.
source "$(dirname "$0")/lib.sh"

cd "$ROOT"
log "building tscoll"
make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG"
log "installing tscoll into $("$PG_CONFIG" --pkglibdir)"
if is_root; then
    make -s install PG_CONFIG="$PG_CONFIG"
else
    sudo make -s install PG_CONFIG="$PG_CONFIG"
fi
