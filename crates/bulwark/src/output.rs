//! Printing to standard output that ends the program quietly when the reader has gone (as in
//! `bulwark simulate ... | head`), instead of the panic `println!` gives on a closed pipe.

use std::fmt::Arguments;
use std::io::{self, Write};

/// The exit status of a program killed by SIGPIPE (128 + 13), what shells expect.
const BROKEN_PIPE: i32 = 141;

thread_local! {
    /// Where [`write`] goes while [`capture`] runs: a buffer instead of standard output.
    static CAPTURED: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs `body` with everything it writes through [`write`] kept in a string, returned beside
/// its result (for a command that composes the documents of several others).
pub fn capture<R>(body: impl FnOnce() -> R) -> (String, R) {
    let outer = CAPTURED.with(|c| c.replace(Some(String::new())));
    let result = body();
    let text = CAPTURED.with(|c| c.replace(outer)).unwrap_or_default();
    (text, result)
}

/// Writes `args` to standard output; exits if the pipe is closed, reports other errors.
pub fn write(args: Arguments<'_>) {
    let captured = CAPTURED.with(|c| {
        c.borrow_mut().as_mut().map(|text| {
            use std::fmt::Write as _;
            let _ = text.write_fmt(args);
        })
    });
    if captured.is_some() {
        return;
    }
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
