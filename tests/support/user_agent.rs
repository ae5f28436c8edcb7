//! A person's browser without JavaScript, for relying-party libraries written in Rust: opens an
//! authorization URL, signs in on the sign-in form, answers the consent form, and stops at the
//! first redirect to the relying party, whose URL it hands back untouched. The Node and Python
//! drivers have their own (`tests/interop/*/browser.*`).

use reqwest::{header, StatusCode};
use url::Url;

const MAX_STEPS: usize = 8;

/// Where the walk ended.
#[derive(Debug)]
pub enum Arrival {
    /// A redirect to the relying party, and the forms passed on the way (`sign-in`, `consent`).
    Redirect {
        location: Url,
        pages: Vec<&'static str>,
    },
    /// A page without a form (an error page), with its status.
    Page { status: StatusCode, html: String },
}

pub struct UserAgent {
    http: reqwest::Client,
    cookie: Option<String>,
    stop_at: String,
}

impl UserAgent {
    /// `stop_at`: the relying party's redirect URI (it may share the server's origin).
    pub fn new(stop_at: &str) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self {
            http,
            cookie: None,
            stop_at: stop_at.to_owned(),
        }
    }

    /// Opens `url` and signs in as `login`, answering consent with `decision`.
    pub async fn navigate(
        &mut self,
        url: Url,
        login: &str,
        password: &str,
        decision: &str,
    ) -> Arrival {
        let mut pages = Vec::new();
        let mut next = (url, None::<Vec<(String, String)>>);
        for _ in 0..MAX_STEPS {
            let (url, form) = next;
            let response = self.send(&url, form).await;
            if response.status().is_redirection() {
                let location = response.headers()[header::LOCATION].to_str().unwrap();
                let target = url.join(location).unwrap();
                if target.as_str().starts_with(&self.stop_at) || target.origin() != url.origin() {
                    return Arrival::Redirect {
                        location: target,
                        pages,
                    };
                }
                next = (target, None);
                continue;
            }
            let status = response.status();
            let html = response.text().await.unwrap();
            if status != StatusCode::OK || !html.contains("<form") {
                return Arrival::Page { status, html };
            }
            let csrf = hidden_value(&html, "csrf_token");
            let action = url.join(&attribute(&html, "<form", "action")).unwrap();
            let fields = if html.contains(r#"name="password""#) {
                pages.push("sign-in");
                vec![
                    ("csrf_token".into(), csrf),
                    ("login".into(), login.into()),
                    ("password".into(), password.into()),
                ]
            } else {
                pages.push("consent");
                vec![
                    ("csrf_token".into(), csrf),
                    ("decision".into(), decision.into()),
                ]
            };
            next = (action, Some(fields));
        }
        panic!("no redirect out of the server after {MAX_STEPS} pages");
    }

    async fn send(&mut self, url: &Url, form: Option<Vec<(String, String)>>) -> reqwest::Response {
        let mut request = match &form {
            None => self.http.get(url.clone()),
            Some(fields) => self
                .http
                .post(url.clone())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(serde_urlencoded::to_string(fields).unwrap()),
        };
        if let Some(cookie) = &self.cookie {
            request = request.header(header::COOKIE, cookie);
        }
        let response = request.send().await.expect("the server answers");
        if let Some(set) = response.headers().get(header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            self.cookie = Some(pair.to_owned());
        }
        response
    }
}

fn hidden_value(html: &str, name: &str) -> String {
    let marker = format!(r#"name="{name}" value=""#);
    let start = html.find(&marker).expect("the form has the field") + marker.len();
    html[start..]
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&")
}

fn attribute(html: &str, tag: &str, name: &str) -> String {
    let tag_start = html.find(tag).expect("the page has the tag");
    let marker = format!(r#"{name}=""#);
    let start = html[tag_start..]
        .find(&marker)
        .expect("the tag has the attribute")
        + tag_start;
    html[start + marker.len()..]
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}
