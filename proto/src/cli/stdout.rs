//! Standard output of the command-line tools. `println!` panics when the
//! reader has gone (`xq-coordinator stats … | head`); [`out!`](crate::out)
//! and [`outln!`](crate::outln) return a [`StdoutError`] instead, and each
//! binary's `main` ends quietly, with success, when that error is a closed
//! pipe ([`closed_pipe`]).

use std::fmt;
use std::io::{self, Write};

/// Writing to standard output failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output: {0}")]
pub struct StdoutError(#[source] io::Error);

impl StdoutError {
    /// Whether the reader closed the pipe: the output is no longer wanted,
    /// which ends the command but is not its failure.
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

/// Writes `args` to standard output.
pub fn write(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    io::stdout().lock().write_fmt(args).map_err(StdoutError)
}

/// Writes `args` and a newline to standard output.
pub fn write_line(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    writeln!(io::stdout().lock(), "{args}").map_err(StdoutError)
}

/// Whether `err`, or an error in its `source` chain, is standard output's
/// reader having closed the pipe (`closed_pipe(anyhow_error.as_ref())`).
pub fn closed_pipe(err: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(err), |e| e.source()).any(|e| {
        e.downcast_ref::<StdoutError>()
            .is_some_and(StdoutError::is_closed_pipe)
    })
}

/// `print!` that returns `Result<(), StdoutError>` instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!($($arg)*))
    };
}

/// `println!` that returns `Result<(), StdoutError>` instead of panicking.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write_line(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a source, as a command's context wraps a write error.
    #[derive(Debug, thiserror::Error)]
    #[error("printing")]
    struct Printing(#[source] StdoutError);

    #[test]
    fn only_a_closed_pipe_on_stdout_is_quiet() {
        let closed = StdoutError(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(closed_pipe(&Printing(closed)));
        let full = StdoutError(io::Error::from(io::ErrorKind::StorageFull));
        assert!(!closed_pipe(&full));
        let engine_pipe = io::Error::from(io::ErrorKind::BrokenPipe);
        assert!(!closed_pipe(&engine_pipe));
    }
}
