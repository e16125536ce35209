//! The keyring against a real nats-server: what ingest seals, every reader opens;
//! a destroyed key erases exactly what it sealed, in this process and in every other one.

use chrono::{DateTime, Duration as Days, Utc};
use pipeline_tests::eventually;
use serde_json::{Value, json};
use shared::envelope::{LogMessage, Logged, RecordBatch};
use shared::privacy::{
    ERASED, Keyring, KeyringError, PrivacyConfig, PrivacyPolicy, RetentionKind, day_of,
};
use std::time::Duration;
use test_support::{NatsServer, private_event_log, test_vars};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// How long a second process may take to see a key destroyed by the first.
const WATCH_DEADLINE: Duration = Duration::from_secs(10);

/// A nats-server, one deployment's privacy settings and its private buckets.
struct Keys {
    _nats: NatsServer,
    js: async_nats::jetstream::Context,
    privacy: PrivacyConfig,
    log: shared::event_log::EventLogConfig,
}

impl Keys {
    async fn start() -> Keys {
        let nats = NatsServer::start().await.expect("nats-server starts");
        let vars = test_vars(&nats.url());
        let privacy = PrivacyConfig::from_vars(&vars).expect("privacy settings");
        let client = async_nats::connect(nats.url()).await.expect("connects");
        Keys {
            _nats: nats,
            js: async_nats::jetstream::new(client),
            privacy,
            log: private_event_log(),
        }
    }

    /// A new keyring (a process of its own, with its own cache) of this deployment.
    async fn keyring(&self) -> Keyring {
        self.keyring_with(&self.privacy).await
    }

    async fn keyring_with(&self, privacy: &PrivacyConfig) -> Keyring {
        privacy
            .keyring(&self.js, &self.log)
            .await
            .expect("the privacy buckets open")
    }
}

/// A record with a fresh id, of the type the context asks for (a macro: this crate has no
/// `serde` of its own to name `DeserializeOwned` with).
macro_rules! logged {
    ($record:expr $(,)?) => {
        Logged {
            id: Uuid::now_v7(),
            record: serde_json::from_value($record).expect("a well-formed record"),
        }
    };
}

fn chat_line(player: Uuid, name: &str, text: &str) -> Value {
    json!({"server_id": Uuid::from_u128(1), "player_uuid": player, "player_name": name,
           "entry_type": "chat", "message": text})
}

/// One message of every record kind, full of personal values (all of `player`, staff `staff`).
fn every_kind(account: Uuid, player: Uuid, staff: Uuid) -> Vec<LogMessage> {
    let server = Uuid::from_u128(1);
    let batches = vec![
        RecordBatch::Heartbeat(vec![logged!(
            json!({"server_id": server, "tps": 20.0, "player_count": 3, "max_players": 50}),
        )]),
        RecordBatch::Chat(vec![logged!(chat_line(
            player,
            "Steve",
            "meet me at spawn"
        ))]),
        RecordBatch::Session(vec![logged!(json!({
            "server_id": server, "player_uuid": player, "player_name": "Steve",
            "event": "join", "ip_hash": "a1b2c3d4e5"}))]),
        RecordBatch::Punishment(vec![logged!(json!({
            "server_id": server, "player_uuid": player, "player_name": "Steve", "type": "ban",
            "reason": "x-ray at 120 -40", "staff_uuid": staff, "staff_name": "ModMia"}))]),
        RecordBatch::AnticheatFlag(vec![logged!(json!({
            "server_id": server, "player_uuid": player, "player_name": "Steve",
            "check_name": "Reach", "violation_level": 3.5}))]),
        RecordBatch::RankChange(vec![logged!(json!({
            "player_uuid": player, "player_name": "Steve", "action": "set", "group": "vip",
            "staff_uuid": staff, "staff_name": "ModMia"}))]),
        RecordBatch::AccountLink(vec![logged!(json!({
            "player_uuid": player, "platform": "discord", "external_id": "80351110224678912",
            "external_name": "steve#0001", "action": "link"}))]),
        RecordBatch::Custom(vec![logged!(json!({
            "player_uuid": player, "name": "signup",
            "properties": {"email": "steve@example.org", "plan": "gold"}}))]),
        RecordBatch::Note(vec![logged!(json!({
            "player_uuid": player, "text": "asked for a refund twice",
            "evidence": ["https://clips.example/steve"],
            "author": {"member_id": Uuid::from_u128(9), "name": "Owner"},
            "written_at": Utc::now()}))]),
    ];
    batches
        .into_iter()
        .map(|batch| LogMessage::new(account, Utc::now(), batch))
        .collect()
}

