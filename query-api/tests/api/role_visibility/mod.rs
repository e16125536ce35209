//! One rule for what each role sees of the records, on every view (`docs/dashboard.md`,
//! "Roles"): chat lines and commands only for admins and owners, punishment reasons, anti-cheat
//! flags' details and notes only for moderators and up, whatever page, partial, live stream,
//! trend, funnel or export shows them.
//!
//! The test seeds records whose texts are unique markers (stored rows, and records written to
//! the event log while streams are open), then walks every GET route of the dashboard's pages
//! as a viewer, a moderator, an admin and an owner, and fails when a role sees a marker it may
//! not. The routes are read from the page routers' source, so a new page that is not walked
//! here fails the test. It also checks that the roles allowed do see the markers where they
//! should, so it cannot pass by showing nothing.

mod live;
mod markers;
mod routes;
mod seed;

use crate::dashboard_pages::member;
use live::live;
use markers::{ADMIN, ROLES, Secret};
use reqwest::StatusCode;
use routes::{NOT_RECORDS, STREAMS, page_routes, walks};
use seed::seed;
use std::collections::BTreeSet;

/// What went wrong, every finding of the walk (reported together at the end).
#[derive(Debug, Default)]
pub(super) struct Findings(Vec<String>);

impl Findings {
    /// Notes each marker in `body` (seen by `role` at `path`) that the role may not see.
    pub(super) fn hidden(&mut self, secrets: &[&Secret], role: usize, path: &str, body: &str) {
        for secret in secrets {
            if secret.least > role && body.contains(&secret.text) {
                self.0.push(format!(
                    "the {} role sees a {} at {path}",
                    ROLES[role], secret.what
                ));
            }
        }
    }

    /// Notes each marker of `shown` missing from `body` when `role` may see it.
    pub(super) fn shown(&mut self, shown: &[&Secret], role: usize, path: &str, body: &str) {
        for secret in shown {
            if secret.least <= role && !body.contains(&secret.text) {
                let who = ROLES[role];
                self.0.push(format!(
                    "the {who} role does not see the {} at {path}",
                    secret.what
                ));
            }
        }
    }

    pub(super) fn assert_none(&self) {
        assert!(
            self.0.is_empty(),
            "{} findings:\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

#[tokio::test]
async fn every_view_shows_each_role_only_what_the_roles_table_allows() -> anyhow::Result<()> {
    let world = seed().await?;
    let mut members = Vec::new();
    for role in ROLES {
        members.push(member(&world.dash, role).await?);
    }

    // Every GET route of the pages is walked here, as a page or as a stream.
    let walks = walks(&world);
    let walked: BTreeSet<String> = walks
        .iter()
        .map(|(pattern, _, _)| pattern.to_string())
        .chain(
            STREAMS
                .iter()
                .chain(NOT_RECORDS.iter())
                .map(|p| p.to_string()),
        )
        .filter(|p| !p.is_empty())
        .collect();
    let routes = page_routes()?;
    let missing: Vec<&String> = routes.difference(&walked).collect();
    assert!(missing.is_empty(), "GET routes not walked: {missing:?}");
    let stale: Vec<&String> = walked.difference(&routes).collect();
    assert!(
        stale.is_empty(),
        "walked routes that no router has: {stale:?}"
    );

    let stored = world.stored.all();
    let funnel = [
        ("step", "quest_started"),
        ("step", "chat_message"),
        ("step", "punish_ban"),
        ("breakdown", "tag"),
        ("dropped_off", "1"),
        ("action", "run"),
    ];
    let mut findings = Findings::default();
    for (role, browser) in members.iter_mut().enumerate() {
        for (_, path, shown) in &walks {
            let response = browser.get(path).await?;
            let status = response.status();
            let body = response.text().await?;
            assert!(
                status.as_u16() < 500,
                "{} {path}: {status} {body}",
                ROLES[role]
            );
            findings.hidden(&stored, role, path, &body);
            if status == StatusCode::OK {
                let shown: Vec<&Secret> = shown.iter().collect();
                findings.shown(&shown, role, path, &body);
            }
        }
        // Counts stay: every role lists the chat events (without their text).
        let events = browser
            .page("/events?internal=true&names=chat_message", StatusCode::OK)
            .await?;
        assert!(events.contains(r#"data-name="chat_message""#), "{events}");
        // Below admin the row says its values are withheld; from admin it shows them.
        if events.contains(r#"data-testid="withheld""#) != (role < ADMIN) {
            let who = ROLES[role];
            findings.0.push(format!(
                "the {who} role's chat rows are not marked as they should"
            ));
        }
        // A breakdown whose labels the role may not see is refused with the reason, on the form.
        let path = "/analytics/trends?event=chat_message&breakdown=property&property=message";
        let response = browser.get(path).await?;
        let status = response.status();
        let said = response
            .text()
            .await?
            .contains("counts are available without");
        let expected = if role < ADMIN {
            (StatusCode::FORBIDDEN, true)
        } else {
            (StatusCode::OK, false)
        };
        if (status, said) != expected {
            let who = ROLES[role];
            findings
                .0
                .push(format!("the {who} role gets {status} at {path}"));
        }
        let result = browser.post("/funnels", &funnel).await?;
        assert!(result.status().as_u16() < 500, "{}", result.status());
        findings.hidden(&stored, role, "POST /funnels", &result.text().await?);
    }

    live(&world, &members, &mut findings).await?;
    findings.assert_none();
    Ok(())
}
