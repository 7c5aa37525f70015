#!/bin/sh
# A short fuzzing run for CI: builds the five targets, seeds each one's corpus from the
# repository's real files (seed.sh), then fuzzes each for FUZZ_SECONDS (default 20) seconds.
# Exits non-zero as soon as a target crashes (a panic, a failed check, a timeout of over
# 10 s on one input, or memory over 2 GB); libFuzzer then names the input it saved under
# artifacts/<target>/.
#
# Needs the nightly toolchain and cargo-fuzz (`.ci/run` installs both). The build is
# cargo-fuzz's default, the same as the long runs in README.md: optimised, with
# AddressSanitizer, and with debug assertions and overflow checks, so integer overflow is a
# crash as it is under `cargo test`.
set -eu
cd "$(dirname "$0")"
seconds=${FUZZ_SECONDS:-20}

./seed.sh
cargo +nightly fuzz build
for target in scenario_parser:scenario.dict scenario_run:scenario.dict component_toml:component.dict \
    mc_ipc_toml:mc_ipc.dict camkes_parser:camkes.dict; do
    name=${target%%:*}
    dict=${target#*:}
    echo "fuzzing $name for ${seconds}s"
    log="artifacts/$name.log"
    mkdir -p artifacts
    if cargo +nightly fuzz run "$name" "corpus/$name" -- \
        -dict="$dict" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
        grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
    else
        tail -n 60 "$log"
        echo "fuzz target $name failed; its log is fuzz/$log" >&2
        exit 1
    fi
done
echo "all five fuzz targets ran ${seconds}s each without a crash"
