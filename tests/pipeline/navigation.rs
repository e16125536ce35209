//! The dashboard's navigation by task and the empty states of a fresh account: each role sees
//! only its groups and links (a group with no page it may open is not there), the page shown
//! and its group are marked; an account with no server is told to connect one, and each empty
//! list says what fills it.

use crate::dashboard::Network;
use crate::member::Member;

/// The bar of a page: the text of `<nav aria-label="Dashboard">`.
fn bar(page: &str) -> &str {
    let start = page
        .find(r#"<nav aria-label="Dashboard""#)
        .expect("the page has the bar");
    let end = start + page[start..].find("</nav>").expect("the bar ends");
    &page[start..end]
}

/// Every value of `attribute="..."` in `html`, in order.
fn values<'a>(html: &'a str, attribute: &str) -> Vec<&'a str> {
    html.split(&format!(r#"{attribute}=""#))
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect()
}

/// The groups of the bar (the drop-downs' names), in order.
fn groups(bar: &str) -> Vec<&str> {
    bar.split("<summary")
        .skip(1)
        .filter_map(|rest| {
            let text = rest.split_once('>')?.1;
            text.split('<').next()
        })
        .filter(|name| *name != "Menu")
        .collect()
}

/// The bar's current group and page: (the summary marked current, the link marked current).
fn current(bar: &str) -> (Vec<&str>, Vec<&str>) {
    let group = bar
        .split(r#"<summary aria-current="true">"#)
        .skip(1)
        .filter_map(|rest| rest.split('<').next())
        .collect();
    let page = bar
        .split("<a href=\"")
        .skip(1)
        .filter(|rest| {
            rest.split('>')
                .next()
                .is_some_and(|tag| tag.contains(r#"aria-current="page""#))
        })
        .filter_map(|rest| rest.split('"').next())
        .collect();
    (group, page)
}

const VIEWER_LINKS: [&str; 7] = [
    "/",
    "/servers",
    "/staff",
    "/events",
    "/analytics/trends",
    "/funnels",
    "/analytics/retention",
];
const MODERATOR_LINKS: [&str; 4] = ["/players", "/punishments", "/appeals", "/anticheat"];
const ADMIN_LINKS: [&str; 6] = [
    "/chat",
    "/team",
    "/alerts",
    "/settings",
    "/connect",
    "/audit",
];

#[tokio::test]
async fn each_role_sees_its_groups_and_links_with_the_current_page_marked() {
    let net = Network::start("Navigation Network").await;
    let roles = ["viewer", "moderator", "admin", "owner"];
    for role in roles {
        let login = format!("{role}@nav.test");
        net.stack
            .create_member(&net.account.id, &login, "Member", role)
            .await
            .expect("member");
    }
    for role in roles {
        let member = Member::sign_in(&net.stack.base, &format!("{role}@nav.test")).await;
        let mut expected: Vec<&str> = VIEWER_LINKS.to_vec();
        let mut expected_groups = vec!["Moderation", "Analytics"];
        if role != "viewer" {
            expected.extend(MODERATOR_LINKS);
        }
        if role == "admin" || role == "owner" {
            expected.extend(ADMIN_LINKS);
            expected_groups.push("Administration");
        }
        expected.sort_unstable();
        let (status, page) = member.page("/").await;
        assert_eq!(status, 200, "{role}: {page}");
        let nav = bar(&page);
        let mut links = values(nav, "href");
        links.sort_unstable();
        assert_eq!(links, expected, "{role}'s links: {nav}");
        assert_eq!(groups(nav), expected_groups, "{role}'s groups: {nav}");
        // The Overview is its own link, marked; no group is.
        assert_eq!(current(nav), (vec![], vec!["/"]), "{role}: {nav}");
        // A page in a group: the page and its group are marked, nothing else.
        let (path, group) = match role {
            "viewer" => ("/staff", "Moderation"),
            "moderator" => ("/punishments", "Moderation"),
            _ => ("/connect", "Administration"),
        };
        let (status, page) = member.page(path).await;
        assert_eq!(status, 200, "{role} {path}: {page}");
        assert_eq!(
            current(bar(&page)),
            (vec![group], vec![path]),
            "{role} {path}"
        );
        // Every link of the bar opens.
        for link in &expected {
            let (status, _) = member.page(link).await;
            assert_eq!(status, 200, "{role} opens {link}");
        }
    }
}

#[tokio::test]
async fn a_fresh_account_is_told_how_to_fill_each_page() {
    let net = Network::start("Fresh Network").await;
    for (login, role) in [
        ("admin@fresh.test", "admin"),
        ("viewer@fresh.test", "viewer"),
    ] {
        net.stack
            .create_member(&net.account.id, login, "Member", role)
            .await
            .expect("member");
    }
    let admin = Member::sign_in(&net.stack.base, "admin@fresh.test").await;
    let first_server = r#"data-testid="first-server""#;
    for path in ["/", "/servers"] {
        let (status, page) = admin.page(path).await;
        assert_eq!(status, 200, "{path}: {page}");
        assert!(page.contains(first_server), "{path}: {page}");
        assert!(page.contains("Connect your first server"), "{path}: {page}");
        let section = &page[page.find(first_server).expect("the section")..];
        assert!(section.contains(r#"href="/connect""#), "{path}: {section}");
    }
    let teaching = [
        ("/", "appear here as your servers report them"),
        (
            "/punishments",
            "No punishments yet: punishments appear when a server reports a ban, mute, kick or warning",
        ),
        (
            "/anticheat",
            "No flags yet: flags appear when a server reports",
        ),
        ("/players", "Players appear once a server reports"),
        ("/staff", "Staff are the players in the staff groups"),
        ("/chat", "Chat lines and commands appear when"),
        ("/events", "Events appear as your servers report them"),
    ];
    for (path, says) in teaching {
        let (status, page) = admin.page(path).await;
        assert_eq!(status, 200, "{path}: {page}");
        assert!(page.contains(says), "{path} does not say {says:?}: {page}");
    }
    // A filtered empty list says so instead.
    let (_, page) = admin.page("/punishments?type=ban").await;
    assert!(
        page.contains("No punishments match these filters."),
        "{page}"
    );
    assert!(!page.contains("No punishments yet"), "{page}");

    // A viewer may not create keys: told whom to ask, no link it cannot open.
    let viewer = Member::sign_in(&net.stack.base, "viewer@fresh.test").await;
    let (status, page) = viewer.page("/").await;
    assert_eq!(status, 200, "{page}");
    let section = &page[page.find(first_server).expect("the section")..];
    let section = &section[..section.find("</section>").expect("its end")];
    assert!(section.contains("ask one of them"), "{section}");
    assert!(!section.contains(r#"href="/connect""#), "{section}");
}
