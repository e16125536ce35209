//! The staff dashboard's reads on the large dataset plus the servers' history: the Overview
//! and a 30-day server chart (their JSON endpoints, which run the same query functions as the
//! pages, and the pages themselves), and sign-in with its Argon2id check.
//!
//! Latency is measured by the load generator on loopback, from sending the request to the last
//! byte of the response: an upper bound on the server's time. query-api's own
//! `http_request_duration_seconds` histogram is read afterwards as a cross-check (its buckets
//! only say how many requests took at most 50 ms).

use crate::stats::{Latencies, Measurement};
use crate::timed::WARM_UP;
use futures::future::join_all;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::header::{CONTENT_TYPE, COOKIE, SET_COOKIE};
use reqwest::{RequestBuilder, StatusCode};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Sign-ins per login within a minute, under the per-login quota of 10.
const PER_LOGIN: usize = 8;

/// What the dashboard measurements need.
pub(crate) struct Dashboard<'a> {
    /// The load generator's client.
    pub(crate) http: &'a reqwest::Client,
    /// query-api.
    pub(crate) base_url: &'a str,
    /// Dashboard keys of the account, used round robin (60 requests / minute each).
    pub(crate) keys: &'a [String],
    /// The account's servers.
    pub(crate) servers: &'a [Uuid],
    /// The same client without following redirects.
    pub(crate) http_no_redirect: &'a reqwest::Client,
    /// Players of the account's dataset, named `data::player_name(0..players)`.
    pub(crate) players: usize,
}

/// A series of sequential requests: `count` timed after [`WARM_UP`] untimed ones. A request
/// counts when it answers `expect` and its body arrives.
async fn series(
    name: &str,
    what: &str,
    count: usize,
    expect: StatusCode,
    mut request: impl FnMut(&mut StdRng, usize) -> RequestBuilder,
) -> Measurement {
    let mut rng = StdRng::seed_from_u64(7);
    for n in 0..WARM_UP {
        if let Ok(response) = request(&mut rng, n).send().await {
            let _ = response.bytes().await;
        }
    }
    let (mut latencies, mut errors, started) = (Latencies::default(), 0u64, Instant::now());
    for n in WARM_UP..WARM_UP + count {
        let request = request(&mut rng, n);
        let sent = Instant::now();
        let ok = match request.send().await {
            Ok(response) if response.status() == expect => response.bytes().await.is_ok(),
            _ => false,
        };
        if ok {
            latencies.push(sent.elapsed());
        } else {
            errors += 1;
        }
    }
    let unit = "requests";
    let done = latencies.len() as u64;
    Measurement::new(
        name,
        what,
        unit,
        done,
        started.elapsed(),
        Some(&latencies),
        errors,
    )
}