/// Every personal value [`every_kind`] holds.
const PERSONAL: [&str; 10] = [
    "Steve",
    "meet me at spawn",
    "a1b2c3d4e5",
    "x-ray at 120 -40",
    "ModMia",
    "80351110224678912",
    "steve#0001",
    "steve@example.org",
    "asked for a refund twice",
    "https://clips.example/steve",
];

/// `plan` kept in clear; every other property (`email`) sealed.
fn policy() -> PrivacyPolicy {
    PrivacyPolicy {
        clear_properties: vec!["plan".into()],
        ..PrivacyPolicy::default()
    }
}

/// The records as JSON values (custom-event properties compare by value, not by spelling).
fn records(messages: &[LogMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| serde_json::to_value(&m.batch).expect("serializes"))
        .collect()
}

async fn seal_all(keyring: &Keyring, messages: &mut [LogMessage]) {
    for message in messages.iter_mut() {
        keyring.seal(message, &policy()).await.expect("sealed");
    }
}

#[tokio::test]
async fn every_record_kind_is_sealed_at_rest_and_opens_to_what_was_written() {
    let keys = Keys::start().await;
    let (ingest, projector) = (keys.keyring().await, keys.keyring().await);
    let (account, player, staff) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let written = every_kind(account, player, staff);
    let mut logged = written.clone();
    seal_all(&ingest, &mut logged).await;

    let bytes: Vec<String> = logged
        .iter()
        .map(|m| String::from_utf8(m.encode()).expect("utf-8"))
        .collect();
    for value in PERSONAL {
        assert!(
            bytes.iter().all(|b| !b.contains(value)),
            "{value:?} is in the log in clear"
        );
    }
    let everything = bytes.join("\n");
    for clear in ["Reach", "signup", "gold", "discord", "vip"] {
        assert!(everything.contains(clear), "{clear} should stay clear");
    }

    // Another process opens the whole chunk in one call.
    let mut read = logged.clone();
    projector.open(&mut read).await.expect("opened");
    assert_eq!(records(&read), records(&written));
    // Clear (legacy) messages pass through untouched.
    let mut clear = written.clone();
    projector.open(&mut clear).await.expect("opened");
    assert_eq!(records(&clear), records(&written));
}

