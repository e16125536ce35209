//! What `docs/webhooks.md` promises, read straight from the Markdown: the example body of every
//! event type ("### Every event type"), the values an enum-like field may take, and the
//! "Verify a signature" code. Plus the shape comparison a delivery must pass against its
//! example: the same keys at every level, the same JSON types.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The page, as the docs ship it.
pub(crate) fn webhooks_md() -> anyhow::Result<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/webhooks.md");
    std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The text under the heading line `heading`, up to the next heading of level 2 or 3.
pub(crate) fn section<'a>(md: &'a str, heading: &str) -> anyhow::Result<&'a str> {
    let start = md
        .find(&format!("\n{heading}\n"))
        .ok_or_else(|| anyhow::anyhow!("docs/webhooks.md has no `{heading}`"))?
        + heading.len()
        + 2;
    let rest = &md[start..];
    let end = ["\n## ", "\n### "]
        .iter()
        .filter_map(|h| rest.find(h))
        .min()
        .unwrap_or(rest.len());
    Ok(&rest[..end])
}

/// The bodies of the fenced blocks with info string `lang`, in order.
pub(crate) fn fenced(text: &str, lang: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim() == format!("```{lang}") => current = Some(String::new()),
            Some(block) if line.trim() == "```" => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

/// The tokens written as bold code (`**\`name\`**`) in `line`.
fn bold_code(line: &str) -> Vec<String> {
    line.split("**`")
        .skip(1)
        .filter_map(|part| part.split_once("`**").map(|(name, _)| name.to_owned()))
        .collect()
}

/// Every documented event type and its example body. A bold-code paragraph names the types
/// (`**\`rank.staff_joined\`** and **\`rank.staff_left\`**` share one example); the next
/// `json` block is their example.
pub(crate) fn examples(section: &str) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    let mut named: Vec<String> = Vec::new();
    let mut block: Option<String> = None;
    for line in section.lines() {
        if let Some(text) = &mut block {
            if line.trim() == "```" {
                let example: Value = serde_json::from_str(text)
                    .map_err(|e| anyhow::anyhow!("the example for {named:?}: {e}\n{text}"))?;
                anyhow::ensure!(!named.is_empty(), "an example names no type: {example}");
                for name in named.drain(..) {
                    anyhow::ensure!(
                        out.insert(name.clone(), example.clone()).is_none(),
                        "`{name}` is documented twice"
                    );
                }
                block = None;
            } else {
                text.push_str(line);
                text.push('\n');
            }
        } else if line.trim() == "```json" {
            block = Some(String::new());
        } else if line.starts_with("**`") {
            anyhow::ensure!(named.is_empty(), "{named:?} have no example");
            named = bold_code(line);
        }
    }
    anyhow::ensure!(named.is_empty(), "{named:?} have no example");
    // Every example's `type` is one of the types it is given for.
    for (name, example) in &out {
        let given = example["type"].as_str().unwrap_or_default();
        anyhow::ensure!(
            out.contains_key(given),
            "the example for `{name}` says type `{given}`, which has no heading"
        );
    }
    Ok(out)
}

/// The values the docs allow for `field`: the code spans of the sentence "`field` is `a`,
/// `b` or `c`." in `text`, if it has one.
pub(crate) fn enum_values(text: &str, field: &str) -> Option<BTreeSet<String>> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let start = flat.find(&format!("`{field}` is "))? + field.len() + 6;
    let sentence = &flat[start..start + flat[start..].find('.')?];
    let values: BTreeSet<String> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    (!values.is_empty()).then_some(values)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where `got` differs in shape from `documented`: keys missing on either side at any level,
/// and JSON types (an integer in the docs wants an integer; a documented fraction takes any
/// number). Array elements are compared with the documented array's first element.
pub(crate) fn shape_diff(at: &str, documented: &Value, got: &Value, out: &mut Vec<String>) {
    match (documented, got) {
        (Value::Object(doc), Value::Object(sent)) => {
            for key in doc.keys().filter(|k| !sent.contains_key(*k)) {
                out.push(format!("{at}.{key}: documented, not sent"));
            }
            for key in sent.keys().filter(|k| !doc.contains_key(*k)) {
                out.push(format!("{at}.{key}: sent, not documented"));
            }
            for (key, doc_value) in doc {
                if let Some(sent_value) = sent.get(key) {
                    shape_diff(&format!("{at}.{key}"), doc_value, sent_value, out);
                }
            }
        }
        (Value::Array(doc), Value::Array(sent)) => {
            if let Some(first) = doc.first() {
                for (i, item) in sent.iter().enumerate() {
                    shape_diff(&format!("{at}[{i}]"), first, item, out);
                }
            }
        }
        (Value::Number(_), Value::Number(_)) if kind(documented) == "number" => {}
        _ if kind(documented) != kind(got) => out.push(format!(
            "{at}: documented as {} ({documented}), sent as {} ({got})",
            kind(documented),
            kind(got)
        )),
        _ => {}
    }
}

#[test]
fn shape_diff_sees_missing_and_extra_keys_and_other_types() {
    let doc = serde_json::json!({"a": 1, "b": {"c": "x"}, "d": [{"e": 1.5}], "f": null});
    let mut out = Vec::new();
    shape_diff("", &doc, &doc, &mut out);
    assert!(out.is_empty(), "{out:?}");
    let got = serde_json::json!({"a": 1.5, "b": {"g": "x"}, "d": [{"e": 2}, {"e": "2"}], "f": 1});
    shape_diff("", &doc, &got, &mut out);
    assert_eq!(
        out,
        [
            ".a: documented as integer (1), sent as number (1.5)",
            ".b.c: documented, not sent",
            ".b.g: sent, not documented",
            ".d[1].e: documented as number (1.5), sent as string (\"2\")",
            ".f: documented as null (null), sent as integer (1)",
        ]
    );
}

#[test]
fn enum_values_read_the_sentence_that_lists_them() {
    let text = "`punishment_type` is `ban`, `mute`, `kick`\nor `warning`. Other `x`.";
    let values = enum_values(text, "punishment_type").unwrap_or_default();
    assert_eq!(
        values.into_iter().collect::<Vec<_>>(),
        ["ban", "kick", "mute", "warning"]
    );
    assert_eq!(enum_values(text, "reason"), None);
}