impl Dashboard<'_> {
    /// `GET /api/overview` and `GET /api/servers/{id}/history?range=30d`, `count` each.
    pub(crate) async fn json_reads(&self, count: usize) -> Vec<Measurement> {
        let key = |n: usize| self.keys[n % self.keys.len().max(1)].clone();
        let overview = series(
            "overview",
            "GET /api/overview (servers, players and staff online, 24 h network chart from \
             five-minute rollups, newest activity), sequential",
            count,
            StatusCode::OK,
            |_, n| {
                let url = format!("{}/api/overview", self.base_url);
                self.http.get(url).bearer_auth(key(2 * n))
            },
        )
        .await;
        let chart = series(
            "server_chart_30d",
            "GET /api/servers/{id}/history?range=30d (360 two-hour buckets from hourly rollups, \
             downtime and low-TPS spells), random server, sequential",
            count,
            StatusCode::OK,
            |rng, n| {
                let server = self.servers[rng.random_range(0..self.servers.len().max(1))];
                let url = format!("{}/api/servers/{server}/history?range=30d", self.base_url);
                self.http.get(url).bearer_auth(key(2 * n + 1))
            },
        )
        .await;
        vec![overview, chart]
    }

    /// The pages behind session cookies (several members' in turn, so a per-member quota
    /// would not be what is measured): `/` always, `/servers/{id}?range=30d` when this build
    /// has it (else a note says so), Trends and Funnels as they open, and the header's player
    /// search (suggestions, and the form that opens one player).
    pub(crate) async fn pages(
        &self,
        cookies: &[String],
        count: usize,
    ) -> (Vec<Measurement>, Vec<String>) {
        let mut turn = 0usize;
        let mut get = |path: String| {
            turn += 1;
            let url = format!("{}{path}", self.base_url);
            let cookie = cookies[turn % cookies.len().max(1)].as_str();
            self.http.get(url).header(COOKIE, cookie)
        };
        let mut out = vec![
            series(
                "overview_page",
                "GET / (the Overview page, HTML) with a session cookie, sequential",
                count,
                StatusCode::OK,
                |_, _| get("/".into()),
            )
            .await,
        ];
        let mut notes = Vec::new();
        let probe = self
            .servers
            .first()
            .map(|s| format!("/servers/{s}?range=30d"));
        let exists = match probe {
            Some(path) => get(path)
                .send()
                .await
                .is_ok_and(|r| r.status() == StatusCode::OK),
            None => false,
        };
        if exists {
            out.push(
                series(
                    "server_page_30d",
                    "GET /servers/{id}?range=30d (a server's page, HTML) with a session cookie, \
                     random server, sequential",
                    count,
                    StatusCode::OK,
                    |rng, _| {
                        let server = self.servers[rng.random_range(0..self.servers.len())];
                        get(format!("/servers/{server}?range=30d"))
                    },
                )
                .await,
            );
        } else {
            notes.push(
                "server_page_30d: not measured, GET /servers/{id}?range=30d did not answer 200 \
                 in this build; server_chart_30d (the same query function as JSON) stands for it"
                    .to_owned(),
            );
        }
        out.push(
            series(
                "trends_page",
                "GET /analytics/trends (the Trends page as it opens: joins per day over 30 \
                 days, HTML) with a session cookie, sequential",
                count,
                StatusCode::OK,
                |_, _| get("/analytics/trends".into()),
            )
            .await,
        );
        out.push(
            series(
                "funnels_page",
                "GET /funnels (the Funnels page as it opens, with its example funnel, HTML) \
                 with a session cookie, sequential",
                count,
                StatusCode::OK,
                |_, _| get("/funnels".into()),
            )
            .await,
        );
        let players = self.players.max(1);
        out.push(
            series(
                "player_suggestions",
                "GET /players/suggestions?q=<the first 8 letters of a player's name, a prefix \
                 many names share> (the header search's suggestions, HTML) with a session \
                 cookie, sequential",
                count,
                StatusCode::OK,
                |rng, _| {
                    let name = crate::data::player_name(rng.random_range(0..players));
                    get(format!(
                        "/players/suggestions?q={}",
                        &name[..name.len().min(8)]
                    ))
                },
            )
            .await,
        );
        // One match answers 303 to the player's page: timed without following it.
        let find = self.http_no_redirect.clone();
        let mut turn = 0usize;
        out.push(
            series(
                "player_find",
                "GET /players/find?q=<a player's exact name> (the header search's form: 303 to \
                 the player's page, not followed) with a session cookie, sequential",
                count,
                StatusCode::SEE_OTHER,
                |rng, _| {
                    turn += 1;
                    let name = crate::data::player_name(rng.random_range(0..players));
                    let url = format!("{}/players/find?q={name}", self.base_url);
                    let cookie = cookies[turn % cookies.len().max(1)].as_str();
                    find.get(url).header(COOKIE, cookie)
                },
            )
            .await,
        );
        (out, notes)
    }
}

/// The share of query-api's own timings of `route` (status 200) at or under 50 ms, and how
/// many it timed, from `/metrics`.
pub(crate) async fn server_side_within_50ms(
    http: &reqwest::Client,
    base_url: &str,
    route: &str,
) -> Option<(f64, f64)> {
    let url = format!("{base_url}/metrics");
    let text = http.get(url).send().await.ok()?.text().await.ok()?;
    let bucket = |le: &str| {
        text.lines()
            .filter(|line| line.starts_with("http_request_duration_seconds_bucket{"))
            .filter(|line| line.contains(&format!("route=\"{route}\"")))
            .filter(|line| line.contains("status=\"200\""))
            .filter(|line| line.contains(&format!("le=\"{le}\"")))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>()
    };
    let total = bucket("+Inf");
    (total > 0.0).then(|| (bucket("0.05") / total, total))
}

/// The dashboard team members sign-ins use: logins and passwords.
pub(crate) struct SignIns {
    /// (login, password) of each member.
    pub(crate) members: Vec<(String, String)>,
}

