#!/usr/bin/env bash
# Installs the build and test dependencies (Debian bookworm). Idempotent:
# apt-get runs only when a package is missing.
source "$(dirname "$0")/lib.sh"

# Extra packages may be named on the command line (e.g. by bench/run.sh).
# libkrb5-dev: the server headers' libpq-be.h (COPY's protocol) includes
# gssapi.h, as Debian's PostgreSQL is built with GSSAPI.
PACKAGES=(
    build-essential g++ make cmake pkg-config
    postgresql-15 postgresql-server-dev-15 postgresql-contrib
    libkrb5-dev libbson-dev libgtest-dev libgmock-dev
    clang libclang-rt-14-dev
    "$@"
)

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

is_root || die "missing packages: ${missing[*]} (run as root, or install them)"
log "installing: ${missing[*]}"
# Debian's own cluster (15/main, port 5432) may be created and started by
# the package; tscoll's instances use their own ports and directories.
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
