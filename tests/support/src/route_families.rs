//! Checks that every route an OpenAPI document lists sits behind the gate of the family its
//! `security` names: the document is the route table a client trusts, so it is the one tested.

use anyhow::{Context, ensure};
use reqwest::{Client, Method, StatusCode};
use serde_json::Value;

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// For every operation of `doc` whose security scheme is in `keys` (scheme name, a working key
/// of that scheme), or that has no security (a public route), sends requests to `base`:
///
/// - without a key: 401 `missing_credentials` (public routes: admitted, with `RateLimit-*`);
/// - with the key of every other scheme in `keys`: 403 `wrong_key_type`;
/// - with its own key: admitted (not 401, 403 or 5xx; the body is empty, so 4xx is fine).
///
/// Returns how many operations were checked (operations of other schemes are left out).
pub async fn check_route_families(
    client: &Client,
    base: &str,
    doc: &Value,
    keys: &[(&str, &str)],
) -> anyhow::Result<usize> {
    let paths = doc["paths"]
        .as_object()
        .context("the document has no paths")?;
    let mut checked = 0;
    for (path, item) in paths {
        let url = format!("{base}{}", concrete(path));
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let scheme = operation["security"]
                .as_array()
                .and_then(|requirements| requirements.first())
                .and_then(Value::as_object)
                .and_then(|requirement| requirement.keys().next().cloned());
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes())?;
            let route = format!("{method} {path}");
            let Some(scheme) = scheme else {
                let response = client.request(method, &url).send().await?;
                let status = response.status();
                ensure!(
                    status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN,
                    "{route} is documented as public but answers {status} without a key"
                );
                ensure!(
                    response.headers().contains_key("ratelimit-limit"),
                    "{route} is public but not metered (no RateLimit-Limit)"
                );
                checked += 1;
                continue;
            };
            let Some(own) = keys.iter().find(|(name, _)| *name == scheme) else {
                continue;
            };
            let response = client.request(method.clone(), &url).send().await?;
            expect_problem(
                response,
                StatusCode::UNAUTHORIZED,
                "missing_credentials",
                &route,
            )
            .await?;
            for (other, key) in keys.iter().filter(|(name, _)| *name != scheme) {
                let response = client
                    .request(method.clone(), &url)
                    .bearer_auth(key)
                    .send()
                    .await?;
                expect_problem(response, StatusCode::FORBIDDEN, "wrong_key_type", &route)
                    .await
                    .with_context(|| format!("with a {other}"))?;
            }
            let status = client
                .request(method, &url)
                .bearer_auth(own.1)
                .send()
                .await?
                .status();
            ensure!(
                status != StatusCode::UNAUTHORIZED
                    && status != StatusCode::FORBIDDEN
                    && !status.is_server_error(),
                "{route} answers its own {scheme} with {status}"
            );
            checked += 1;
        }
    }
    Ok(checked)
}

/// The path with every `{parameter}` filled in (a UUID, which every id here is).
fn concrete(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |i| open + i + 1);
        out.push_str("00000000-0000-7000-8000-000000000000");
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

async fn expect_problem(
    response: reqwest::Response,
    status: StatusCode,
    code: &str,
    route: &str,
) -> anyhow::Result<()> {
    let got = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    ensure!(
        got == status && body["code"] == code,
        "{route}: wanted {status} {code}, got {got} {body}"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::concrete;

    #[test]
    fn parameters_are_filled_in() {
        assert_eq!(concrete("/api/servers"), "/api/servers");
        assert_eq!(
            concrete("/api/admin/accounts/{account_id}/keys"),
            "/api/admin/accounts/00000000-0000-7000-8000-000000000000/keys"
        );
    }
}
