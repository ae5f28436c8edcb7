"""The user agent of the interoperability drivers: fetches the authorization server's pages
without JavaScript, as a person's browser would, fills in the sign-in form and answers the
consent form, and stops at the first redirect to the relying party, so that the driver hands
that URL to the relying-party library untouched."""

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import requests

MAX_STEPS = 8


class BrowserError(Exception):
    pass


@dataclass
class Form:
    action: str = ""
    method: str = "GET"
    fields: dict = field(default_factory=dict)
    buttons: list = field(default_factory=list)
    alert: str = ""


class _FirstForm(HTMLParser):
    def __init__(self):
        super().__init__()
        self.form = None
        self.alert = ""
        self._in_form = False
        self._in_alert = False

    def handle_starttag(self, tag, attrs):
        a = {name: value or "" for name, value in attrs}
        if tag == "form" and self.form is None:
            self.form = Form(a.get("action", ""), a.get("method", "get").upper())
            self._in_form = True
        elif self._in_form and tag in ("input", "textarea", "select") and a.get("name"):
            self.form.fields[a["name"]] = a.get("value", "")
        elif self._in_form and tag == "button" and a.get("name"):
            self.form.buttons.append((a["name"], a.get("value", "")))
        self._in_alert = a.get("role") == "alert"

    def handle_data(self, data):
        if self._in_alert:
            self.alert += data

    def handle_endtag(self, tag):
        if tag == "form":
            self._in_form = False
        self._in_alert = False


def first_form(html):
    parser = _FirstForm()
    parser.feed(html)
    if parser.form is not None:
        parser.form.alert = parser.alert.strip()
    return parser.form


@dataclass
class Visit:
    location: str = ""
    status: int = 0
    html: str = ""
    pages: list = field(default_factory=list)


class Browser:
    """`server` is the base URL of the server under test; `stop_at`, the relying party's own
    addresses (which may share the server's origin)."""

    def __init__(self, server, stop_at):
        self.http = requests.Session()
        origin = urlsplit(server)
        self.origin = (origin.scheme, origin.netloc)
        self.stop_at = stop_at

    def navigate(self, url, login, password, decision="approve"):
        pages = []
        method, data = "GET", None
        for _ in range(MAX_STEPS):
            response = self.http.request(method, url, data=data, allow_redirects=False, timeout=10)
            location = response.headers.get("Location")
            if 300 <= response.status_code < 400 and location:
                url = urljoin(url, location)
                target = urlsplit(url)
                if (target.scheme, target.netloc) != self.origin or any(url.startswith(p) for p in self.stop_at):
                    return Visit(location=url, status=response.status_code, pages=pages)
                method, data = "GET", None
                continue
            form = first_form(response.text)
            if form is None or response.status_code != 200:
                return Visit(status=response.status_code, html=response.text, pages=pages)
            if "password" in form.fields:
                if "sign-in" in pages and form.alert:
                    raise BrowserError(f"sign-in refused: {form.alert}")
                pages.append("sign-in")
                form.fields.update(login=login, password=password)
            elif any(name == "decision" for name, _ in form.buttons):
                pages.append("consent")
                form.fields["decision"] = decision
            else:
                raise BrowserError(f"unrecognised form at {url}")
            url, method, data = urljoin(url, form.action), form.method, form.fields
        raise BrowserError(f"no redirect out of the server after {MAX_STEPS} pages")
