//! `toxics-bench`: what the fault proxy adds to a round trip when no toxic is installed.
//!
//! Small messages go direct and through the embedded proxy in alternating batches; the median, p90
//! and p99 of each are compared. It owns the measurement only; the numbers go into
//! `docs/benchmarks.md` by hand. Usage: `cargo run --release -p toxics --bin toxics-bench --
//! [--rounds N] [--size BYTES] [--batches N]`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use toxics::toxic::Noop;
use toxics::{ProxyConfig, Server, ToxicSpec};

struct Args {
    /// Round trips measured per path (split across batches).
    rounds: usize,
    /// Bytes per message.
    size: usize,
    /// Alternating batches per path, so drift in the machine's load hits both paths alike.
    batches: usize,
}

fn parse_args() -> Args {
    let mut args = Args {
        rounds: 20_000,
        size: 64,
        batches: 10,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || -> usize {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage(&format!("{flag} needs a number")))
        };
        match flag.as_str() {
            "--rounds" => args.rounds = value(),
            "--size" => args.size = value(),
            "--batches" => args.batches = value().max(1),
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    args
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("toxics-bench: {problem}");
    }
    eprintln!(
        "usage: toxics-bench [--rounds N (20000)] [--size BYTES (64)] [--batches N (10)]\n\
         Measures the round trip through the embedded fault proxy with no toxic (and with one\n\
         noop toxic in the chain) against a direct connection to the same echo server."
    );
    std::process::exit(if problem.is_empty() { 0 } else { 2 })
}

/// A blocking echo server, one thread per connection. It and the client are plain threads, so
/// only the proxy runs on tokio.
fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            conn.set_nodelay(true).unwrap();
            std::thread::spawn(move || {
                let mut buf = [0u8; 64 * 1024];
                loop {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if conn.write_all(&buf[..n]).is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    addr
}

/// Round-trip times of `rounds` exchanges of `size` bytes on one connection.
fn round_trips(conn: &mut TcpStream, rounds: usize, size: usize) -> Vec<Duration> {
    let msg = vec![7u8; size];
    let mut back = vec![0u8; size];
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        conn.write_all(&msg).unwrap();
        conn.read_exact(&mut back).unwrap();
        times.push(start.elapsed());
    }
    times
}

fn connect(addr: SocketAddr) -> TcpStream {
    let c = TcpStream::connect(addr).unwrap();
    c.set_nodelay(true).unwrap();
    c
}

struct Stats {
    median: f64,
    p90: f64,
    p99: f64,
    mean: f64,
}

fn stats(mut t: Vec<Duration>) -> Stats {
    t.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let at = |p: f64| us(t[((t.len() as f64 * p).ceil() as usize).clamp(1, t.len()) - 1]);
    Stats {
        median: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        mean: t.iter().map(|d| us(*d)).sum::<f64>() / t.len() as f64,
    }
}

fn main() {
    let args = parse_args();
    let echo = echo_server();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime
        .block_on(Server::builder().seed(1).serve("127.0.0.1:0"))
        .unwrap();
    let bare = server
        .proxies()
        .create(ProxyConfig::new("bare", echo))
        .unwrap();
    let chained = server
        .proxies()
        .create(ProxyConfig::new("one_noop", echo))
        .unwrap();
    runtime
        .block_on(chained.inject(ToxicSpec::new(Noop {})))
        .unwrap()
        .forget();

    let mut direct = connect(echo);
    let mut proxied = connect(bare.listen_addr().unwrap());
    let mut with_noop = connect(chained.listen_addr().unwrap());
    // Warm up every path (connections, caches, the runtime's threads).
    for c in [&mut direct, &mut proxied, &mut with_noop] {
        round_trips(c, 2000, args.size);
    }

    let per_batch = (args.rounds / args.batches).max(1);
    let (mut d, mut p, mut n) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..args.batches {
        d.extend(round_trips(&mut direct, per_batch, args.size));
        p.extend(round_trips(&mut proxied, per_batch, args.size));
        n.extend(round_trips(&mut with_noop, per_batch, args.size));
    }
    let (d, p, n) = (stats(d), stats(p), stats(n));

    println!(
        "toxics-bench: {} round trips of {} bytes per path, {} alternating batches, {} CPUs",
        per_batch * args.batches,
        args.size,
        args.batches,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!("| path | median µs | p90 µs | p99 µs | mean µs | median vs direct |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, s) in [
        ("direct to the echo server", &d),
        ("through the proxy, no toxic", &p),
        ("through the proxy, one noop toxic", &n),
    ] {
        println!(
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2}× |",
            s.median,
            s.p90,
            s.p99,
            s.mean,
            s.median / d.median
        );
    }
    println!();
    println!(
        "overhead per round trip, no toxic: {:.1} µs median ({:.3} ms; target < 0.1 ms)",
        p.median - d.median,
        (p.median - d.median) / 1000.0
    );
    println!(
        "overhead per round trip, one noop toxic: {:.1} µs median",
        n.median - d.median
    );
    drop(server);
}
