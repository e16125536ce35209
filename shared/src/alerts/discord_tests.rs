use super::*;

fn embed(message: &Value) -> &Map<String, Value> {
    message["embeds"][0].as_object().expect("one embed")
}

fn chars(value: &Value) -> usize {
    value.as_str().map_or(0, |s| s.chars().count())
}

/// Every text of the embed, for the total limit.
fn total(embed: &Map<String, Value>) -> usize {
    chars(&embed["title"])
        + embed.get("description").map_or(0, chars)
        + chars(&embed["footer"]["text"])
        + embed["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .map(|f| chars(&f["name"]) + chars(&f["value"]))
            .sum::<usize>()
}

fn punishment() -> Value {
    json!({
        "rule_id": "0191f3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b",
        "rule_name": "Bans to #mod-log",
        "account_id": "0191f3b4-5c6d-7e8f-9a0b-000000000001",
        "punishment_id": "0191f3b4-5c6d-7e8f-9a0b-000000000002",
        "punishment_type": "ban",
        "player_uuid": "069a79f4-44e9-4726-a5be-fca90e38aaf5",
        "player_name": "Notch",
        "reason": "Hacking",
        "staff_uuid": null,
        "staff_name": "Console",
        "server_id": "0191f3b4-5c6d-7e8f-9a0b-000000000003",
        "issued_at": "2026-11-24T10:00:05Z",
        "expires_at": null,
    })
}

#[test]
fn a_punishment_reads_well() {
    let message = render("punishment.issued", &punishment());
    assert_eq!(message["username"], "Warden");
    assert_eq!(message["allowed_mentions"], json!({"parse": []}));
    let embed = embed(&message);
    assert_eq!(embed["title"], "Ban issued: Notch");
    assert_eq!(embed["description"], "Hacking");
    assert_eq!(embed["color"], json!(RED));
    assert_eq!(embed["timestamp"], "2026-11-24T10:00:05+00:00");
    assert_eq!(embed["footer"]["text"], "Warden · punishment.issued");
    let fields = embed["fields"].as_array().expect("fields");
    let field = |name: &str| {
        fields
            .iter()
            .find(|f| f["name"] == name)
            .map(|f| f["value"].as_str().expect("text").to_owned())
    };
    assert_eq!(field("Staff").as_deref(), Some("Console"));
    assert_eq!(field("Issued").as_deref(), Some("<t:1795514405:f>"));
    assert_eq!(field("Rule").as_deref(), Some("Bans to \\#mod\\-log"));
    assert_eq!(field("Expires"), None, "null values are left out");
}

#[test]
fn markdown_and_mentions_in_user_strings_are_neutralised() {
    let mut data = punishment();
    data["player_name"] = json!("@everyone");
    data["reason"] =
        json!("**bold** [click](https://evil.example) <@123> `code` _x_ ~~s~~ ||spoiler||\n# big");
    let message = render("punishment.issued", &data);
    let embed = embed(&message);
    let title = embed["title"].as_str().expect("title");
    assert_eq!(title, "Ban issued: @\u{200B}everyone");
    let description = embed["description"].as_str().expect("description");
    assert_eq!(
        description,
        "\\*\\*bold\\*\\* \\[click\\]\\(https\\://evil.example\\) \\<@\u{200B}123\\> \\`code\\` \\_x\\_ \\~\\~s\\~\\~ \\|\\|spoiler\\|\\|\n\\# big"
    );
    for text in [title, description] {
        assert!(!text.contains("@everyone"));
        assert!(!text.contains("<@1"));
    }
}

#[test]
fn escape_leaves_plain_text_alone_and_drops_control_characters() {
    assert_eq!(escape("Steve 123"), "Steve 123");
    assert_eq!(escape("a\u{0}b\tc\r"), "a b c ");
    assert_eq!(escape("back\\slash"), "back\\\\slash");
}

#[test]
fn long_texts_stay_within_discord_limits() {
    let mut data = punishment();
    data["player_name"] = json!("_".repeat(1000));
    data["reason"] = json!("*".repeat(10_000));
    data["staff_name"] = json!("x".repeat(5000));
    data["revoke_reason"] = json!("y".repeat(5000));
    data["rule_name"] = json!("z".repeat(5000));
    let message = render("punishment.revoked", &data);
    let embed = embed(&message);
    assert!(chars(&embed["title"]) <= MAX_TITLE);
    assert!(embed.get("description").map_or(0, chars) <= MAX_DESCRIPTION);
    let fields = embed["fields"].as_array().expect("fields");
    assert!(fields.len() <= MAX_FIELDS);
    for f in fields {
        assert!(chars(&f["name"]) <= MAX_FIELD_NAME);
        assert!(chars(&f["value"]) <= MAX_FIELD_VALUE);
    }
    assert!(total(embed) <= MAX_EMBED_TOTAL, "total {}", total(embed));
    // A cut is marked, and never leaves half an escape behind it.
    let title = embed["title"].as_str().expect("title");
    assert!(title.ends_with("\\_…"), "{}", &title[title.len() - 10..]);
}

#[test]
fn an_event_with_many_properties_keeps_to_25_fields_and_6000_characters() {
    let properties: Map<String, Value> = (0..200)
        .map(|i| (format!("key{i}"), json!("v".repeat(100))))
        .collect();
    let mut data = json!({"rule_id": null, "rule_name": null, "account_id": "a"});
    data["properties"] = Value::Object(properties.clone());
    let message = render("some.future_type", &data);
    let embed = embed(&message);
    assert_eq!(embed["title"], "some.future\\_type");
    assert!(embed["fields"].as_array().expect("fields").len() <= MAX_FIELDS);
    assert!(total(embed) <= MAX_EMBED_TOTAL);
    let custom = render(
        "event.custom",
        &json!({"name": "vote", "player_uuid": null, "properties": properties, "occurred_at": "2026-11-24T10:00:00Z"}),
    );
    let embed = self::embed(&custom);
    assert_eq!(embed["title"], "Event: vote");
    assert!(total(embed) <= MAX_EMBED_TOTAL);
}

#[test]
fn every_event_type_renders() {
    let samples = [
        ("punishment.issued", punishment()),
        ("punishment.revoked", punishment()),
        (
            "anticheat.threshold",
            json!({"player_name": "Notch", "flags": 5, "window_seconds": 60, "checks": ["Reach", "Fly"]}),
        ),
        (
            "server.offline",
            json!({"server_name": "lobby-1", "server_id": "s", "last_heartbeat_at": "2026-11-24T10:00:00Z"}),
        ),
        (
            "server.online",
            json!({"server_name": "lobby-1", "server_id": "s", "offline_since": "2026-11-24T10:00:00Z"}),
        ),
        (
            "server.tps_low",
            json!({"server_name": "lobby-1", "tps": 12.5, "below": 15.0, "minutes": 5, "since": "2026-11-24T10:00:00Z"}),
        ),
        (
            "server.tps_recovered",
            json!({"server_name": "lobby-1", "tps": 19.9, "below": 15.0, "since": "2026-11-24T10:00:00Z"}),
        ),
        (
            "player.banned_alt_joined",
            json!({"player_name": "Alt", "banned_alts": [{"uuid": "u", "username": "Main_1"}]}),
        ),
        (
            "rank.staff_joined",
            json!({"player_name": "Mod", "group": "moderator", "previous_group": "default"}),
        ),
        (
            "rank.staff_left",
            json!({"player_name": "Mod", "group": "default", "previous_group": "moderator"}),
        ),
        (
            "event.custom",
            json!({"name": "vote", "properties": {"site": "x"}}),
        ),
        (
            "test",
            json!({"destination_id": "d", "message": "A test event from Warden"}),
        ),
    ];
    let expected_titles = [
        "Ban issued: Notch",
        "Ban revoked: Notch",
        "Anti-cheat: Notch",
        "Server offline: lobby\\-1",
        "Server back online: lobby\\-1",
        "Low TPS: lobby\\-1",
        "TPS recovered: lobby\\-1",
        "Banned player's alt joined: Alt",
        "Joined staff: Mod",
        "Left staff: Mod",
        "Event: vote",
        "Test event",
    ];
    for ((event_type, data), title) in samples.iter().zip(expected_titles) {
        let message = render(event_type, data);
        let embed = embed(&message);
        assert_eq!(embed["title"], title, "{event_type}");
        assert!(total(embed) <= MAX_EMBED_TOTAL);
    }
    let alt = render("player.banned_alt_joined", &samples[7].1);
    let alts = embed(&alt)["fields"][0]["value"]
        .as_str()
        .expect("value")
        .to_owned();
    assert_eq!(alts, "Main\\_1");
    let tps = render("server.tps_low", &samples[5].1);
    assert_eq!(
        embed(&tps)["description"],
        "TPS 12.5, below 15.0 for 5 minutes"
    );
}

proptest::proptest! {
    /// Whatever a player or admin typed, the embed pings nobody, keeps every markdown character
    /// escaped, and stays within Discord's limits.
    #[test]
    fn any_text_renders_safely(name in "\\PC{0,300}", reason in "\\PC{0,5000}") {
        let mut data = punishment();
        data["player_name"] = json!(name);
        data["reason"] = json!(reason);
        data["rule_name"] = json!(name);
        let message = render("punishment.issued", &data);
        let embed = embed(&message);
        proptest::prop_assert!(total(embed) <= MAX_EMBED_TOTAL);
        proptest::prop_assert!(chars(&embed["title"]) <= MAX_TITLE);
        proptest::prop_assert!(chars(&embed["description"]) <= MAX_DESCRIPTION);
        let texts = [&embed["title"], &embed["description"]];
        for text in texts.iter().filter_map(|t| t.as_str()) {
            proptest::prop_assert!(!text.contains("@everyone") && !text.contains("@here"));
            let mut escaped = false;
            for c in text.chars() {
                if !escaped && "*_~`|<>[]()#".contains(c) {
                    proptest::prop_assert!(false, "unescaped {c:?} in {text:?}");
                }
                escaped = !escaped && c == '\\';
            }
        }
    }
}
