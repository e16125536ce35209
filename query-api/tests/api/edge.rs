//! The shipped edge, `deploy/nginx/warden.conf`, run for real in front of query-api: forged
//! `X-Forwarded-For` headers do not buy a public client more quota or spend someone else's, and
//! the ops endpoints are not reachable through it. `./deploy/test.sh` installs nginx (or set
//! `NGINX_BIN`).

use crate::hardening::raw_exchange;
use crate::helpers::{TestApp, start};
use reqwest::StatusCode;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use uuid::Uuid;

const SHIPPED: &str = include_str!("../../../deploy/nginx/warden.conf");

/// An nginx running the shipped config, with its upstreams and port rewritten for the test.
struct Edge {
    addr: SocketAddr,
    child: Child,
    dir: PathBuf,
}

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `NGINX_BIN`, else the usual places.
fn nginx_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("NGINX_BIN") {
        return PathBuf::from(bin);
    }
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .unwrap_or_else(|| {
            panic!("nginx is missing: run ./deploy/test.sh, which installs it, or set NGINX_BIN")
        })
}

/// The shipped config with every upstream at `upstream` and the edge on `port`; each rewrite
/// must apply, so a changed config cannot make this test check something else.
fn render(upstream: SocketAddr, port: u16) -> String {
    let mut conf = SHIPPED.to_owned();
    for (from, to) in [
        ("server ingest:8081;", format!("server {upstream};")),
        ("server query-api:8082;", format!("server {upstream};")),
        ("listen 8080;", format!("listen 127.0.0.1:{port};")),
    ] {
        assert_eq!(conf.matches(from).count(), 1, "'{from}' in warden.conf");
        conf = conf.replace(from, &to);
    }
    conf
}

/// A port nothing listens on right now (nginx binds it a moment later; a clash is retried).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// One process (`master_process off`), so killing the child leaves no worker holding the port.
fn main_conf(dir: &Path, site: &Path) -> String {
    let d = dir.display();
    format!(
        "master_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
         \x20 fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
         \x20 include {};\n}}\n",
        site.display()
    )
}

impl Edge {
    async fn start(upstream: SocketAddr, client: &reqwest::Client) -> Edge {
        let bin = nginx_bin();
        for _ in 0..5 {
            let dir = std::env::temp_dir().join(format!("warden-edge-{}", Uuid::new_v4().simple()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            let port = free_port();
            let site = dir.join("warden.conf");
            std::fs::write(&site, render(upstream, port)).expect("site written");
            let conf = dir.join("nginx.conf");
            std::fs::write(&conf, main_conf(&dir, &site)).expect("conf written");
            let child = Command::new(&bin)
                .arg("-p")
                .arg(&dir)
                .arg("-e")
                .arg(dir.join("error.log"))
                .arg("-c")
                .arg(&conf)
                .args(["-g", "daemon off;"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{} does not run: {e}", bin.display()));
            let mut edge = Edge {
                addr: ([127, 0, 0, 1], port).into(),
                child,
                dir,
            };
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(Some(_)) = edge.child.try_wait() {
                    let log =
                        std::fs::read_to_string(edge.dir.join("error.log")).unwrap_or_default();
                    if log.contains("Address already in use") {
                        break; // another process took the port meanwhile: try another
                    }
                    panic!("nginx refused the shipped config: {log}");
                }
                let health = client.get(format!("http://{}/healthz", edge.addr)).send();
                if health.await.is_ok_and(|r| r.status() == StatusCode::OK) {
                    return edge;
                }
                assert!(
                    Instant::now() < deadline,
                    "nginx did not come up within 10 s"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        panic!("no free port for nginx after 5 tries");
    }
}

#[tokio::test]
async fn behind_the_shipped_edge_forged_forwarded_for_headers_are_one_client() -> anyhow::Result<()>
{
    let app = TestApp::spawn().await?;
    let mut config = app.config.clone();
    // As deployed: the edge (here 127.0.0.1) is the only trusted proxy.
    config.trusted_proxies = vec!["127.0.0.1".parse().map_err(anyhow::Error::msg)?];
    let (api, shutdown) = start(config, &app.client).await?;
    let edge = Edge::start(api, &app.client).await;
    let url = format!("http://{}/api/public/reviews", edge.addr);

    // A made-up X-Forwarded-For on every request, naming a victim on half of them.
    let mut statuses = Vec::new();
    for i in 0..31 {
        let forged = if i % 2 == 0 {
            format!("198.51.100.{i}")
        } else {
            "203.0.113.10, 10.0.0.1".to_owned()
        };
        let response = app
            .client
            .get(&url)
            .header("x-forwarded-for", forged)
            .send()
            .await?;
        statuses.push(response.status());
    }
    assert!(
        statuses[..30].iter().all(|s| *s == StatusCode::OK),
        "{statuses:?}"
    );
    assert_eq!(
        statuses[30],
        StatusCode::TOO_MANY_REQUESTS,
        "31 requests with forged headers got past a quota of 30: {statuses:?}"
    );
    // The victim the forgeries named (reaching query-api through a trusted proxy) is untouched.
    let victim = app
        .client
        .get(format!("http://{api}/api/public/reviews"))
        .header("x-forwarded-for", "203.0.113.10")
        .send()
        .await?;
    assert_eq!(victim.status(), StatusCode::OK);
    shutdown.cancel();
    Ok(())
}

#[tokio::test]
async fn the_shipped_edge_does_not_route_the_ops_endpoints() -> anyhow::Result<()> {
    let app = TestApp::spawn().await?;
    let edge = Edge::start(app.addr, &app.client).await;
    // Spellings nginx normalises before it picks a location, sent as raw bytes.
    for target in [
        "/metrics",
        "/readyz",
        "/readyz?verbose=1",
        "//metrics",
        "/%6Detrics",
        "/api/../readyz",
        "/./metrics",
    ] {
        let request = format!("GET {target} HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\r\n");
        let answer = raw_exchange(edge.addr, request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 404"), "{target}: {answer}");
        assert!(
            answer
                .to_ascii_lowercase()
                .contains("content-type: application/problem+json"),
            "{target}: {answer}"
        );
        assert!(
            answer.contains("\"code\":\"not_found\""),
            "{target}: {answer}"
        );
    }
    // Everything else still goes through, and the services still serve probes directly.
    let through = |path: &str| app.client.get(format!("http://{}{path}", edge.addr)).send();
    assert_eq!(through("/healthz").await?.status(), StatusCode::OK);
    assert_eq!(
        through("/api/public/reviews").await?.status(),
        StatusCode::OK
    );
    assert_eq!(through("/api/docs/").await?.status(), StatusCode::OK);
    assert_eq!(
        app.get_with("/readyz", None).await?.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.get_with("/metrics", None).await?.status(),
        StatusCode::OK
    );
    Ok(())
}
