//! `toxics`: the fault proxy as a standalone server.
//!
//! It owns the command line only: parse, start [`toxics::Server`], wait for Ctrl-C or SIGTERM,
//! shut down. Everything else lives in the library.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A TCP fault proxy that speaks Toxiproxy's REST API and toxic vocabulary.
///
/// Point any Toxiproxy client at it (the default port is Toxiproxy's, 8474), create proxies
/// with `POST /proxies`, and add toxics (latency, bandwidth, slow_close, timeout, reset_peer,
/// slicer, limit_data) with `POST /proxies/{name}/toxics`. Everything listens on loopback only.
#[derive(Parser, Debug)]
#[command(name = "toxics", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the REST API until interrupted.
    ///
    /// Endpoints: GET /version; GET, POST /proxies; POST /populate; GET, POST, DELETE
    /// /proxies/{name}; GET, POST /proxies/{name}/toxics; GET, POST, DELETE
    /// /proxies/{name}/toxics/{toxic}; POST /reset. Errors are JSON: {"error": "...",
    /// "status": N}.
    Serve {
        /// Address to listen on; must be loopback.
        #[arg(long, default_value = "127.0.0.1", env = "TOXICS_HOST")]
        host: String,
        /// Port for the REST API (0 picks a free one and prints it).
        #[arg(long, default_value_t = 8474, env = "TOXICS_PORT")]
        port: u16,
        /// Seed for every random choice (toxicity rolls, jitter, slice sizes); random if
        /// absent. The seed in use is printed at start, so a run can be replayed.
        #[arg(long, env = "TOXICS_SEED")]
        seed: Option<u64>,
        /// A JSON file of proxies to create at start, in the body shape of POST /populate:
        /// [{"name": "db", "listen": "127.0.0.1:26379", "upstream": "127.0.0.1:6379"}].
        #[arg(long, env = "TOXICS_CONFIG")]
        config: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOXICS_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toxics: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Serve {
            host,
            port,
            seed,
            config,
        } => runtime.block_on(serve(host, port, seed, config)),
    }
}

/// Read the proxies a `--config` file asks for.
fn read_config(path: &std::path::Path) -> Result<Vec<toxics::ProxyConfig>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not a proxy list: {e}", path.display()))
}

async fn serve(
    host: String,
    port: u16,
    seed: Option<u64>,
    config: Option<std::path::PathBuf>,
) -> ExitCode {
    let proxies = match config.as_deref().map(read_config).transpose() {
        Ok(p) => p.unwrap_or_default(),
        Err(e) => {
            eprintln!("toxics: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut builder = toxics::Server::builder();
    if let Some(seed) = seed {
        builder = builder.seed(seed);
    }
    let mut server = match builder.serve((host.as_str(), port)).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("toxics: cannot serve on {host}:{port}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(failed) = server.proxies().populate(proxies) {
        eprintln!(
            "toxics: cannot create the configured proxies: {}",
            failed.error.error
        );
        return ExitCode::FAILURE;
    }
    for proxy in server.proxies().all() {
        let info = proxy.info();
        println!(
            "toxics: proxy {} listens on {} for {}",
            info.name, info.listen, info.upstream
        );
    }
    // Listen for the stop signals before saying we are up, so a signal sent as soon as the
    // address is printed is never missed.
    let stop = shutdown_signal();
    println!(
        "toxics {}: API on {} (seed {})",
        toxics::api::VERSION,
        server.url(),
        server.seed()
    );
    let outcome = tokio::select! {
        result = server.wait() => result,
        () = stop => Ok(()),
    };
    let shutdown = server.shutdown().await;
    match outcome.and(shutdown) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toxics: the API stopped: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM. The handlers are installed when this is called, not when
/// the returned future is first polled.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let ctrl_c = tokio::signal::ctrl_c();
    async move {
        #[cfg(unix)]
        let term = async {
            match term.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            _ = ctrl_c => {}
            () = term => {}
        }
    }
}
