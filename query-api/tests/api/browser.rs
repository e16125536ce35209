//! A small browser for the dashboard's pages: a cookie jar of one session cookie (kept by hand,
//! so a test sees exactly what the server set and can plant a cookie of its own), no redirects
//! followed, and `Origin` sent on POSTs as a browser would.

use crate::helpers::TestApp;
use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

/// The session cookie's name on a `COOKIE_SECURE=true` (default) server.
pub(crate) const SESSION_COOKIE: &str = "__Host-warden_session";

/// One browser: its own cookie.
pub(crate) struct Browser {
    client: reqwest::Client,
    base: String,
    /// `name=value` of the session cookie, when the browser holds one.
    pub(crate) cookie: Option<String>,
    /// The whole `Set-Cookie` of the last answer that set one.
    pub(crate) last_set_cookie: Option<String>,
}

impl Browser {
    pub(crate) fn new(app: &TestApp) -> Browser {
        Browser {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default(),
            base: app.url(""),
            cookie: None,
            last_set_cookie: None,
        }
    }

    /// The session token the browser holds.
    pub(crate) fn token(&self) -> Option<String> {
        self.cookie
            .as_deref()
            .and_then(|c| c.split_once('='))
            .map(|(_, v)| v.to_owned())
    }

    fn keep(&mut self, response: &Response) {
        for value in response.headers().get_all(SET_COOKIE) {
            let text = value.to_str().unwrap_or_default().to_owned();
            let pair = text.split(';').next().unwrap_or_default().trim().to_owned();
            let cleared = text.contains("Max-Age=0") || pair.ends_with('=');
            self.cookie = (!cleared).then_some(pair);
            self.last_set_cookie = Some(text);
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> anyhow::Result<Response> {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.header(COOKIE, cookie);
        }
        let response = request.send().await?;
        self.keep(&response);
        Ok(response)
    }

    /// `GET path` and its body, asserting the status.
    pub(crate) async fn page(&mut self, path: &str, status: StatusCode) -> anyhow::Result<String> {
        let response = self.get(path).await?;
        assert_eq!(response.status(), status, "GET {path}");
        Ok(response.text().await?)
    }

    /// A form POST from `origin` (`None`: no Origin header at all).
    pub(crate) async fn post_from(
        &mut self,
        path: &str,
        form: &[(&str, &str)],
        origin: Option<&str>,
    ) -> anyhow::Result<Response> {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(serde_urlencoded::to_string(form)?);
        if let Some(origin) = origin {
            request = request.header(ORIGIN, origin);
        }
        if let Some(cookie) = &self.cookie {
            request = request.header(COOKIE, cookie);
        }
        let response = request.send().await?;
        self.keep(&response);
        Ok(response)
    }

    /// A form POST from the dashboard's own origin.
    pub(crate) async fn post(
        &mut self,
        path: &str,
        form: &[(&str, &str)],
    ) -> anyhow::Result<Response> {
        let origin = self.base.clone();
        self.post_from(path, form, Some(&origin)).await
    }

    pub(crate) async fn sign_in(
        &mut self,
        login: &str,
        password: &str,
    ) -> anyhow::Result<Response> {
        self.post("/login", &[("login", login), ("password", password)])
            .await
    }

    /// Signs in and asserts it worked.
    pub(crate) async fn signed_in(
        app: &TestApp,
        login: &str,
        password: &str,
    ) -> anyhow::Result<Browser> {
        let mut browser = Browser::new(app);
        let response = browser.sign_in(login, password).await?;
        assert_eq!(
            response.status(),
            StatusCode::SEE_OTHER,
            "sign-in of {login}"
        );
        anyhow::ensure!(browser.cookie.is_some(), "no session cookie");
        Ok(browser)
    }
}

/// The password every test member gets.
pub(crate) const PASSWORD: &str = "correct horse battery staple";

impl TestApp {
    /// Creates a member through the admin API; returns the whole body.
    pub(crate) async fn create_member(
        &self,
        account: &str,
        login: &str,
        display_name: &str,
        role: &str,
    ) -> anyhow::Result<Value> {
        let response = self
            .admin(
                reqwest::Method::POST,
                &format!("/api/admin/accounts/{account}/members"),
            )
            .json(&json!({
                "login": login, "display_name": display_name, "role": role, "password": PASSWORD
            }))
            .send()
            .await?;
        anyhow::ensure!(
            response.status() == StatusCode::CREATED,
            "{}",
            response.status()
        );
        Ok(response.json().await?)
    }

    /// An account with an owner: `(account_id, owner login)`.
    pub(crate) async fn account_with_owner(&self, name: &str) -> anyhow::Result<(String, String)> {
        let account = self.create_account(name).await?;
        let login = format!("owner-{}@test.local", &account[account.len() - 8..]);
        self.create_member(&account, &login, "The Owner", "owner")
            .await?;
        Ok((account, login))
    }
}

/// Whether `location` of a redirect is the sign-in page.
pub(crate) fn to_sign_in(response: &Response) -> bool {
    response.status() == StatusCode::SEE_OTHER
        && response
            .headers()
            .get("location")
            .is_some_and(|l| l == "/login")
}
