//! A page's query string, read leniently: a link with a value the page does not know shows the
//! page's default rather than an error, and a malformed or repeated parameter is not a 400 in
//! plain text (axum's `Query` rejection).

/// The first value of `name` in the raw query string.
pub fn value(raw: Option<&str>, name: &str) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(raw.unwrap_or(""))
        .ok()?
        .into_iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_value_is_read_and_a_missing_one_is_none() {
        assert_eq!(
            value(Some("range=7d&range=1h"), "range").as_deref(),
            Some("7d")
        );
        assert_eq!(value(Some("x=1"), "range"), None);
        assert_eq!(value(None, "range"), None);
        // A broken escape is kept as written; the page then does not know the value.
        assert_eq!(value(Some("range=%ZZ"), "range").as_deref(), Some("%ZZ"));
    }
}
