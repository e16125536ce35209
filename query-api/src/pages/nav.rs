//! The navigation bar by task: Overview and Servers on their own, then the groups
//! (Moderation, Analytics, Administration), each holding the pages of [`super::PAGES`] that
//! name it. A member sees only the links their role allows; a group with none disappears. The
//! bar is built from the role alone: no query. A link with a count (the new appeals) loads it
//! from its badge's address once the page is shown ([`BADGES`]).

use super::PAGES;
use crate::team::Role;

/// A group of the navigation bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NavGroup {
    /// Finding and handling players: what a moderator does all day.
    Moderation,
    /// What players do in the game: events, trends, funnels, retention.
    Analytics,
    /// Running the account: members, alerts, settings, plugin keys, the audit log.
    Administration,
}

impl NavGroup {
    /// Its name in the bar.
    pub fn title(self) -> &'static str {
        match self {
            NavGroup::Moderation => "Moderation",
            NavGroup::Analytics => "Analytics",
            NavGroup::Administration => "Administration",
        }
    }
}

/// The links that carry a count, and the address of the badge that shows it (loaded by htmx
/// after the page, so building the bar stays free of queries; without JavaScript the link shows
/// no count).
pub const BADGES: [(&str, &str); 1] = [("/appeals", "/appeals/badge")];

/// One link of the navigation bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavItem {
    /// Where it goes.
    pub path: &'static str,
    /// What it says.
    pub title: &'static str,
    /// Whether it is the page being shown (`aria-current="page"`).
    pub current: bool,
    /// Where its count's badge loads from, if it has one ([`BADGES`]).
    pub badge: Option<&'static str>,
}

/// One entry of the bar: a link of its own, or a group of links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavEntry {
    /// The group's name; None for a link of its own (the one item of `links`).
    pub group: Option<&'static str>,
    /// Its links, in the bar's order.
    pub links: Vec<NavItem>,
    /// Whether the page being shown is one of them.
    pub current: bool,
}

/// The bar a member of `role` sees on the page at `current` (a path of [`PAGES`]).
pub fn entries(role: Role, current: &str) -> Vec<NavEntry> {
    let mut entries: Vec<(Option<NavGroup>, NavEntry)> = Vec::new();
    for page in PAGES.iter().filter(|page| role.allows(page.area)) {
        let item = NavItem {
            path: page.path,
            title: page.title,
            current: page.path == current,
            badge: BADGES
                .iter()
                .find(|(path, _)| *path == page.path)
                .map(|(_, badge)| *badge),
        };
        let existing = page.group.and_then(|group| {
            entries
                .iter_mut()
                .find(|(g, _)| *g == Some(group))
                .map(|(_, entry)| entry)
        });
        match existing {
            Some(entry) => {
                entry.current |= item.current;
                entry.links.push(item);
            }
            None => entries.push((
                page.group,
                NavEntry {
                    group: page.group.map(NavGroup::title),
                    current: item.current,
                    links: vec![item],
                },
            )),
        }
    }
    entries.into_iter().map(|(_, entry)| entry).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(role: Role, current: &str) -> Vec<(Option<&'static str>, Vec<&'static str>, bool)> {
        entries(role, current)
            .into_iter()
            .map(|e| {
                (
                    e.group,
                    e.links.iter().map(|l| l.title).collect(),
                    e.current,
                )
            })
            .collect()
    }

    #[test]
    fn a_viewer_sees_no_administration_and_only_staff_under_moderation() {
        assert_eq!(
            shape(Role::Viewer, "/staff"),
            vec![
                (None, vec!["Overview"], false),
                (None, vec!["Servers"], false),
                (Some("Moderation"), vec!["Staff"], true),
                (
                    Some("Analytics"),
                    vec!["Events", "Trends", "Funnels", "Retention"],
                    false
                ),
            ]
        );
    }

    #[test]
    fn an_owner_sees_every_page_once_in_its_group_and_the_current_one_marked() {
        let bar = entries(Role::Owner, "/connect");
        let links: Vec<&str> = bar
            .iter()
            .flat_map(|e| e.links.iter().map(|l| l.path))
            .collect();
        let all: Vec<&str> = PAGES.iter().map(|p| p.path).collect();
        let mut sorted = links.clone();
        sorted.sort_unstable();
        let mut expected = all.clone();
        expected.sort_unstable();
        assert_eq!(sorted, expected);
        let current: Vec<&str> = bar
            .iter()
            .flat_map(|e| e.links.iter().filter(|l| l.current).map(|l| l.path))
            .collect();
        assert_eq!(current, vec!["/connect"]);
        let groups: Vec<_> = bar.iter().filter(|e| e.current).map(|e| e.group).collect();
        assert_eq!(groups, vec![Some("Administration")]);
    }

    #[test]
    fn a_moderator_sees_moderation_without_chat_and_no_administration() {
        let bar = shape(Role::Moderator, "/players");
        assert_eq!(
            bar[2],
            (
                Some("Moderation"),
                vec!["Players", "Punishments", "Appeals", "Anti-cheat", "Staff"],
                true
            )
        );
        assert!(
            bar.iter()
                .all(|(group, _, _)| *group != Some("Administration"))
        );
    }
}
