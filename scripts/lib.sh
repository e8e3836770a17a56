# Shared by the scripts: where things are, and how to run as the unprivileged
# user that owns the PostgreSQL instances (PostgreSQL refuses to run as root).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_BIN=/usr/lib/postgresql/15/bin
PG_CONFIG=$PG_BIN/pg_config
[ -x "$PG_CONFIG" ] || PG_CONFIG=$(command -v pg_config || echo /usr/bin/pg_config)
RUN_USER=${TSCOLL_USER:-postgres}

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# The user that runs PostgreSQL: $RUN_USER (created if missing) as root,
# else whoever runs the script.
server_user() {
    if is_root; then echo "$RUN_USER"; else id -un; fi
}

ensure_server_user() {
    is_root || return 0
    if ! id "$RUN_USER" >/dev/null 2>&1; then
        log "creating the unprivileged user '$RUN_USER' to run PostgreSQL"
        useradd --system --create-home --shell /bin/bash "$RUN_USER"
    fi
}

# Runs a command as the server user, from $SERVER_CWD (default: /).
as_server_user() {
    if is_root; then
        runuser -u "$RUN_USER" -- env -C "${SERVER_CWD:-/}" "$@"
    else
        (cd "${SERVER_CWD:-/}" && "$@")
    fi
}

# A directory inside the project that the server user owns.
owned_dir() {
    mkdir -p "$1"
    if is_root; then chown -R "$RUN_USER" "$1"; fi
}

# The server user must be able to reach the project directory.
check_reachable() {
    is_root || return 0
    runuser -u "$RUN_USER" -- test -x "$ROOT" ||
        die "user '$RUN_USER' cannot enter $ROOT; make its parent directories world-executable"
}
