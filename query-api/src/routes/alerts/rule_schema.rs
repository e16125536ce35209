//! A rule's body (`{"kind", "destinations", "name"?, "enabled"?, ...the kind's fields}`): read
//! into a [`RuleInput`] with every problem as a field error, and its JSON Schema, one branch
//! per kind, written from the same table of fields the validation uses (`shared::alerts::rules`)
//! so the API reference says exactly what is accepted.

use crate::error::ApiError;
use serde_json::{Map, Value, json};
use shared::alerts::RuleSpec;
use shared::alerts::rules::{
    ANTICHEAT_FLAGS, ANTICHEAT_WINDOW_SECONDS, RuleKind, TPS_LOW_MINUTES, TPS_MAX,
};
use shared::openapi::CUSTOM_EVENT_NAME;
use shared::validation::FieldErrors;
use uuid::Uuid;

/// Most destinations one rule names.
pub const MAX_DESTINATIONS: usize = 10;

/// A rule as the API and the page send it, checked.
#[derive(Debug, Clone)]
pub struct RuleInput {
    /// Its kind and parameters.
    pub spec: RuleSpec,
    /// Where it notifies (1..=10, distinct; whose they are is checked against the database).
    pub destinations: Vec<Uuid>,
    /// A label, 1..=100 characters.
    pub name: Option<String>,
    /// Whether it fires (default true).
    pub enabled: bool,
}

impl RuleInput {
    /// Reads a body; 422 with one field error per problem.
    pub fn parse(body: Value) -> Result<RuleInput, ApiError> {
        let Value::Object(mut object) = body else {
            return Err(ApiError::invalid_field(
                "",
                "invalid_type",
                "a rule must be a JSON object",
            ));
        };
        let mut errors = FieldErrors::new();
        let destinations = destinations(object.remove("destinations"), &mut errors);
        let name = match object.remove("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => {
                errors.text("name", Some(&name), 1, 100);
                Some(name)
            }
            Some(_) => {
                errors.push("name", "invalid_type", "must be a string");
                None
            }
        };
        let enabled = match object.remove("enabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(enabled)) => enabled,
            Some(_) => {
                errors.push("enabled", "invalid_type", "must be true or false");
                true
            }
        };
        let spec = RuleSpec::parse(&Value::Object(object));
        let mut all = errors.into_result().err().unwrap_or_default();
        if let Err(spec_errors) = &spec {
            all.extend(spec_errors.iter().cloned());
        }
        match spec {
            Ok(spec) if all.is_empty() => Ok(RuleInput {
                spec,
                destinations,
                name,
                enabled,
            }),
            _ => Err(ApiError::invalid(all)),
        }
    }
}

fn destinations(value: Option<Value>, errors: &mut FieldErrors) -> Vec<Uuid> {
    let items = match value {
        None | Some(Value::Null) => {
            errors.push("destinations", "required", "name 1 to 10 destination ids");
            return Vec::new();
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            errors.push(
                "destinations",
                "invalid_type",
                "must be an array of destination ids",
            );
            return Vec::new();
        }
    };
    if items.is_empty() || items.len() > MAX_DESTINATIONS {
        errors.push(
            "destinations",
            "invalid_length",
            format!(
                "name 1 to {MAX_DESTINATIONS} destinations (got {})",
                items.len()
            ),
        );
    }
    let mut ids = Vec::new();
    for (i, item) in items.iter().enumerate() {
        // The hyphenated form only, as the schema's `format: uuid` says.
        let parsed = item
            .as_str()
            .filter(|s| s.len() == 36)
            .and_then(|s| Uuid::parse_str(s).ok());
        match parsed {
            Some(id) if ids.contains(&id) => {
                errors.push(&format!("destinations[{i}]"), "duplicate", "named twice");
            }
            Some(id) => ids.push(id),
            None => errors.push(
                &format!("destinations[{i}]"),
                "invalid_uuid",
                "must be a UUID",
            ),
        }
    }
    ids
}

/// The schema of each kind's own fields, and which are required.
fn kind_fields(kind: RuleKind) -> (Value, Vec<&'static str>) {
    let nullable_uuid = json!({"type": ["string", "null"], "format": "uuid"});
    let punishment_types = json!({
        "type": "array", "uniqueItems": true,
        "items": {"type": "string", "enum": ["ban", "mute", "kick", "warning"]},
        "description": "Only these types; empty (the default) matches every type",
    });
    match kind {
        RuleKind::PunishmentIssued | RuleKind::PunishmentRevoked => {
            (json!({"punishment_types": punishment_types}), vec![])
        }
        RuleKind::AnticheatThreshold => (
            json!({
                "flags": {"type": "integer", "minimum": ANTICHEAT_FLAGS.start(), "maximum": ANTICHEAT_FLAGS.end(),
                    "description": "How many flags of one player"},
                "window_seconds": {"type": "integer", "minimum": ANTICHEAT_WINDOW_SECONDS.start(),
                    "maximum": ANTICHEAT_WINDOW_SECONDS.end(), "description": "Within how many seconds"},
                "check": {"type": ["string", "null"], "minLength": 1, "maxLength": 128, "pattern": "^[^\\x00]*$",
                    "description": "Count only this check's flags (absent: every check)"},
            }),
            vec!["flags", "window_seconds"],
        ),
        RuleKind::ServerOffline | RuleKind::ServerOnline => {
            (json!({"server_id": nullable_uuid}), vec![])
        }
        RuleKind::TpsLow => (
            json!({
                "below": {"type": "number", "exclusiveMinimum": 0, "maximum": TPS_MAX},
                "minutes": {"type": "integer", "minimum": TPS_LOW_MINUTES.start(), "maximum": TPS_LOW_MINUTES.end()},
                "server_id": nullable_uuid,
            }),
            vec!["below", "minutes"],
        ),
        RuleKind::BannedAltJoined => (json!({}), vec![]),
        RuleKind::StaffRankChange => (
            json!({"direction": {"type": "string", "enum": ["into", "out_of", "both"],
                "description": "Into a staff group, out of one, or both (default)"}}),
            vec![],
        ),
        RuleKind::CustomEvent => (
            json!({"event_name": {"type": "string", "pattern": CUSTOM_EVENT_NAME}}),
            vec!["event_name"],
        ),
    }
}

