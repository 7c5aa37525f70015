"""Shared fixtures: the repository root, the bulwark CLI (when built), the small experiment."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
HERE = pathlib.Path(__file__).resolve().parent


def find_cli():
    """The bulwark binary: $BULWARK_BIN, else target/release, else target/debug (under
    $CARGO_TARGET_DIR when set); None when none is built."""
    explicit = os.environ.get("BULWARK_BIN")
    if explicit:
        return explicit
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("release", "debug"):
        binary = target / profile / "bulwark"
        if binary.is_file() and os.access(binary, os.X_OK):
            return str(binary)
    return None


@pytest.fixture(scope="session")
def cli():
    """The bulwark CLI; a test that asks for it is skipped (only it) when none is built."""
    binary = find_cli()
    if binary is None:
        pytest.skip("no bulwark CLI at target/release or target/debug (cargo build -p bulwark)")
    return binary


@pytest.fixture(scope="session")
def experiment_path():
    return HERE / "small.toml"


@pytest.fixture(scope="session")
def experiment_text(experiment_path):
    return experiment_path.read_text()
