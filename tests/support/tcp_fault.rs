//! A TCP relay that can go silent: in front of a service the SDK reaches over plain HTTP (the
//! local KMS), it forwards every byte while up; while down it accepts connections and never
//! answers, as a service that is unreachable behind a black-holing network or hung would, so
//! the client waits for its own timeouts. Going down cuts the connections already open, so
//! pooled connections fail too.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How long a connection accepted while down is held open without an answer.
const HOLD: Duration = Duration::from_secs(120);

#[derive(Default)]
struct State {
    down: AtomicBool,
    connections: Mutex<Vec<JoinHandle<()>>>,
}

impl State {
    fn cut_all(&self) {
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

/// The relay, on a loopback port until dropped.
pub struct SilentRelay {
    address: SocketAddr,
    state: Arc<State>,
    acceptor: JoinHandle<()>,
}

impl SilentRelay {
    /// Relays to `upstream` (`host:port` or `http://host:port`).
    pub async fn start(upstream: &str) -> Self {
        let upstream = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let shared = state.clone();
        let acceptor = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                let down = shared.down.load(Ordering::SeqCst);
                let connection = tokio::spawn(async move {
                    if down {
                        // Holding the socket without reading: the request is never answered.
                        let _held = client;
                        tokio::time::sleep(HOLD).await;
                    } else if let Ok(server) = TcpStream::connect(&upstream).await {
                        relay(client, server).await;
                    }
                });
                let mut connections = shared.connections.lock().unwrap();
                connections.retain(|c| !c.is_finished());
                connections.push(connection);
            }
        });
        Self {
            address,
            state,
            acceptor,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Stops answering: open connections are cut, new ones are held unanswered.
    pub fn go_silent(&self) {
        self.state.down.store(true, Ordering::SeqCst);
        self.state.cut_all();
    }

    /// Relays again; the connections held while silent are closed.
    pub fn answer_again(&self) {
        self.state.down.store(false, Ordering::SeqCst);
        self.state.cut_all();
    }
}

async fn relay(mut client: TcpStream, mut server: TcpStream) {
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}

impl Drop for SilentRelay {
    fn drop(&mut self) {
        self.acceptor.abort();
        self.state.cut_all();
    }
}
