//! A private JetStream cluster: several nats-server processes on loopback, routed together.

use crate::nats::{greets_as, nats_server_bin};
use anyhow::{Context, bail};
use std::fs::{self, OpenOptions};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use uuid::Uuid;

const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the members may take to elect a JetStream meta leader.
const META_LEADER_TIMEOUT: Duration = Duration::from_secs(30);
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// One member: its ports, store and process.
#[derive(Debug)]
struct Node {
    name: String,
    client_port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

/// Cluster starts tried when a picked port was taken meanwhile.
const START_ATTEMPTS: usize = 3;

/// A JetStream cluster of nats-server processes (file storage, `sync_interval: always`,
/// max_payload 8MB, each with its own store dir); every process is killed on drop and the
/// dirs removed.
#[derive(Debug)]
pub struct NatsCluster {
    bin: PathBuf,
    dir: PathBuf,
    nodes: Vec<Node>,
}

impl NatsCluster {
    /// Starts `size` routed servers and waits until each accepts clients and the cluster has
    /// elected a JetStream meta leader (bounded).
    pub async fn start(size: usize) -> anyhow::Result<NatsCluster> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match Self::start_once(size).await {
                // A port picked by free_port can be taken by another test before nats-server
                // binds it; the failed cluster is dropped (killed, dirs removed) and new ports
                // are picked.
                Err(error)
                    if attempt < START_ATTEMPTS
                        && format!("{error:#}").contains("address already in use") => {}
                result => return result,
            }
        }
    }

    async fn start_once(size: usize) -> anyhow::Result<NatsCluster> {
        anyhow::ensure!(size >= 1, "a cluster has at least one server");
        let id = Uuid::new_v4().simple().to_string();
        let dir = std::env::temp_dir().join(format!("nats-cluster-{id}"));
        let mut cluster = NatsCluster {
            bin: nats_server_bin()?,
            dir,
            nodes: Vec::new(),
        };
        let route_ports: Vec<u16> = (0..size).map(|_| crate::free_port()).collect();
        let routes: Vec<String> = route_ports
            .iter()
            .map(|port| format!("nats-route://127.0.0.1:{port}"))
            .collect();
        for (i, route_port) in route_ports.iter().enumerate() {
            let node_dir = cluster.dir.join(format!("n{i}"));
            fs::create_dir_all(node_dir.join("store"))
                .with_context(|| format!("creating {}", node_dir.display()))?;
            let node = Node {
                name: format!("c{}-n{i}", &id[..8]),
                client_port: crate::free_port(),
                dir: node_dir,
                child: None,
            };
            let config = format!(
                "server_name: \"{name}\"\n\
                 listen: 127.0.0.1:{client}\n\
                 max_payload: 8MB\n\
                 jetstream {{ store_dir: \"{store}\", sync_interval: always }}\n\
                 cluster {{\n  name: \"c{cluster}\"\n  listen: 127.0.0.1:{route_port}\n  \
                 routes: [{routes}]\n}}\n",
                name = node.name,
                client = node.client_port,
                store = node.dir.join("store").display(),
                cluster = &id[..8],
                routes = routes.join(", "),
            );
            let path = node.dir.join("nats.conf");
            fs::write(&path, config).with_context(|| format!("writing {}", path.display()))?;
            cluster.nodes.push(node);
        }
        for i in 0..size {
            cluster.spawn(i)?;
        }
        for i in 0..size {
            cluster.wait_until_accepts(i).await?;
        }
        cluster.wait_for_meta_leader().await?;
        Ok(cluster)
    }

    /// `nats://127.0.0.1:PORT` of every member, in order.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Self::url_of).collect()
    }

    /// Every member's URL, comma-separated (the form `NATS_URL` takes).
    pub fn url_list(&self) -> String {
        self.urls().join(",")
    }

    /// The `server_name` of member `i` (as stream info names its leader and replicas).
    pub fn name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }

    /// The member whose `server_name` is `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|node| node.name == name)
    }

    /// SIGKILLs member `i` (like a crash); its store dir is kept for `restart`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].child.take() {
            // Errors mean it has already exited; wait() reaps it either way.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts member `i` again on the same ports and store (killing it first if it runs).
    pub async fn restart(&mut self, i: usize) -> anyhow::Result<()> {
        self.kill(i);
        self.spawn(i)?;
        self.wait_until_accepts(i).await
    }

    fn url_of(node: &Node) -> String {
        format!("nats://127.0.0.1:{}", node.client_port)
    }

    fn spawn(&mut self, i: usize) -> anyhow::Result<()> {
        let node = &mut self.nodes[i];
        let log_path = node.dir.join("nats.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("opening {}", log_path.display()))?;
        let child = Command::new(&self.bin)
            .arg("-c")
            .arg(node.dir.join("nats.conf"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot run {}", self.bin.display()))?;
        node.child = Some(child);
        Ok(())
    }

    async fn wait_until_accepts(&mut self, i: usize) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let node = &mut self.nodes[i];
            if let Some(child) = node.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                node.child = None;
                bail!("{} exited ({status}); log:\n{}", node.name, log_of(node));
            }
            if greets_as(node.client_port, &node.name).await {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} did not accept clients within {READY_TIMEOUT:?}; log:\n{}",
                    node.name,
                    log_of(node)
                );
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }

    /// Polls `$JS.API.INFO` until JetStream answers without an error, which needs a meta leader.
    async fn wait_for_meta_leader(&self) -> anyhow::Result<()> {
        let client = async_nats::connect(self.urls()).await?;
        let deadline = Instant::now() + META_LEADER_TIMEOUT;
        loop {
            let answer = tokio::time::timeout(
                Duration::from_secs(2),
                client.request("$JS.API.INFO", "".into()),
            )
            .await;
            let last = match answer {
                Ok(Ok(message)) => {
                    let text = String::from_utf8_lossy(&message.payload).into_owned();
                    if !text.contains("\"error\"") {
                        return Ok(());
                    }
                    text
                }
                Ok(Err(error)) => error.to_string(),
                Err(_) => "no answer within 2 s".to_owned(),
            };
            if Instant::now() >= deadline {
                bail!(
                    "the cluster elected no JetStream meta leader within {META_LEADER_TIMEOUT:?}: {last}"
                );
            }
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }
}

