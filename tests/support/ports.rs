//! Loopback ports where nothing answers, held for as long as a test needs them: a port that was
//! merely free a moment ago (or a well-known one such as 9) may be taken by another test or
//! process by the time the code under test connects to it.

use std::net::SocketAddr;

use tokio::net::TcpSocket;

/// A loopback port bound but never listened on: every connection to it is refused, and while
/// this value lives nothing else can bind the port and answer there.
pub struct RefusingPort {
    address: SocketAddr,
    _socket: TcpSocket,
}

impl RefusingPort {
    pub fn bind() -> Self {
        let socket = TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind("127.0.0.1:0".parse().unwrap())
            .expect("bind a loopback port");
        let address = socket.local_addr().expect("the bound address");
        Self {
            address,
            _socket: socket,
        }
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// `{scheme}://127.0.0.1:{port}`.
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}", self.address)
    }
}
