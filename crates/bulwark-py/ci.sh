#!/usr/bin/env bash
# Builds the bulwark Python package into a fresh virtual environment and runs its tests and
# example: bash crates/bulwark-py/ci.sh (from anywhere). Needs python3 (>= 3.9) with venv,
# the Rust toolchain, and a reachable Python package index.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"

venv=$(mktemp -d "${TMPDIR:-/tmp}/bulwark-py-venv.XXXXXX")
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
python="$venv/bin/python"

"$python" -m pip install --quiet --upgrade "pip>=23.0"
"$python" -m pip install --quiet "maturin>=1.5,<2.0" "pytest>=7.0" "pytest-timeout>=2.1" \
    "dask[distributed]>=2023.1.0"
# maturin builds the extension (release, abi3) with cargo; CARGO_TARGET_DIR is honoured.
"$python" -m pip install --quiet ./crates/bulwark-py

# The simulate, sweep and component-bounds tests compare with the CLI when one is built
# (target/release or target/debug); they are skipped, alone, when none is.
"$python" -m pytest crates/bulwark-py/tests -q -rs
"$python" crates/bulwark-py/examples/schedulability.py --sets 20 --tasks 5
# The component paper's comparison (Eqs. 2, 3, 4 and RTA); it exits non-zero if a bound admits
# more sets than exact analysis at some utilisation. It plots only when matplotlib is there.
"$python" crates/bulwark-py/examples/component_bounds.py --configuration 3 --split equal \
    --sets 100 --plot "$venv/component_bounds.svg"
