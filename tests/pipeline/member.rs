//! A signed-in dashboard member's HTTP client for the page tests: the session cookie from the
//! sign-in form, redirects not followed, `Origin` sent on POSTs as a browser does.

use pipeline_tests::MEMBER_PASSWORD;
use reqwest::header::{COOKIE, LOCATION, ORIGIN, SET_COOKIE};

pub(crate) struct Member {
    http: reqwest::Client,
    base: String,
    cookie: String,
}

impl Member {
    /// Signs `login` in (with the test password) on the stack at `base`.
    pub(crate) async fn sign_in(base: &str, login: &str) -> Member {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        let answer = http
            .post(format!("{base}/login"))
            .header(ORIGIN, base)
            .form(&[("login", login), ("password", MEMBER_PASSWORD)])
            .send()
            .await
            .expect("sign-in answers");
        assert_eq!(answer.status(), 303, "sign-in of {login}");
        let cookie = answer.headers()[SET_COOKIE]
            .to_str()
            .expect("cookie text")
            .split(';')
            .next()
            .expect("cookie pair")
            .to_owned();
        Member {
            http,
            base: base.to_owned(),
            cookie,
        }
    }

    /// `GET path` with the session.
    pub(crate) async fn get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .expect("the page answers")
    }

    /// `GET path`: status and body.
    pub(crate) async fn page(&self, path: &str) -> (u16, String) {
        let answer = self.get(path).await;
        let status = answer.status().as_u16();
        (status, answer.text().await.unwrap_or_default())
    }

    /// Posts `form` to `path` from `origin` (the stack's own, unless a test says otherwise);
    /// returns the status, `Location` and body.
    pub(crate) async fn post_form(
        &self,
        path: &str,
        form: &[(&str, &str)],
        origin: Option<&str>,
    ) -> (u16, Option<String>, String) {
        let answer = self
            .http
            .post(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .header(ORIGIN, origin.unwrap_or(&self.base))
            .form(form)
            .send()
            .await
            .expect("the form answers");
        let status = answer.status().as_u16();
        let location = answer
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(str::to_owned);
        (status, location, answer.text().await.unwrap_or_default())
    }
}
