//! How a command ends when it does not succeed: a code and a sentence for stderr.
//! Codes: 1 the command failed (the sentence names the obstacle), 2 the command line was wrong.
//! `reticle verify` speaks CI's vocabulary instead ([`VerifyCode`]): what its suite proved.

use std::io::Write;
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

    /// `reticle verify` ending with `code`, and the sentence to print.
    pub fn verify(code: VerifyCode, message: impl Into<String>) -> Self {
        Self {
            code: code as u8,
            message: Some(message.into()),
        }
    }

    /// The same sentence, ending `reticle verify` with `code` instead.
    pub fn into_verify(self, code: VerifyCode) -> Self {
        Self {
            code: code as u8,
            message: self.message,
        }
    }

    /// The sentence, if there is one.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// Prints the sentence (if any) to stderr and returns the code.
    pub fn report(self) -> ExitCode {
        if let Some(message) = self.message {
            // A stderr nobody reads is no reason to fail otherwise than with this code.
            let _ = writeln!(std::io::stderr().lock(), "reticle: {message}");
        }
        ExitCode::from(self.code)
    }
}

/// `reticle verify`'s exit codes: what its suite proved, for a CI job to act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum VerifyCode {
    /// Every flow ran and was `yes`.
    Passed = 0,
    /// A flow was `no`: the app regressed.
    Regressed = 1,
    /// A flow was `unknown`, none ran, or the browser, daemon or transport failed: nothing
    /// proven.
    Unproven = 2,
    /// The command line could not be understood.
    Usage = 3,
}