#[tokio::test]
async fn destroying_a_player_erases_only_that_players_fields() {
    let keys = Keys::start().await;
    let (ingest, reader) = (keys.keyring().await, keys.keyring().await);
    let (account, erased, kept, staff) = (
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
        Uuid::now_v7(),
    );
    let mut messages = vec![
        LogMessage::new(
            account,
            Utc::now(),
            RecordBatch::Chat(vec![
                logged!(chat_line(erased, "Steve", "my address is 1 Main St")),
                logged!(chat_line(kept, "Alex", "hello all")),
            ]),
        ),
        LogMessage::new(
            account,
            Utc::now(),
            RecordBatch::Punishment(vec![logged!(json!({
                "server_id": Uuid::from_u128(1), "player_uuid": erased, "player_name": "Steve",
                "type": "mute", "reason": "spam", "staff_uuid": staff, "staff_name": "ModMia"}))]),
        ),
    ];
    seal_all(&ingest, &mut messages).await;
    // The same player of another account is another key.
    let mut elsewhere = vec![LogMessage::new(
        Uuid::now_v7(),
        Utc::now(),
        RecordBatch::Chat(vec![logged!(chat_line(erased, "Steve", "other network"))]),
    )];
    seal_all(&ingest, &mut elsewhere).await;

    ingest
        .destroy_player(account, erased)
        .await
        .expect("destroyed");
    reader.open(&mut messages).await.expect("opened");
    reader.open(&mut elsewhere).await.expect("opened");

    let RecordBatch::Chat(chat) = &messages[0].batch else {
        panic!("chat")
    };
    assert_eq!(chat[0].record.message, ERASED);
    assert_eq!(chat[0].record.player_name, None);
    assert_eq!(
        chat[1].record.message, "hello all",
        "another player untouched"
    );
    assert_eq!(chat[1].record.player_name.as_deref(), Some("Alex"));
    let RecordBatch::Punishment(punishments) = &messages[1].batch else {
        panic!("punishment")
    };
    let p = &punishments[0].record;
    assert_eq!(
        (p.player_name.as_deref(), p.reason.as_deref()),
        (None, None)
    );
    assert_eq!(
        p.staff_name.as_deref(),
        Some("ModMia"),
        "the staff member's name is theirs"
    );
    let RecordBatch::Chat(other) = &elsewhere[0].batch else {
        panic!("chat")
    };
    assert_eq!(other[0].record.message, "other network");
}

#[tokio::test]
async fn destroying_old_chat_periods_erases_their_text_but_not_names_or_newer_days() {
    let keys = Keys::start().await;
    let (ingest, reader) = (keys.keyring().await, keys.keyring().await);
    let (account, player) = (Uuid::now_v7(), Uuid::now_v7());
    let now = Utc::now();
    let message = |received_at: DateTime<Utc>, text: &str| {
        LogMessage::new(
            account,
            received_at,
            RecordBatch::Chat(vec![logged!(chat_line(player, "Steve", text))]),
        )
    };
    let mut messages = vec![
        message(now - Days::days(40), "forty days ago"),
        message(now - Days::days(31), "thirty-one days ago"),
        message(now - Days::days(2), "two days ago"),
        message(now, "today"),
    ];
    seal_all(&ingest, &mut messages).await;

    let destroyed = ingest
        .destroy_periods_before(account, RetentionKind::Chat, day_of(now - Days::days(30)))
        .await
        .expect("destroyed");
    assert_eq!(destroyed, 2, "one chat key per day received");
    // Other kinds keep everything of those days.
    assert_eq!(
        ingest
            .destroy_periods_before(account, RetentionKind::Sessions, day_of(now))
            .await
            .expect("nothing to destroy"),
        0
    );
    reader.open(&mut messages).await.expect("opened");
    let read: Vec<(String, Option<String>)> = messages
        .iter()
        .map(|m| match &m.batch {
            RecordBatch::Chat(c) => (c[0].record.message.clone(), c[0].record.player_name.clone()),
            _ => unreachable!("chat only"),
        })
        .collect();
    let steve = Some("Steve".to_owned());
    assert_eq!(
        read,
        [
            (ERASED.to_owned(), steve.clone()),
            (ERASED.to_owned(), steve.clone()),
            ("two days ago".to_owned(), steve.clone()),
            ("today".to_owned(), steve),
        ]
    );
}

