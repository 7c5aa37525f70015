//! Printing to standard output that ends the program quietly when the reader has gone (as in
//! `bulwark simulate ... | head`), instead of the panic `println!` gives on a closed pipe.

use std::fmt::Arguments;
use std::io::{self, Write};

/// The exit status of a program killed by SIGPIPE (128 + 13), what shells expect.
const BROKEN_PIPE: i32 = 141;

/// Writes `args` to standard output; exits if the pipe is closed, reports other errors.
pub fn write(args: Arguments<'_>) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(BROKEN_PIPE);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(2);
    }
}

/// `print!` that survives a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write(format_args!($($arg)*)) };
}

/// `println!` that survives a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::write(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {out, outln};
