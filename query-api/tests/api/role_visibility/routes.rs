//! The pages walked: every GET route of the page routers, and what each role must see there.

use super::markers::Secret;
use super::seed::World;
use std::collections::BTreeSet;
use uuid::Uuid;

/// The GET routes of the dashboard's pages, read from the routers' source
/// (`query-api/src/pages`): each `.route(path, get(...))`, with `path` a literal, a `PATH`
/// constant of the file or of a sibling module, or the alert destination page's `base`.
pub(super) fn page_routes() -> anyhow::Result<BTreeSet<String>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pages");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let literal = |text: &str| -> Option<String> {
        let start = text.find('"')? + 1;
        let end = start + text[start..].find('"')?;
        Some(text[start..end].to_owned())
    };
    let constant = |source: &str, name: &str| -> Option<String> {
        let at = source.find(&format!("const {name}: &str = "))?;
        literal(&source[at..])
    };
    let mut routes = BTreeSet::new();
    for file in files {
        let source = std::fs::read_to_string(&file)?;
        let dir = file.parent().map(std::path::Path::to_path_buf);
        for call in source.split(".route(").skip(1) {
            let call = call.trim_start();
            let (first, rest) = call.split_once(',').unwrap_or((call, ""));
            let rest = rest.split(".route(").next().unwrap_or_default();
            if !rest.trim_start().starts_with("get(") {
                continue;
            }
            let first = first.trim();
            let path = if first.starts_with('"') {
                literal(first)
            } else if let Some((module, name)) = first.split_once("::") {
                let sibling = dir.as_ref().map(|d| d.join(format!("{module}.rs")));
                let text = sibling.and_then(|p| std::fs::read_to_string(p).ok());
                text.and_then(|text| constant(&text, name))
            } else if first == "base" {
                let at = source.find("let base = ");
                at.and_then(|at| literal(&source[at..]))
            } else {
                constant(&source, first)
            };
            let Some(path) = path else {
                anyhow::bail!("{}: cannot read the route {first}", file.display());
            };
            routes.insert(path);
        }
    }
    Ok(routes)
}

/// Routes no role reads records through: the sign-in and invite pages, the assets, and the
/// public appeal page (a signed link, not a role, opens the one punishment it names).
pub(super) const NOT_RECORDS: [&str; 4] = [
    "/login",
    "/invite/{token}",
    "/appeal/{token}",
    "/assets/{file}",
];

/// The Server-Sent Events routes (walked by [`live`], not by a plain GET).
pub(super) const STREAMS: [&str; 3] = ["/events/stream", "/overview/activity", "/anticheat/stream"];

