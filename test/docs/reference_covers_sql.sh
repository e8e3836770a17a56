#!/usr/bin/env bash
# The user's manual (doc/REFERENCE.md) has a section for every public
# function the install script creates (tscoll.<name>, not _<name>), and
# none for a function that does not exist. Prints "ok" or what differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
created=$(grep -ohE '^CREATE FUNCTION tscoll\.[a-z][a-z0-9_]*' "$root"/sql/tscoll--*.sql |
          sed 's/^CREATE FUNCTION tscoll\.//' | sort -u)
documented=$(grep -oE '^#### tscoll\.[a-z][a-z0-9_]*' "$root/doc/REFERENCE.md" |
             sed 's/^#### tscoll\.//' | sort -u)
if [ "$created" = "$documented" ]; then
    echo "ok: $(echo "$created" | wc -l) public functions documented"
else
    diff <(echo "$created") <(echo "$documented") | sed 's/^</missing from doc\/REFERENCE.md:/; s/^>/documented but not created:/'
    exit 1
fi
