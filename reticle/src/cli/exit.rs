//! How a command ends when it does not succeed: a code and a sentence for stderr.
//! Codes: 1 the command failed (the sentence names the obstacle), 2 the command line was wrong.

use std::process::ExitCode;

/// A failed command: its exit code and the sentence to print.
#[derive(Debug)]
pub struct Exit {
    code: u8,
    message: Option<String>,
}

impl Exit {
    /// The command ran and failed; the sentence names the obstacle.
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            code: 1,
            message: Some(message.into()),
        }
    }

    /// The command failed and has already said why.
    pub fn silent_failure() -> Self {
        Self {
            code: 1,
            message: None,
        }
    }

    /// The command line could not be understood.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: Some(message.into()),
        }
    }

    /// Prints the sentence (if any) to stderr and returns the code.
    pub fn report(self) -> ExitCode {
        if let Some(message) = self.message {
            eprintln!("reticle: {message}");
        }
        ExitCode::from(self.code)
    }
}
