//! A TCP relay a test can cut and restore: takes one client's connection to a server down (and
//! keeps it down) while the server, and every other client of it, carries on.

use std::net::SocketAddr;

use anyhow::Context;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Relays every connection made to [`CuttableProxy::addr`] to the upstream address until
/// [`CuttableProxy::cut`]; stops on drop.
#[derive(Debug)]
pub struct CuttableProxy {
    addr: SocketAddr,
    up: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl CuttableProxy {
    /// Relays `127.0.0.1:<free port>` to `upstream` (`host:port`, or a URL such as
    /// `nats://127.0.0.1:4222`).
    pub async fn start(upstream: &str) -> anyhow::Result<CuttableProxy> {
        let upstream = upstream
            .split_once("://")
            .map_or(upstream, |(_, rest)| rest)
            .to_owned();
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .context("binding the proxy")?;
        let addr = listener.local_addr()?;
        let (up, _) = watch::channel(true);
        let task = tokio::spawn(accept(listener, upstream, up.clone()));
        Ok(CuttableProxy { addr, up, task })
    }

    /// `nats://` plus the address clients should connect to.
    pub fn nats_url(&self) -> String {
        format!("nats://{}", self.addr)
    }

    /// Where the proxy listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes every relayed connection and closes new ones at once, until [`Self::restore`].
    pub fn cut(&self) {
        self.up.send_replace(false);
    }

    /// Relays new connections again.
    pub fn restore(&self) {
        self.up.send_replace(true);
    }
}

impl Drop for CuttableProxy {
    fn drop(&mut self) {
        self.up.send_replace(false);
        self.task.abort();
    }
}

async fn accept(listener: TcpListener, upstream: String, up: watch::Sender<bool>) {
    while let Ok((client, _)) = listener.accept().await {
        if !*up.borrow() {
            // Accepted and dropped: the client sees its connection close before any greeting.
            continue;
        }
        tokio::spawn(relay(client, upstream.clone(), up.subscribe()));
    }
}

async fn relay(mut client: TcpStream, upstream: String, mut up: watch::Receiver<bool>) {
    let Ok(mut server) = TcpStream::connect(&upstream).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        // Both sockets are dropped here: the client and the server each see the connection end.
        _ = up.wait_for(|up| !*up) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::CuttableProxy;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    #[tokio::test]
    async fn relays_until_cut_and_again_after_restore() -> anyhow::Result<()> {
        let server = TcpListener::bind(("127.0.0.1", 0)).await?;
        let upstream = server.local_addr()?.to_string();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = server.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok(n) = socket.read(&mut buf).await {
                        if n == 0 || socket.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        let proxy = CuttableProxy::start(&upstream).await?;
        let echo = |mut stream: TcpStream| async move {
            stream.write_all(b"ping").await?;
            let mut buf = [0u8; 4];
            stream.read_exact(&mut buf).await?;
            anyhow::Ok((stream, buf))
        };
        let (mut open, buf) = echo(TcpStream::connect(proxy.addr()).await?).await?;
        assert_eq!(&buf, b"ping");

        proxy.cut();
        let mut rest = Vec::new();
        // The relayed connection ends (EOF or reset, never more data)...
        let ended = open.read_to_end(&mut rest).await;
        assert!(ended.map_or(true, |n| n == 0), "{rest:?}");
        // ...and a new one is closed before it can say anything.
        assert!(echo(TcpStream::connect(proxy.addr()).await?).await.is_err());

        proxy.restore();
        let (_, buf) = echo(TcpStream::connect(proxy.addr()).await?).await?;
        assert_eq!(&buf, b"ping");
        Ok(())
    }
}
