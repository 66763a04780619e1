//! A small TCP proxy on loopback for the network-fault tests: it forwards every connection it
//! accepts to one target (a Fluss server) and can, on command, stall connections (hold their
//! bytes in one or both directions), black-hole the target (every connection, new ones
//! included, stalls), reset connections (RST) or cut them (FIN), and delay every chunk it
//! forwards. The client reaches it through `client.address-map`.
//!
//! Plain threads (two per connection, each polling its socket with a short read timeout so that
//! it notices commands), no runtime: the proxy stays out of the client's tokio runtime.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fluss_writer::backend::{call, Dest};
use fluss_writer::wire::proto;
use fluss_writer::Connection;

/// Which bytes of a stalled connection are held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// Server-to-client bytes only: the server gets (and applies) requests whose responses the
    /// client never sees.
    Responses,
    /// Both directions.
    Both,
}

const HOLD_NONE: u8 = 0;
const HOLD_RESPONSES: u8 = 1;
const HOLD_BOTH: u8 = 2;

struct Pair {
    client: TcpStream,
    server: TcpStream,
    hold: std::sync::atomic::AtomicU8,
    closed: AtomicBool,
}

impl Pair {
    fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            let _ = self.client.shutdown(Shutdown::Both);
            let _ = self.server.shutdown(Shutdown::Both);
        }
    }
}

struct State {
    target: SocketAddr,
    pairs: Mutex<Vec<Arc<Pair>>>,
    black_hole: AtomicBool,
    delay_micros: AtomicU64,
    accepted: AtomicUsize,
    stopped: AtomicBool,
}

/// One proxy: listens on an ephemeral loopback port until dropped.
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<State>,
}

impl Proxy {
    /// Listen on `127.0.0.1:0` and forward to `target` (`host:port`).
    pub fn start(target: &str) -> Proxy {
        use std::net::ToSocketAddrs;
        let target = target.to_socket_addrs().expect("proxy target").next().expect("proxy target address");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            target,
            pairs: Mutex::new(Vec::new()),
            black_hole: AtomicBool::new(false),
            delay_micros: AtomicU64::new(0),
            accepted: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
        });
        let s = state.clone();
        std::thread::Builder::new().name(format!("proxy {addr}")).spawn(move || accept_loop(listener, s)).unwrap();
        Proxy { addr, state }
    }

    /// `127.0.0.1:port` of the proxy.
    pub fn addr(&self) -> String {
        self.addr.to_string()
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.state.accepted.load(Ordering::SeqCst)
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        let mut pairs = self.state.pairs.lock().unwrap();
        pairs.retain(|p| !p.closed.load(Ordering::SeqCst));
        pairs.len()
    }

    /// Hold the bytes of every connection open now (new connections are not affected).
    pub fn stall_existing(&self, what: Stall) {
        let hold = if what == Stall::Both { HOLD_BOTH } else { HOLD_RESPONSES };
        for p in self.state.pairs.lock().unwrap().iter() {
            p.hold.store(hold, Ordering::SeqCst);
        }
    }

    /// Black-hole the target: every open connection and every new one holds its bytes in both
    /// directions (connects succeed, nothing gets through), until `heal`.
    pub fn black_hole(&self) {
        self.state.black_hole.store(true, Ordering::SeqCst);
        self.stall_existing(Stall::Both);
    }

    /// End the black hole for new connections. Stalled connections stay stalled: the client
    /// gave up on them (request timeout) and closes them.
    pub fn heal(&self) {
        self.state.black_hole.store(false, Ordering::SeqCst);
    }

    /// Reset (RST) every open connection.
    pub fn reset_existing(&self) {
        for p in self.state.pairs.lock().unwrap().drain(..) {
            let _ = socket2::SockRef::from(&p.client).set_linger(Some(Duration::ZERO));
            // The pumps see `closed`, stop, and drop their handles; the last close sends the RST.
            p.closed.store(true, Ordering::SeqCst);
        }
    }

    /// Close (FIN) every open connection.
    pub fn cut_existing(&self) {
        for p in self.state.pairs.lock().unwrap().drain(..) {
            p.close();
        }
    }

    /// Delay every forwarded chunk by `d` (zero: none).
    pub fn set_delay(&self, d: Duration) {
        self.state.delay_micros.store(d.as_micros() as u64, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        self.cut_existing();
    }
}