/// Every route walked with a plain GET: its pattern, the address used, and the markers every
/// role that may open it must see there (so the walk cannot pass by showing nothing).
pub(super) fn walks(world: &World) -> Vec<(&'static str, String, Vec<Secret>)> {
    let s = &world.stored;
    let internal = "internal=true&names=chat_message%2Cchat_command%2Cpunish_ban%2Cpunish_revoke";
    let (griefer, lobby) = (world.griefer, world.lobby);
    let trend = |query: &str| format!("/analytics/trends?{query}&breakdown=property");
    vec![
        ("/", "/".into(), vec![s.reason.clone()]),
        ("/overview/summary", "/overview/summary".into(), vec![]),
        ("/servers", "/servers".into(), vec![]),
        ("/servers/{id}", format!("/servers/{lobby}"), vec![]),
        ("/staff", "/staff".into(), vec![]),
        ("/players", "/players?q=Griefer".into(), vec![]),
        ("/players/find", "/players/find?q=Griefer".into(), vec![]),
        (
            "/players/suggestions",
            "/players/suggestions?q=Griefer".into(),
            vec![],
        ),
        (
            "/players/{uuid}",
            format!("/players/{griefer}"),
            vec![s.chat.clone(), s.reason.clone(), s.note.clone()],
        ),
        (
            "/players/{uuid}/export",
            format!("/players/{griefer}/export"),
            vec![s.chat.clone(), s.reason.clone()],
        ),
        (
            "/players/{uuid}/erase",
            format!("/players/{griefer}/erase"),
            vec![],
        ),
        (
            "/punishments",
            "/punishments".into(),
            vec![s.reason.clone(), s.revoke.clone()],
        ),
        ("/anticheat", "/anticheat".into(), vec![s.flag.clone()]),
        ("/appeals", "/appeals".into(), vec![s.reason.clone()]),
        ("/appeals/badge", "/appeals/badge".into(), vec![]),
        (
            "/appeals/{id}",
            format!("/appeals/{}", world.appeal),
            vec![s.reason.clone(), s.note.clone()],
        ),
        (
            "/chat",
            "/chat".into(),
            vec![s.chat.clone(), s.command.clone()],
        ),
        ("/chat/rows", "/chat/rows".into(), vec![s.chat.clone()]),
        (
            "/chat/export.csv",
            "/chat/export.csv".into(),
            vec![s.chat.clone(), s.command.clone()],
        ),
        ("/events", "/events".into(), vec![]),
        (
            "/events",
            "/events?internal=true".into(),
            vec![s.chat.clone(), s.reason.clone()],
        ),
        (
            "/events",
            format!("/events?{internal}"),
            vec![
                s.chat.clone(),
                s.command.clone(),
                s.reason.clone(),
                s.revoke.clone(),
            ],
        ),
        (
            "/events/feed",
            format!("/events/feed?{internal}"),
            vec![
                s.chat.clone(),
                s.command.clone(),
                s.reason.clone(),
                s.revoke.clone(),
            ],
        ),
        (
            "/events/rows",
            format!("/events/rows?{internal}"),
            vec![s.chat.clone(), s.reason.clone()],
        ),
        ("/funnels", "/funnels?step=quest_started".into(), vec![]),
        (
            "/analytics/retention",
            "/analytics/retention".into(),
            vec![],
        ),
        (
            "/analytics/trends",
            "/analytics/trends?event=chat_message".into(),
            vec![],
        ),
        (
            "/analytics/trends",
            trend("event=chat_message&property=message"),
            vec![s.chat.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=chat_messages&property=message"),
            vec![s.chat.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=commands&property=message"),
            vec![s.command.clone()],
        ),
        (
            "/analytics/trends",
            trend("event=punish_ban&property=reason"),
            vec![s.reason.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=punishments&property=reason"),
            vec![s.reason.clone()],
        ),
        (
            "/analytics/trends",
            trend("event=punish_revoke&property=revoke_reason"),
            vec![s.revoke.clone()],
        ),
        (
            "/analytics/trends",
            trend("kind=flags&property=check_name"),
            vec![s.flag.clone()],
        ),
        ("/team", "/team".into(), vec![]),
        ("/settings", "/settings".into(), vec![]),
        ("/connect", "/connect".into(), vec![]),
        (
            "/connect/warden-plugin.jar",
            "/connect/warden-plugin.jar".into(),
            vec![],
        ),
        ("/alerts", "/alerts".into(), vec![]),
        (
            "/alerts/destinations/{id}",
            format!("/alerts/destinations/{}", Uuid::new_v4()),
            vec![],
        ),
        (
            "/alerts/destinations/{id}/deliveries/{delivery}",
            format!(
                "/alerts/destinations/{}/deliveries/{}",
                Uuid::new_v4(),
                Uuid::new_v4()
            ),
            vec![],
        ),
        (
            "/alerts/rules/{id}/edit",
            format!("/alerts/rules/{}/edit", Uuid::new_v4()),
            vec![],
        ),
        ("/audit", "/audit".into(), vec![]),
        // The JSON API under a session cookie: keys only, whatever the cookie.
        ("", "/api/v1/events?internal=true".into(), vec![]),
        ("", "/api/chat".into(), vec![]),
        ("", "/api/punishments".into(), vec![]),
        ("", format!("/api/players/{griefer}/chatlog"), vec![]),
    ]
}
