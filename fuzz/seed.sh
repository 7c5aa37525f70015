#!/bin/sh
# Fills corpus/<target>/ (ignored by git) with the repository's real files of that target's
# kind, plus the checked-in seeds/<target>/, so every run starts from current, real inputs.
# Usage: ./seed.sh [target...]   (default: all five). Run from anywhere.
set -eu
fuzz=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$fuzz")
spec="$root/crates/bulwark-spec/tests"
hostile="$root/crates/bulwark/tests/hostile"

# copy DIR GLOB...: copies the matching files that exist into the current directory.
copy() {
    for file in "$@"; do
        if [ -f "$file" ]; then cp "$file" .; fi
    done
}

targets=${*:-scenario_parser scenario_run component_toml mc_ipc_toml camkes_parser}
for target in $targets; do
    mkdir -p "$fuzz/corpus/$target"
    cd "$fuzz/corpus/$target"
    if [ -d "$fuzz/seeds/$target" ]; then copy "$fuzz/seeds/$target"/*; fi
    case $target in
        scenario_parser)
            copy "$root"/scenarios/*.toml "$spec"/valid/*.toml "$spec"/invalid/*.toml \
                "$hostile"/s_*.toml ;;
        scenario_run)
            # Files that parse: the runs start from real systems of every kind of core.
            copy "$root"/scenarios/*.toml "$spec"/valid/*.toml ;;
        component_toml)
            copy "$hostile"/c_*.toml ;;
        mc_ipc_toml)
            copy "$root"/scenarios/mcipc/*.toml "$spec"/invalid_mc_ipc/*.toml "$hostile"/m_*.toml ;;
        camkes_parser)
            copy "$root"/scenarios/components/*.camkes "$root"/crates/bulwark-analysis/tests/components/*.camkes \
                "$spec"/invalid_camkes/*.camkes "$hostile"/k_*.camkes ;;
        *) echo "seed.sh: unknown target $target" >&2; exit 2 ;;
    esac
    echo "corpus/$target: $(ls | wc -l) files"
done
