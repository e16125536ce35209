//! A TCP relay that holds back everything the server sends for a fixed time: JetStream's acks
//! come late, as from a slow disk, so concurrent writes are sure to overlap their publishes.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Relays `127.0.0.1:<free port>` to a server, delaying its replies; stops accepting on drop.
#[derive(Debug)]
pub struct SlowLink {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl SlowLink {
    /// Relays to `upstream` (a `nats://host:port` URL), each byte from it `delay` late.
    pub async fn start(upstream: &str, delay: Duration) -> anyhow::Result<SlowLink> {
        let upstream = upstream.trim_start_matches("nats://").to_owned();
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .context("binding the slow link")?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream.clone(), delay));
            }
        });
        Ok(SlowLink { addr, task })
    }

    /// `nats://` plus the address clients should connect to.
    pub fn nats_url(&self) -> String {
        format!("nats://{}", self.addr)
    }
}

impl Drop for SlowLink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(client: TcpStream, upstream: String, delay: Duration) {
    let Ok(server) = TcpStream::connect(&upstream).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    tokio::spawn(async move { tokio::io::copy(&mut client_read, &mut server_write).await });
    // Read as it arrives, write each chunk once its time has come: order and bytes unchanged.
    let (chunks, mut due) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    tokio::spawn(async move {
        let mut buffer = vec![0; 64 * 1024];
        while let Ok(n @ 1..) = server_read.read(&mut buffer).await {
            if chunks
                .send((Instant::now() + delay, buffer[..n].to_vec()))
                .is_err()
            {
                break;
            }
        }
    });
    while let Some((at, bytes)) = due.recv().await {
        tokio::time::sleep_until(at).await;
        if client_write.write_all(&bytes).await.is_err() {
            break;
        }
    }
}
