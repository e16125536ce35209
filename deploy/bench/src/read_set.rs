//! Every dashboard read the benchmark times, as one round that can run twice: on the quiet
//! machine, and again under a steady write load ([`crate::under_load`]). The datasets are
//! loaded once; each round makes its own keys, so no key's quota throttles the second.

use crate::dashboard::Dashboard;
use crate::player_search::Searchable;
use crate::reads::measure_reads;
use crate::run::{Bench, phase};
use crate::stats::Measurement;
use crate::timed::{WARM_UP, keys_for};
use crate::{retention, search_phases, trends};
use std::time::Duration;
use uuid::Uuid;

/// The loaded accounts and what the reads pick from.
pub(crate) struct ReadSet {
    /// query-api.
    pub(crate) base_url: String,
    /// The large dataset's account (players, chat, events, servers' history).
    pub(crate) readers: Uuid,
    /// Its players.
    pub(crate) players: Vec<Uuid>,
    /// Its servers with per-minute history.
    pub(crate) servers: Vec<Uuid>,
    /// The player search's account and samples.
    pub(crate) searched: (Uuid, Searchable),
    /// The retention account.
    pub(crate) retention: Uuid,
    /// The trends account.
    pub(crate) trends: Uuid,
    /// Session cookies of the readers' members, for the pages (none: pages not timed).
    pub(crate) cookies: Vec<String>,
}

impl ReadSet {
    /// Times every read once; `label` names the round in the progress lines.
    pub(crate) async fn measure(
        &self,
        b: &Bench,
        label: &str,
    ) -> anyhow::Result<(Vec<Measurement>, Vec<String>)> {
        let (count, base_url) = (b.plan.reads_per_query, self.base_url.as_str());
        let mut out = Vec::new();
        let mut notes = Vec::new();

        phase(&format!("{label}: player lookup, chatlog, events, funnel"));
        let requests = 3 * (count + WARM_UP) + b.plan.funnel_runs;
        let keys = b
            .admin
            .keys(self.readers, "dashboard", requests / 50 + 2)
            .await?;
        let reads = measure_reads(
            &b.http,
            base_url,
            &keys,
            &self.players,
            count,
            b.plan.funnel_runs,
        )
        .await;
        out.extend(reads);

        phase(&format!("{label}: chat keyword and player search"));
        out.extend(search_phases::chat(b, base_url, self.readers).await?);
        let (searched, samples) = (&self.searched.0, &self.searched.1);
        out.push(search_phases::players(b, base_url, (*searched, samples)).await?);

        phase(&format!("{label}: retention and trends"));
        let keys = b
            .admin
            .keys(self.retention, "dashboard", keys_for(count))
            .await?;
        out.push(retention::measure(&b.http, base_url, &keys, count).await);
        let keys = b
            .admin
            .keys(self.trends, "dashboard", trends::keys_needed(count))
            .await?;
        out.extend(trends::measure(&b.http, base_url, &keys, count).await);

        phase(&format!("{label}: Overview, server chart and pages"));
        let keys = b
            .admin
            .keys(self.readers, "dashboard", 2 * (count + WARM_UP) / 50 + 2)
            .await?;
        let http_no_redirect = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()?;
        let view = Dashboard {
            http: &b.http,
            base_url,
            keys: &keys,
            servers: &self.servers,
            http_no_redirect: &http_no_redirect,
            players: self.players.len(),
        };
        out.extend(view.json_reads(count).await);
        if self.cookies.is_empty() {
            notes.push("overview_page: not measured, no sign-in succeeded".to_owned());
        } else {
            let (pages, page_notes) = view.pages(&self.cookies, count / 2).await;
            out.extend(pages);
            notes.extend(page_notes);
        }
        Ok((out, notes))
    }
}