#[tokio::test]
async fn a_key_destroyed_by_one_replica_is_erased_in_another_that_had_it_cached() {
    let keys = Keys::start().await;
    let (first, second) = (keys.keyring().await, keys.keyring().await);
    let shutdown = CancellationToken::new();
    let _stop = shutdown.clone().drop_guard();
    let _watch = second.spawn_watch(shutdown.clone());
    let (account, player, other) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let mut sealed = vec![LogMessage::new(
        account,
        Utc::now(),
        RecordBatch::Chat(vec![
            logged!(chat_line(player, "Steve", "cached then erased")),
            logged!(chat_line(other, "Alex", "never erased")),
        ]),
    )];
    seal_all(&first, &mut sealed).await;
    let texts = |messages: &[LogMessage]| match &messages[0].batch {
        RecordBatch::Chat(c) => (c[0].record.message.clone(), c[1].record.message.clone()),
        _ => unreachable!("chat only"),
    };

    // The second replica reads it once: the key is in its cache now.
    let mut read = sealed.clone();
    second.open(&mut read).await.expect("opened");
    assert_eq!(texts(&read).0, "cached then erased");

    first
        .destroy_player(account, player)
        .await
        .expect("destroyed");
    let erased = eventually(WATCH_DEADLINE, || {
        let (second, mut read) = (second.clone(), sealed.clone());
        async move {
            second.open(&mut read).await.expect("opened");
            let (text, _) = texts(&read);
            (text == ERASED).then(|| texts(&read))
        }
    })
    .await
    .expect("the second replica's watch drops the destroyed key in time");
    assert_eq!(erased.1, "never erased");
}

#[tokio::test]
async fn two_replicas_sealing_the_same_new_players_at_once_agree_on_their_keys() {
    let keys = Keys::start().await;
    let (a, b) = (keys.keyring().await, keys.keyring().await);
    let account = Uuid::now_v7();
    // Many new players at once, so the two creates race on some of them at least.
    let players: Vec<Uuid> = (0..40).map(|_| Uuid::now_v7()).collect();
    let batch = |tag: &str| {
        let lines = players
            .iter()
            .map(|p| logged!(chat_line(*p, "P", &format!("{tag} {p}"))))
            .collect();
        vec![LogMessage::new(
            account,
            Utc::now(),
            RecordBatch::Chat(lines),
        )]
    };
    let (written_a, written_b) = (batch("from a"), batch("from b"));
    let (mut sealed_a, mut sealed_b) = (written_a.clone(), written_b.clone());
    let policy = PrivacyPolicy::default();
    let (sealed, other) = tokio::join!(
        a.seal(&mut sealed_a[0], &policy),
        b.seal(&mut sealed_b[0], &policy)
    );
    sealed.expect("a sealed");
    other.expect("b sealed");

    // Each opens the other's output (and a third process opens both).
    let third = keys.keyring().await;
    for (reader, sealed, written) in [
        (&a, &sealed_b, &written_b),
        (&b, &sealed_a, &written_a),
        (&third, &sealed_a, &written_a),
        (&third, &sealed_b, &written_b),
    ] {
        let mut read = sealed.clone();
        reader.open(&mut read).await.expect("opened");
        assert_eq!(records(&read), records(written));
    }
}

#[tokio::test]
async fn a_wrong_master_key_is_an_error_not_an_erasure() {
    let keys = Keys::start().await;
    let right = keys.keyring().await;
    let (account, player, staff) = (Uuid::now_v7(), Uuid::now_v7(), Uuid::now_v7());
    let written = every_kind(account, player, staff);
    let mut sealed = written.clone();
    seal_all(&right, &mut sealed).await;

    let other_deployment =
        PrivacyConfig::from_vars(&test_vars("nats://unused")).expect("another master key");
    let wrong = keys.keyring_with(&other_deployment).await;
    let mut read = sealed.clone();
    let error = wrong
        .open(&mut read)
        .await
        .expect_err("keys wrapped by another master key do not open");
    assert!(
        matches!(error, KeyringError::MasterKey(_)),
        "a master key error, not {error:?}"
    );
    // Nothing was opened or blanked: the right key still reads everything.
    assert_eq!(records(&read), records(&sealed));
    right.open(&mut read).await.expect("opened");
    assert_eq!(records(&read), records(&written));
}
