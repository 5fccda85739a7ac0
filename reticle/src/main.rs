//! The `reticle` binary: hands the command line to [`reticle::cli`] and exits with its code.

fn main() -> std::process::ExitCode {
    reticle::cli::main()
}
