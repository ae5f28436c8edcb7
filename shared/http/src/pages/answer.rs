//! The one way a page becomes a response: its status, its HTML with the security headers (see
//! [`security_headers`]), the cookies it sets, and its outcome for the metrics. The pages'
//! handlers (authorize, account, device, logout) say what to show; this builds the headers.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{render_error, security_headers};
use crate::cookies::Jar;
use crate::observability::Outcome;
use crate::services::Services;

/// A page or a redirect, and the cookies it sets.
#[derive(Debug)]
#[must_use]
pub struct PageAnswer {
    status: StatusCode,
    body: Body,
    jar: Option<Jar>,
}

#[derive(Debug)]
enum Body {
    /// A page; `form_action`: where its forms' redirects may end besides this origin (the
    /// client's address, a company identity provider).
    Html {
        html: String,
        form_action: Vec<String>,
        retry_after: Option<i64>,
    },
    /// `Location`, never cached.
    Redirect(String),
}

impl PageAnswer {
    /// A page, 200.
    pub fn page(html: String) -> Self {
        Self {
            status: StatusCode::OK,
            body: Body::Html {
                html,
                form_action: Vec::new(),
                retry_after: None,
            },
            jar: None,
        }
    }

    /// A page whose form ends in a redirect to `redirect_uri` (the client's registered address):
    /// its origin joins the page's `form-action` policy.
    pub fn form_page(html: String, redirect_uri: &str) -> Self {
        let answer = Self::page(html);
        answer.also_to(vec![redirect_uri.to_owned()])
    }

    /// A page with a sign-in form, which may send the browser on to a company's identity
    /// provider: any https origin, and the `host:port`s allowed over http
    /// (`CLIENT_ID_METADATA_ALLOW_HOSTS`), join its `form-action` policy.
    pub fn sign_in_page(self, services: &Services) -> Self {
        let hosts = services.upstream.fetcher().allowed_hosts();
        let targets = std::iter::once("https:".to_owned())
            .chain(hosts.iter().map(|host| format!("http://{host}")))
            .collect();
        self.also_to(targets)
    }

    fn also_to(mut self, targets: Vec<String>) -> Self {
        if let Body::Html { form_action, .. } = &mut self.body {
            form_action.extend(targets);
        }
        self
    }

    /// The error page with `message`: 400, or 429 with `Retry-After` when `retry_after` (a
    /// rate limit's seconds) is given. Never a redirect: the address to return to is not
    /// trusted.
    pub fn refused(message: &str, retry_after: Option<i64>) -> Self {
        Self::refused_with(render_error(message), retry_after)
    }

    /// [`Self::refused`] with a page of its own.
    pub fn refused_with(html: String, retry_after: Option<i64>) -> Self {
        let status = match retry_after {
            Some(_) => StatusCode::TOO_MANY_REQUESTS,
            None => StatusCode::BAD_REQUEST,
        };
        Self {
            status,
            body: Body::Html {
                html,
                form_action: Vec::new(),
                retry_after,
            },
            jar: None,
        }
    }

    /// A redirect with `status` (302 to a client, 303 after a form) to `location`.
    pub fn redirect(status: StatusCode, location: String) -> Self {
        Self {
            status,
            body: Body::Redirect(location),
            jar: None,
        }
    }

    /// The cookies this answer sets, after any it sets already.
    pub fn cookies(mut self, jar: Jar) -> Self {
        self.jar = Some(match self.jar.take() {
            Some(before) => before.and(jar),
            None => jar,
        });
        self
    }
}

impl IntoResponse for PageAnswer {
    fn into_response(self) -> Response {
        let mut response = match self.body {
            Body::Html {
                html,
                form_action,
                retry_after,
            } => {
                let mut response = (self.status, html).into_response();
                let headers = response.headers_mut();
                for (name, value) in security_headers(&form_action) {
                    insert(headers, header::HeaderName::from_static(name), &value);
                }
                if let Some(seconds) = retry_after {
                    headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
                }
                response
            }
            Body::Redirect(location) => {
                let mut response = self.status.into_response();
                let headers = response.headers_mut();
                insert(headers, header::LOCATION, &location);
                insert(headers, header::CACHE_CONTROL, "no-store");
                response
            }
        };
        if let Some(jar) = self.jar {
            jar.apply(&mut response);
        }
        Outcome::Code(self.status.as_u16()).attach(response)
    }
}

fn insert(headers: &mut HeaderMap, name: header::HeaderName, value: &str) {
    // Every value here is built from validated URLs, base64url and fixed text.
    if let Ok(value) = HeaderValue::from_str(value) {
        headers.insert(name, value);
    }
}