fn accept_loop(listener: TcpListener, state: Arc<State>) {
    while !state.stopped.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                state.accepted.fetch_add(1, Ordering::SeqCst);
                let Ok(server) = TcpStream::connect_timeout(&state.target, Duration::from_secs(2)) else {
                    continue; // the target is down: the client sees its connection closed
                };
                let _ = client.set_nonblocking(false);
                for s in [&client, &server] {
                    let _ = s.set_nodelay(true);
                    let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
                }
                let hold = if state.black_hole.load(Ordering::SeqCst) { HOLD_BOTH } else { HOLD_NONE };
                let pair = Arc::new(Pair { client, server, hold: hold.into(), closed: AtomicBool::new(false) });
                state.pairs.lock().unwrap().push(pair.clone());
                for to_server in [true, false] {
                    let (pair, state) = (pair.clone(), state.clone());
                    std::thread::spawn(move || pump(&pair, &state, to_server));
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Copy one direction of `pair` until either side closes or the pair is closed.
fn pump(pair: &Pair, state: &State, to_server: bool) {
    let (Ok(mut from), Ok(mut to)) = (
        if to_server { pair.client.try_clone() } else { pair.server.try_clone() },
        if to_server { pair.server.try_clone() } else { pair.client.try_clone() },
    ) else {
        pair.close();
        return;
    };
    let mut buf = vec![0u8; 64 * 1024];
    // Bytes read but not yet forwarded: a chunk read just before a stall began is held too.
    let mut pending: Vec<u8> = Vec::new();
    while !pair.closed.load(Ordering::SeqCst) && !state.stopped.load(Ordering::SeqCst) {
        let hold = pair.hold.load(Ordering::SeqCst);
        if hold == HOLD_BOTH || (hold == HOLD_RESPONSES && !to_server) {
            // Not reading leaves the bytes in the kernel's buffers: a stall. A client that closes
            // its side is still noticed.
            std::thread::sleep(Duration::from_millis(20));
            if hold == HOLD_BOTH && peer_closed(&pair.client) {
                pair.close();
            }
            continue;
        }
        if !pending.is_empty() {
            let delay = state.delay_micros.load(Ordering::SeqCst);
            if delay > 0 {
                std::thread::sleep(Duration::from_micros(delay));
            }
            if to.write_all(&pending).is_err() {
                break;
            }
            pending.clear();
            continue;
        }
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => break,
        }
    }
    if !pair.closed.load(Ordering::SeqCst) {
        pair.close();
    }
}

/// Whether the client closed its end (a peek that returns 0 bytes), without consuming data.
fn peer_closed(s: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(s.peek(&mut b), Ok(0))
}

/// A proxy per server of the cluster and the `client.address-map` that routes through them.
pub struct Proxied {
    pub coordinator: Proxy,
    pub tablets: Vec<Proxy>,
    pub address_map: String,
}

pub fn proxied(bootstrap: &str) -> Proxied {
    let conn = super::connect(bootstrap, &[]);
    let backend = conn.backend().clone();
    let m = conn
        .block_on(async move { call(&*backend, Dest::Any, proto::MetadataRequest::default()).await })
        .expect("Metadata from the cluster");
    conn.close(None).unwrap();
    let addr = |n: &proto::PbServerNode| format!("{}:{}", n.host, n.port);
    let coordinator_addr = addr(m.coordinator_server.as_ref().expect("the cluster names its coordinator"));
    let coordinator = Proxy::start(&coordinator_addr);
    let mut map = vec![format!("{coordinator_addr}={}", coordinator.addr())];
    let mut tablets = Vec::new();
    for t in &m.tablet_servers {
        let p = Proxy::start(&addr(t));
        map.push(format!("{}={}", addr(t), p.addr()));
        tablets.push(p);
    }
    assert!(!tablets.is_empty(), "the cluster has tablet servers");
    Proxied { coordinator, tablets, address_map: map.join(",") }
}

impl Proxied {
    /// A connection that reaches every server through its proxy (bootstrap included).
    pub fn connect(&self, extra: &[(&str, &str)]) -> Connection {
        let mut settings = vec![("client.address-map", self.address_map.as_str())];
        settings.extend_from_slice(extra);
        let bootstrap = self.coordinator.addr();
        super::connect(&bootstrap, &settings)
    }

    pub fn tablet_connections_accepted(&self) -> usize {
        self.tablets.iter().map(Proxy::accepted).sum()
    }
}
