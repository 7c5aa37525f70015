#!/usr/bin/env bash
# Renders a Bulwark report folder to PNG screenshots with headless Chromium, so that the
# report can be checked by looking at it: the index and every experiment's page.
#
# Usage:
#   scripts/screenshot-report.sh [REPORT_DIR] [OUT_DIR]
#
#   REPORT_DIR  a folder written by `bulwark reproduce --out REPORT_DIR` (default: report)
#   OUT_DIR     where the PNGs go (default: REPORT_DIR/screenshots); it gets index.png and
#               NAME.png for every experiment folder NAME that has an index.html
#
# Environment:
#   CHROMIUM      the browser to run (default: chromium, Debian's package:
#                 `apt-get install -y chromium`)
#   WINDOW_SIZE   width,height of the page in pixels (default: 1280,2000); the screenshot is
#                 the top of the page at that size
#
# Example, one experiment:
#   cargo run --release -p bulwark -- reproduce a1-thundering-herd --out /tmp/rep
#   scripts/screenshot-report.sh /tmp/rep /tmp/shots
#
# Each page is rendered by a fresh browser with a fresh, temporary profile, and with every
# background connection switched off: the pages are local files and need no network.
# Exit status: 0 when every page was rendered to a non-empty PNG, 1 when one was not, 2 on bad
# usage (no such folder, no index.html, no browser).
set -euo pipefail

report_dir=${1:-report}
out_dir=${2:-$report_dir/screenshots}
browser=${CHROMIUM:-chromium}
window_size=${WINDOW_SIZE:-1280,2000}

if [[ ! -f "$report_dir/index.html" ]]; then
    echo "error: $report_dir/index.html not found; write a report first with" \
        "\`bulwark reproduce --out $report_dir\`" >&2
    exit 2
fi
if ! command -v "$browser" >/dev/null 2>&1; then
    echo "error: $browser not found; install it with \`apt-get install -y chromium\`" \
        "or name another with CHROMIUM=..." >&2
    exit 2
fi
mkdir -p "$out_dir"
report_dir=$(cd "$report_dir" && pwd)
out_dir=$(cd "$out_dir" && pwd)

# One page to one PNG. Chromium prints progress to stderr; keep it for when a page fails.
shoot() {
    local page=$1 png=$2 profile log
    profile=$(mktemp -d)
    log=$(mktemp)
    rm -f "$png"
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" \
        --window-size="$window_size" --screenshot="$png" "file://$page" >"$log" 2>&1 || true
    rm -rf "$profile"
    if [[ -s "$png" ]]; then
        echo "$png"
        rm -f "$log"
    else
        echo "error: no screenshot of $page; chromium said:" >&2
        cat "$log" >&2
        rm -f "$log"
        return 1
    fi
}

failed=0
shoot "$report_dir/index.html" "$out_dir/index.png" || failed=1
for page in "$report_dir"/*/index.html; do
    [[ -f "$page" ]] || continue
    name=$(basename "$(dirname "$page")")
    shoot "$page" "$out_dir/$name.png" || failed=1
done
exit "$failed"
