//! The dashboard's static files: ours (`query-api/assets/`) and vendored ones
//! (`query-api/assets/vendor/`, pinned in `VERSIONS.md`), embedded in the binary and served at
//! `/assets/<name>.<hash>.<ext>`. The hash is of the content, so a changed file gets a new URL
//! and every URL can be cached for a year. Templates ask [`url`] for a file's current URL.
//!
//! Adding a file: one line in [`ASSETS`], then `{{ crate::pages::assets::url("name.ext") }}`.

use axum::Router;
use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

/// One embedded file.
struct Asset {
    /// The name templates use (`app.css`).
    name: &'static str,
    /// The vendored file it is, for the checksum test (`None`: ours).
    #[cfg_attr(not(test), allow(dead_code))]
    vendored: Option<&'static str>,
    content_type: &'static str,
    bytes: &'static [u8],
}

const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// Every file the pages may link.
const ASSETS: &[Asset] = &[
    Asset {
        name: "app.css",
        vendored: None,
        content_type: CSS,
        bytes: include_bytes!("../../assets/app.css"),
    },
    Asset {
        name: "shell.js",
        vendored: None,
        content_type: JS,
        bytes: include_bytes!("../../assets/shell.js"),
    },
    Asset {
        name: "activity.js",
        vendored: None,
        content_type: JS,
        bytes: include_bytes!("../../assets/activity.js"),
    },
    Asset {
        name: "anticheat.js",
        vendored: None,
        content_type: JS,
        bytes: include_bytes!("../../assets/anticheat.js"),
    },
    Asset {
        name: "retention.css",
        vendored: None,
        content_type: CSS,
        bytes: include_bytes!("../../assets/retention.css"),
    },
    Asset {
        name: "charts.js",
        vendored: None,
        content_type: JS,
        bytes: include_bytes!("../../assets/charts.js"),
    },
    Asset {
        name: "events.css",
        vendored: None,
        content_type: CSS,
        bytes: include_bytes!("../../assets/events.css"),
    },
    Asset {
        name: "events.js",
        vendored: None,
        content_type: JS,
        bytes: include_bytes!("../../assets/events.js"),
    },
    Asset {
        name: "htmx.min.js",
        vendored: Some("htmx-2.0.11.min.js"),
        content_type: JS,
        bytes: include_bytes!("../../assets/vendor/htmx-2.0.11.min.js"),
    },
    Asset {
        name: "uplot.min.js",
        vendored: Some("uplot-1.6.32.iife.min.js"),
        content_type: JS,
        bytes: include_bytes!("../../assets/vendor/uplot-1.6.32.iife.min.js"),
    },
    Asset {
        name: "uplot.min.css",
        vendored: Some("uplot-1.6.32.min.css"),
        content_type: CSS,
        bytes: include_bytes!("../../assets/vendor/uplot-1.6.32.min.css"),
    },
];

/// Hashed URLs never change meaning, so browsers may keep them for a year without asking.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Each asset's URL (`/assets/app.0123456789abcdef.css`), in [`ASSETS`] order.
static URLS: LazyLock<Vec<String>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|asset| {
            let digest = hex::encode(Sha256::digest(asset.bytes));
            let (stem, ext) = asset.name.split_once('.').unwrap_or((asset.name, ""));
            format!("/assets/{stem}.{}.{ext}", &digest[..16])
        })
        .collect()
});

/// The current URL of the asset called `name`; a name not in [`ASSETS`] is a bug, caught by
/// the page tests as a 404 (the URL points nowhere).
pub fn url(name: &str) -> &'static str {
    ASSETS
        .iter()
        .position(|asset| asset.name == name)
        .and_then(|index| URLS.get(index))
        .map_or("/assets/unknown", String::as_str)
}

/// `GET /assets/{file}`: no state, so it merges into any router.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/assets/{file}", get(serve))
}

async fn serve(Path(file): Path<String>) -> Response {
    let wanted = format!("/assets/{file}");
    match URLS.iter().position(|url| *url == wanted) {
        Some(index) => (
            [
                (CONTENT_TYPE, ASSETS[index].content_type),
                (CACHE_CONTROL, IMMUTABLE),
                (X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            ASSETS[index].bytes,
        )
            .into_response(),
        None => shared::problem::Problem::not_found(format!(
            "there is no asset {file}; asset URLs change with their content, reload the page"
        ))
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendored_files_match_their_recorded_checksums() {
        let versions = include_str!("../../assets/vendor/VERSIONS.md");
        let rows: Vec<Vec<&str>> = versions
            .lines()
            .filter(|line| line.starts_with("| ") && !line.starts_with("| file"))
            .map(|line| line.split('|').map(str::trim).collect())
            .collect();
        let vendored: Vec<&Asset> = ASSETS.iter().filter(|a| a.vendored.is_some()).collect();
        assert_eq!(
            rows.len(),
            vendored.len(),
            "one VERSIONS.md row per vendored file"
        );
        for asset in vendored {
            let file = asset.vendored.unwrap_or_default();
            let row = rows
                .iter()
                .find(|row| row.get(1) == Some(&file))
                .unwrap_or_else(|| panic!("{file} has no row in VERSIONS.md"));
            let recorded = row.get(5).copied().unwrap_or_default();
            assert_eq!(
                hex::encode(Sha256::digest(asset.bytes)),
                recorded,
                "{file} differs from the checksum VERSIONS.md records"
            );
        }
    }

    #[test]
    fn urls_carry_the_content_hash() {
        let css = url("app.css");
        assert!(
            css.starts_with("/assets/app.") && css.ends_with(".css"),
            "{css}"
        );
        assert_eq!(css.len(), "/assets/app.".len() + 16 + ".css".len());
        assert_eq!(url("nope.js"), "/assets/unknown");
    }
}
