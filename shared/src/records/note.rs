//! A staff note on a player, or on one of their punishments: written by a team
//! member through the dashboard, never by a plugin (ingest has no route for it). Logged like
//! every other record, under its own subject, so a rebuild replays notes with everything else.

use super::RecordKind;
use crate::envelope::{Logged, RecordBatch};
use crate::validation::{FieldError, FieldErrors};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Longest note text, in characters.
pub const MAX_NOTE_TEXT: usize = 2000;
/// Most evidence links on one note.
pub const MAX_EVIDENCE_LINKS: usize = 5;
/// Longest evidence link, in characters.
pub const MAX_EVIDENCE_LINK: usize = 500;
/// Longest author name (a team member's display name is at most 100 characters).
pub const MAX_AUTHOR_NAME: usize = 100;

/// Who wrote a note: the team member and the name they went by when they wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct NoteAuthor {
    /// The team member's id.
    pub member_id: Uuid,
    /// Their display name at the time.
    #[schema(min_length = 1, max_length = 100, pattern = "^[^\\x00]*$")]
    pub name: String,
}

/// A staff note: the payload of a `note` log message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// The player the note is about.
    pub player_uuid: Uuid,
    /// One of that player's punishments, when the note is about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub punishment_id: Option<Uuid>,
    /// The note, 1..=2000 characters.
    pub text: String,
    /// Links to evidence (http or https), at most 5 of at most 500 characters.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Who wrote it.
    pub author: NoteAuthor,
    /// When it was written.
    pub written_at: DateTime<Utc>,
}

impl Note {
    /// The record kind notes are logged under.
    pub const KIND: RecordKind = RecordKind::Note;

    /// The rules every stored note keeps; `now` is the time of writing (query-api) or of
    /// receipt (the projector, which skips a note that breaks them rather than stop on it).
    pub fn validate(&self, now: DateTime<Utc>) -> Result<(), Vec<FieldError>> {
        let mut errors = FieldErrors::new();
        if self.text.trim().is_empty() {
            errors.push("text", "required", "write the note");
        } else {
            errors.text("text", Some(&self.text), 1, MAX_NOTE_TEXT);
        }
        if self.evidence.len() > MAX_EVIDENCE_LINKS {
            errors.push(
                "evidence",
                "too_many",
                format!("at most {MAX_EVIDENCE_LINKS} evidence links"),
            );
        }
        for (i, link) in self.evidence.iter().enumerate() {
            let field = format!("evidence.{i}");
            errors.text(&field, Some(link), 1, MAX_EVIDENCE_LINK);
            if !is_web_link(link) {
                errors.push(
                    &field,
                    "invalid_link",
                    "must be an http:// or https:// link with a host and no spaces",
                );
            }
        }
        errors.text("author.name", Some(&self.author.name), 1, MAX_AUTHOR_NAME);
        errors.record_time("written_at", Some(self.written_at), now);
        errors.into_result()
    }

    /// Wraps notes into the log's tagged batch.
    pub fn into_batch(records: Vec<Logged<Note>>) -> RecordBatch {
        RecordBatch::Note(records)
    }
}

/// Whether `link` is an absolute http(s) link with a host and nothing a browser would read
/// differently from what is shown: no white space or control characters, no quotes or angle
/// brackets (the page shows links escaped, but a plain link is easier to trust).
pub fn is_web_link(link: &str) -> bool {
    let lower = link.to_ascii_lowercase();
    let Some(rest) = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))
    else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or("");
    !host.is_empty()
        && !host.starts_with(':')
        && !link
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '<' | '>' | '`'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn note(text: &str, evidence: &[&str]) -> Note {
        Note {
            player_uuid: Uuid::nil(),
            punishment_id: None,
            text: text.into(),
            evidence: evidence.iter().map(|s| (*s).to_owned()).collect(),
            author: NoteAuthor {
                member_id: Uuid::nil(),
                name: "Mia".into(),
            },
            written_at: Utc::now(),
        }
    }

    fn codes(note: &Note) -> Vec<(String, String)> {
        note.validate(Utc::now())
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.field, e.code))
            .collect()
    }

    #[test]
    fn a_plain_note_with_links_is_valid() {
        let ok = note(
            "Said sorry; watch for spam. <b>not html</b> \u{1f600}",
            &["https://example.com/clip?t=3#x", "http://imgur.com/a"],
        );
        assert_eq!(codes(&ok), []);
        assert_eq!(codes(&note(&"é".repeat(MAX_NOTE_TEXT), &[])), []);
    }

    #[test]
    fn text_is_required_bounded_and_storable() {
        assert_eq!(codes(&note("", &[])), [("text".into(), "required".into())]);
        assert_eq!(
            codes(&note("  \n", &[])),
            [("text".into(), "required".into())]
        );
        assert_eq!(
            codes(&note(&"x".repeat(MAX_NOTE_TEXT + 1), &[])),
            [("text".into(), "invalid_length".into())]
        );
        assert_eq!(
            codes(&note("a\0b", &[])),
            [("text".into(), "invalid_characters".into())]
        );
    }

    #[test]
    fn evidence_is_a_few_short_web_links() {
        let six = ["https://a.example"; 6];
        assert_eq!(
            codes(&note("x", &six)),
            [("evidence".into(), "too_many".into())]
        );
        for bad in [
            "javascript:alert(1)",
            "ftp://a.example",
            "https://",
            "https:///path",
            "https://a.example/x y",
            "https://a.example/\"onmouseover=",
            "data:text/html,hi",
            "//a.example",
            "https://:80",
        ] {
            assert_eq!(
                codes(&note("x", &[bad])),
                [("evidence.0".into(), "invalid_link".into())],
                "{bad}"
            );
        }
        let long = format!("https://a.example/{}", "x".repeat(MAX_EVIDENCE_LINK));
        assert_eq!(
            codes(&note("x", &[&long])),
            [("evidence.0".into(), "invalid_length".into())]
        );
        assert!(is_web_link("HTTPS://A.example"));
    }

    #[test]
    fn author_and_time_are_checked() {
        let mut bad = note("x", &[]);
        bad.author.name = "\0".into();
        bad.written_at = Utc::now() + Duration::hours(1);
        assert_eq!(
            codes(&bad),
            [
                ("author.name".into(), "invalid_characters".into()),
                ("written_at".into(), "in_future".into())
            ]
        );
    }

    #[test]
    fn notes_round_trip_through_the_log() {
        let logged = Logged {
            id: Uuid::now_v7(),
            record: note("x", &["https://a.example"]),
        };
        let message = crate::envelope::LogMessage::new(
            Uuid::now_v7(),
            Utc::now(),
            Note::into_batch(vec![logged]),
        );
        let decoded = crate::envelope::LogMessage::decode(&message.encode()).expect("decodes");
        assert_eq!(decoded, message);
        assert_eq!(decoded.kind(), RecordKind::Note);
        assert_eq!(decoded.envelopes()[0].server_id, None);
    }
}