/// One branch per kind: `kind` (a constant), the kind's fields and `extra` fields.
fn branches(extra: &Value, extra_required: &[&str]) -> Value {
    let branches: Vec<Value> = RuleKind::ALL
        .into_iter()
        .map(|kind| {
            let (fields, required) = kind_fields(kind);
            let mut properties = Map::new();
            properties.insert(
                "kind".into(),
                json!({"type": "string", "const": kind.as_str()}),
            );
            if let (Value::Object(fields), Value::Object(extra)) = (fields, extra) {
                properties.extend(fields);
                properties.extend(extra.clone());
            }
            let mut all_required = vec!["kind"];
            all_required.extend(extra_required);
            all_required.extend(required);
            json!({
                "type": "object", "title": kind.as_str(), "properties": properties,
                "required": all_required, "additionalProperties": false,
            })
        })
        .collect();
    json!({ "oneOf": branches })
}

/// Writes the `NewRule` (request) and `RuleSpec` (as stored and answered) schemas.
pub fn refine_document(doc: &mut Value) {
    let extra = json!({
        "destinations": {"type": "array", "minItems": 1, "maxItems": MAX_DESTINATIONS, "uniqueItems": true,
            "items": {"type": "string", "format": "uuid"},
            "description": "The account's destinations to notify"},
        "name": {"type": ["string", "null"], "minLength": 1, "maxLength": 100, "pattern": "^[^\\x00]*$"},
        "enabled": {"type": ["boolean", "null"], "description": "Default true"},
    });
    let mut new_rule = branches(&extra, &["destinations"]);
    new_rule["description"] =
        json!("A rule: `kind`, the destinations it notifies, and the kind's parameters");
    let mut spec = branches(&json!({}), &[]);
    spec["description"] = json!("A rule's kind and parameters, as stored");
    let schemas = &mut doc["components"]["schemas"];
    schemas["NewRule"] = new_rule;
    schemas["RuleSpec"] = spec;
    if let Some(rule) = schemas.get_mut("Rule") {
        rule["properties"]["spec"] = json!({"$ref": "#/components/schemas/RuleSpec"});
        rule["properties"]["kind"] = json!({
            "type": "string",
            "enum": RuleKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(body: Value) -> Vec<(String, String)> {
        match RuleInput::parse(body) {
            Err(ApiError::Validation { errors, .. }) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            other => panic!("expected a 422, got {other:?}"),
        }
    }

    #[test]
    fn a_body_is_split_into_the_spec_and_the_rest() {
        let id = Uuid::now_v7();
        let input = RuleInput::parse(json!({
            "kind": "anticheat_threshold", "destinations": [id], "flags": 5, "window_seconds": 60,
            "name": "Flag bursts",
        }));
        let input = input
            .ok()
            .map(|i| (i.destinations, i.name, i.enabled, i.spec.kind()));
        assert_eq!(
            input,
            Some((
                vec![id],
                Some("Flag bursts".into()),
                true,
                "anticheat_threshold"
            ))
        );
    }

    #[test]
    fn every_problem_is_a_field_error() {
        let id = Uuid::now_v7().to_string();
        assert_eq!(
            fields(json!({"kind": "tps_low", "destinations": [], "below": 0, "minutes": 5})),
            [
                ("destinations".into(), "invalid_length".into()),
                ("below".into(), "out_of_range".into())
            ]
        );
        assert_eq!(
            fields(
                json!({"kind": "custom_event", "destinations": [id, id, "x"], "event_name": "ok"})
            ),
            [
                ("destinations[1]".into(), "duplicate".into()),
                ("destinations[2]".into(), "invalid_uuid".into())
            ]
        );
        assert_eq!(
            fields(json!({"destinations": [id]})),
            [("kind".into(), "required".into())]
        );
        assert_eq!(
            fields(json!({"kind": "banned_alt_joined", "destinations": [id], "flags": 2})),
            [("flags".into(), "unknown_field".into())]
        );
        assert_eq!(fields(json!([1])), [("".into(), "invalid_type".into())]);
    }

    #[test]
    fn the_schema_has_a_branch_per_kind() {
        let mut doc = json!({"components": {"schemas": {}}});
        refine_document(&mut doc);
        let branches = doc["components"]["schemas"]["NewRule"]["oneOf"]
            .as_array()
            .cloned();
        assert_eq!(branches.map(|b| b.len()), Some(RuleKind::ALL.len()));
    }
}
