//! Secrets in configuration: values that must never reach a log line or an error message.
//!
//! [`Secret`] holds a key (`ADMIN_KEY`, `IP_HASH_KEY`): its `Debug` prints `Secret([redacted])`
//! and it has no `Display`, so a config struct that derives `Debug` cannot print it, and
//! reading the value takes a visible [`Secret::expose`]. [`RedactedUrl`] holds a connection URL
//! (`DATABASE_URL`, `NATS_URL`) that may carry a password: it formats (`{:?}` and `{}`) with the
//! password replaced by `***`, so error messages can still say which server was meant.

use std::fmt;

/// A secret value; formatting never shows it.
#[derive(Clone, Default)]
pub struct Secret<T>(T);

/// A secret string, such as `ADMIN_KEY`.
pub type SecretString = Secret<String>;

impl<T> Secret<T> {
    /// Wraps `value`.
    pub fn new(value: T) -> Self {
        Self(value)
    }

    /// The value itself: only for the code that uses it (compares, hashes, connects).
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl From<String> for Secret<String> {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for Secret<String> {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

/// A connection URL (or a comma-separated list of them) that may carry credentials.
///
/// Formatting shows it with every password replaced by `***`: the password of
/// `scheme://user:password@host`, a NATS token (`nats://token@host`, whose user part is the
/// secret) and `password=`/`token=` parameters. Connectors take the URL as `&str`, so it
/// dereferences to the real one; nothing that formats it sees that.
#[derive(Clone, PartialEq, Eq)]
pub struct RedactedUrl(String);

/// `DATABASE_URL` and `READ_DATABASE_URL`.
pub type DatabaseUrl = RedactedUrl;

/// `NATS_URL`.
pub type NatsUrl = RedactedUrl;

impl RedactedUrl {
    /// Wraps `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL itself, credentials included.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with its credentials replaced by `***`.
    pub fn redacted(&self) -> String {
        self.0
            .split(',')
            .map(redact_one)
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl std::ops::Deref for RedactedUrl {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for RedactedUrl {
    fn from(url: String) -> Self {
        Self(url)
    }
}

impl From<&str> for RedactedUrl {
    fn from(url: &str) -> Self {
        Self(url.to_owned())
    }
}

impl fmt::Debug for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.redacted())
    }
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Parameters whose values are credentials (PostgreSQL's `password`/`sslpassword`, tokens).
const SECRET_PARAMS: &[&str] = &["password", "sslpassword", "pass", "token", "auth_token"];

/// Redacts one URL: the user-info's password and the secret parameters.
fn redact_one(url: &str) -> String {
    let with_userinfo = match url.find("://") {
        Some(scheme_end) => {
            let (scheme, rest) = url.split_at(scheme_end + 3);
            let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(authority_end);
            match authority.rfind('@') {
                Some(at) => {
                    let (userinfo, host) = authority.split_at(at);
                    let userinfo = match userinfo.split_once(':') {
                        Some((user, _password)) => format!("{user}:***"),
                        // PostgreSQL's bare user-info is a user name; NATS's is a token.
                        None if scheme.starts_with("postgres") => userinfo.to_owned(),
                        None => "***".to_owned(),
                    };
                    format!("{scheme}{userinfo}{host}{tail}")
                }
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
    };
    redact_params(&with_userinfo)
}

/// Replaces the value of every `name=value` whose name is in [`SECRET_PARAMS`], in a query
/// string (`?a=1&password=x`) or a key-value connection string (`host=h password=x`).
fn redact_params(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let name_start = rest[..eq].rfind(['?', '&', ' ', ';']).map_or(0, |i| i + 1);
        let value_end = rest[eq + 1..]
            .find(['&', ' ', ';', '#'])
            .map_or(rest.len(), |i| eq + 1 + i);
        let name = rest[name_start..eq].to_ascii_lowercase();
        out.push_str(&rest[..=eq]);
        if SECRET_PARAMS.contains(&name.as_str()) {
            out.push_str("***");
        } else {
            out.push_str(&rest[eq + 1..value_end]);
        }
        rest = &rest[value_end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_formats() {
        let key = SecretString::from("wdn_admin_s3cret");
        assert_eq!(format!("{key:?}"), "Secret([redacted])");
        assert_eq!(
            format!("{:#?}", Some(key.clone())),
            "Some(\n    Secret([redacted]),\n)"
        );
        assert_eq!(key.expose(), "wdn_admin_s3cret");
    }

    #[test]
    fn a_url_password_is_replaced() {
        let cases = [
            (
                "postgres://warden:hunter2@db:5432/warden?sslmode=require",
                "postgres://warden:***@db:5432/warden?sslmode=require",
            ),
            ("postgres://warden@db/warden", "postgres://warden@db/warden"),
            (
                "postgresql://db/warden?user=w&password=hunter2&sslmode=disable",
                "postgresql://db/warden?user=w&password=***&sslmode=disable",
            ),
            ("postgres://u:p@ss:w@rd@db/x", "postgres://u:***@db/x"),
            (
                "host=db user=w password=hunter2",
                "host=db user=w password=***",
            ),
            ("nats://127.0.0.1:4222", "nats://127.0.0.1:4222"),
            ("nats://s3cr3ttoken@nats:4222", "nats://***@nats:4222"),
            (
                "nats://a:pw1@n1:4222, nats://b:pw2@n2:4222",
                "nats://a:***@n1:4222, nats://b:***@n2:4222",
            ),
        ];
        for (url, shown) in cases {
            let url = RedactedUrl::from(url);
            assert_eq!(url.to_string(), shown);
            assert_eq!(format!("{url:?}"), format!("{shown:?}"));
        }
        for secret in ["hunter2", "s3cr3ttoken", "pw1", "pw2", "p@ss"] {
            for (url, _) in cases {
                assert!(!RedactedUrl::from(url).to_string().contains(secret));
            }
        }
    }

    #[test]
    fn the_real_url_is_still_there_for_connectors() {
        let url = DatabaseUrl::from("postgres://w:hunter2@db/x");
        assert_eq!(url.expose(), "postgres://w:hunter2@db/x");
        assert_eq!(&*url, "postgres://w:hunter2@db/x");
    }
}