impl SignIns {
    /// Logins for `attempts` sign-ins, at most [`PER_LOGIN`] each.
    pub(crate) fn for_attempts(attempts: usize) -> SignIns {
        let members = (0..attempts.div_ceil(PER_LOGIN).max(1))
            .map(|i| {
                let login = format!("signin-{i}@bench.example");
                (login, format!("bench-sign-in-password-{i}"))
            })
            .collect();
        SignIns { members }
    }

    /// Sign-in attempt `n`: a form POST from its own client address (query-api trusts the
    /// loopback proxy's `X-Forwarded-For` in the bench, so the per-IP quota of 30 a minute is
    /// not what is measured). Returns the session cookie (`name=value`) on success.
    async fn attempt(&self, http: &reqwest::Client, base_url: &str, n: usize) -> Option<String> {
        let (login, password) = &self.members[(n / PER_LOGIN) % self.members.len()];
        let body = format!("login={}&password={password}", login.replace('@', "%40"));
        let client = format!("10.{}.{}.{}", (n >> 16) & 255, (n >> 8) & 255, 1 + n % 250);
        let response = http
            .post(format!("{base_url}/login"))
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header("sec-fetch-site", "same-origin")
            .header("x-forwarded-for", client)
            .body(body)
            .send()
            .await
            .ok()?;
        let cookie = (response.status() == StatusCode::SEE_OTHER)
            .then(|| {
                response
                    .headers()
                    .get(SET_COOKIE)?
                    .to_str()
                    .ok()?
                    .split(';')
                    .next()
                    .map(str::to_owned)
            })
            .flatten();
        response.bytes().await.ok()?;
        cookie
    }

    /// `sequential` sign-ins one after another, then `concurrent` spread over `clients`
    /// clients at once. Returns both measurements and a session cookie of each login.
    pub(crate) async fn measure(
        &self,
        base_url: &str,
        sequential: usize,
        concurrent: usize,
        clients: usize,
    ) -> anyhow::Result<(Vec<Measurement>, Vec<String>)> {
        // The sign-in answers 303 with the cookie; following the redirect would time `/` too.
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()?;
        let mut cookies = Vec::new();
        for n in 0..WARM_UP {
            if let Some(cookie) = self.attempt(&http, base_url, n).await
                && n % PER_LOGIN == 0
            {
                cookies.push(cookie);
            }
        }
        let (mut latencies, mut errors, started) = (Latencies::default(), 0u64, Instant::now());
        for n in WARM_UP..WARM_UP + sequential {
            let sent = Instant::now();
            match self.attempt(&http, base_url, n).await {
                Some(cookie) => {
                    latencies.push(sent.elapsed());
                    if n % PER_LOGIN == 0 {
                        cookies.push(cookie);
                    }
                }
                None => errors += 1,
            }
        }
        let what = "POST /login (form) with a right password: quota checks, Argon2id verify \
                    (19 MiB, 2 passes), new session, audit row; sequential, 303 with the cookie";
        let count = latencies.len() as u64;
        let elapsed = started.elapsed();
        let one = Measurement::new(
            "sign_in",
            what,
            "sign-ins",
            count,
            elapsed,
            Some(&latencies),
            errors,
        );

        let first = WARM_UP + sequential;
        let clients = clients.max(1);
        let started = Instant::now();
        let runs = join_all((0..clients).map(|c| {
            let http = http.clone();
            async move {
                let (mut latencies, mut errors) = (Latencies::default(), 0u64);
                for n in (first..first + concurrent).skip(c).step_by(clients) {
                    let sent = Instant::now();
                    match self.attempt(&http, base_url, n).await {
                        Some(_) => latencies.push(sent.elapsed()),
                        None => errors += 1,
                    }
                }
                (latencies, errors)
            }
        }))
        .await;
        let elapsed = started.elapsed();
        let (mut latencies, mut errors) = (Latencies::default(), 0u64);
        for (l, e) in runs {
            latencies.merge(l);
            errors += e;
        }
        let what = format!("the same sign-in from {clients} clients at once (informational)");
        let count = latencies.len() as u64;
        let many = Measurement::new(
            "sign_in_concurrent",
            &what,
            "sign-ins",
            count,
            elapsed,
            Some(&latencies),
            errors,
        );
        Ok((vec![one, many], cookies))
    }
}
