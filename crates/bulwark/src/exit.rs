//! Exit statuses, the same in every command, so scripts can tell a verdict from an error:
//! 0 yes (success), 1 the verdict no (not admitted, a check that failed), 2 bad input or
//! usage (a file that cannot be read or is invalid, a wrong argument; clap's usage errors
//! exit 2 too).

use std::process::ExitCode;

/// The exit status of bad input or usage (0 and 1 are `ExitCode::SUCCESS` and `FAILURE`).
pub const BAD_INPUT: u8 = 2;

/// 2: a file that cannot be read or is invalid, or a wrong argument.
pub fn bad_input() -> ExitCode {
    ExitCode::from(BAD_INPUT)
}