fn log_of(node: &Node) -> String {
    fs::read_to_string(node.dir.join("nats.log")).unwrap_or_default()
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::NatsCluster;
    use async_nats::jetstream::{self, stream};

    #[tokio::test]
    async fn a_replicated_stream_survives_a_killed_member() -> anyhow::Result<()> {
        let mut cluster = NatsCluster::start(3).await?;
        assert_eq!(cluster.urls().len(), 3);
        let js = jetstream::new(async_nats::connect(cluster.urls()).await?);
        let config = stream::Config {
            name: "HARNESS".into(),
            subjects: vec!["harness.>".into()],
            num_replicas: 3,
            storage: stream::StorageType::File,
            ..Default::default()
        };
        let mut created = js.create_stream(config).await?;
        js.publish("harness.a", "one".into()).await?.await?;
        let leader = created.info().await?.cluster.clone().and_then(|c| c.leader);
        let victim = leader
            .as_deref()
            .and_then(|name| cluster.index_of(name))
            .unwrap_or(0);
        cluster.kill(victim);
        // A new stream leader takes over; publishing works again within the election.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let acked = match js.publish("harness.a", "two".into()).await {
                Ok(ack) => ack.await.is_ok(),
                Err(_) => false,
            };
            match acked {
                true => break,
                _ if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                _ => anyhow::bail!("no publish succeeded after killing the leader"),
            }
        }
        cluster.restart(victim).await?;
        let state = js.get_stream("HARNESS").await?.info().await?.state.clone();
        assert!(state.messages >= 2);
        Ok(())
    }
}
