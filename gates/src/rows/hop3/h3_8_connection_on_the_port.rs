//! H3.8: a port held by an outgoing connection: `serve` fails naming the port and the holder,
//! and `status` does not call it free. Its scenario, its control ([`SourcePort::Released`])
//! and judge.

use std::net::{TcpListener, TcpStream};

use harness::ports::outbound;
use harness::{free_port, poll};
use serde_json::json;

use super::{BOUND, call, fault_words, is_completion, report_of, status_args};
use crate::fault;
use crate::history::{History, Op};
use crate::judge::{self, Judgement, RowOutcome, one_line};
use crate::rows::RowGate;
use crate::scenarios::kit::{judged, unestablished};
use crate::scenarios::{GateEnv, Ran};

/// What H3.8 does with the connection that holds the port before it runs the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourcePort {
    /// The connection stays open: the row.
    Held,
    /// The connection is closed first: the control, where `serve` starts.
    Released,
}

/// H3.8: a port that is the local end of an outgoing connection (nothing listens): `serve` must
/// fail naming the port and the process holding the connection, and `status` must not call it
/// free.
pub async fn port_held_by_a_connection(env: &GateEnv) -> Ran {
    connection_on_the_port(env, SourcePort::Held).await
}

/// H3.8's scenario, or its control: connects from a port the kernel picks (an ephemeral one,
/// as any client connection on the machine would take) to a loopback listener, then runs
/// `status` and `serve` on that port with the connection held, or released first.
pub async fn connection_on_the_port(env: &GateEnv, source: SourcePort) -> Ran {
    let history = History::new();
    let state = tempfile::tempdir().expect("state dir");
    // The client's source port is one the harness reserved (outside the ephemeral range), bound
    // by number: once the control closes the connection, no other connection on the machine can
    // be handed that port as its source port before `serve` binds it.
    let connected = TcpListener::bind("127.0.0.1:0").and_then(|listener| {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        socket.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], free_port())).into())?;
        socket.connect(&listener.local_addr()?.into())?;
        let client: TcpStream = socket.into();
        let (accepted, _) = listener.accept()?;
        Ok((client, accepted))
    });
    let Ok((client, accepted)) = connected else {
        return unestablished(
            history,
            fault::CONNECTION_ON_PORT,
            "could not open a loopback connection",
            judge_connection_on_the_port,
        );
    };
    let port = client.local_addr().map(|a| a.port()).unwrap_or(0);
    if source == SourcePort::Released {
        release(client, accepted, port).await;
    } else {
        // The fault is established when the kernel lists the connection on the port, and held
        // (both ends open) until the calls are done.
        let holders = outbound(port).map(|o| o.holders).unwrap_or_default();
        history.fault(
            fault::CONNECTION_ON_PORT,
            holders.iter().any(|h| h.pid == std::process::id()),
            json!({ "port": port, "holders": holders, "holder": std::process::id() }),
        );
    }
    let port_arg = port.to_string();
    call(&history, env, state.path(), &status_args(&port_arg)).await;
    let ran = call(&history, env, state.path(), &["serve", "--port", &port_arg]).await;
    if ran.ok() {
        let _ = call(&history, env, state.path(), &["stop", "--port", &port_arg]).await;
    }
    judged(history, judge_connection_on_the_port)
}

/// H3.8's judge: `serve` failed naming the port and the connection's holder (as the fault
/// recorded them), and the `status` report before it said the port is held outbound, by it.
pub fn judge_connection_on_the_port(ops: &[Op]) -> Judgement {
    let names = fault_words(ops, &["port", "holder"]);
    let surfaced = judge::must_surface(
        ops,
        "serve",
        &names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    if surfaced.outcome != RowOutcome::Surfaced {
        return surfaced;
    }
    let holder = names.get(1).cloned().unwrap_or_default();
    let report = report_of(ops.iter().find(|o| is_completion(o, "status")));
    match (report["presence"].as_str(), report["diagnosis"].as_str()) {
        (Some("outbound"), Some(diagnosis)) if diagnosis.contains(&holder) => surfaced,
        _ => Judgement::new(
            RowOutcome::Silent,
            format!(
                "serve named the connection, but status said: {}",
                one_line(&report.to_string())
            ),
        ),
    }
}

/// Closes a loopback connection so that its end does not linger on `port`: the client's end is
/// reset (linger 0: no TIME_WAIT, which would hold the port for a minute), then waits (bounded)
/// until the kernel lists nothing on the port.
async fn release(client: TcpStream, accepted: TcpStream, port: u16) {
    use std::os::fd::AsRawFd;
    let linger = nix::libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `client` is an open socket for the whole call, and `linger` is a valid
    // `struct linger` of the size passed.
    unsafe {
        nix::libc::setsockopt(
            client.as_raw_fd(),
            nix::libc::SOL_SOCKET,
            nix::libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<nix::libc::linger>() as nix::libc::socklen_t,
        );
    }
    drop(client);
    drop(accepted);
    poll::within(BOUND, async || outbound(port).is_none().then_some(())).await;
}

/// H3.8 in the row table.
pub const H3_8: RowGate = RowGate {
    id: "H3.8",
    file: file!(),
    scenario: |env| Box::pin(port_held_by_a_connection(env)),
    judge: judge_connection_on_the_port,
    controls: &[],
};
