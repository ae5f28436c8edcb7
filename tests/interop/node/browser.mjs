// The user agent of the interoperability drivers: fetches the authorization server's pages
// without JavaScript, as a person's browser would, fills in the sign-in form and answers the
// consent form, and stops at the first redirect that leaves the server (the relying party's
// callback), so the driver hands that URL to the relying-party library untouched.

const MAX_STEPS = 8;

export class BrowserError extends Error {}

/** A cookie jar for one origin (the server under test), and page-by-page navigation. */
export class Browser {
	constructor() {
		this.cookies = new Map();
	}

	async request(url, { method = 'GET', form } = {}) {
		const headers = {};
		if (this.cookies.size) {
			headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
		}
		let body;
		if (form) {
			headers['content-type'] = 'application/x-www-form-urlencoded';
			body = new URLSearchParams(form).toString();
		}
		const response = await fetch(url, { method, headers, body, redirect: 'manual' });
		for (const line of response.headers.getSetCookie()) this.#store(line);
		return response;
	}

	#store(setCookie) {
		const [pair, ...attributes] = setCookie.split(';');
		const at = pair.indexOf('=');
		const name = pair.slice(0, at).trim();
		const expired = attributes.some((a) => /^\s*max-age\s*=\s*(0|-\d+)\s*$/i.test(a));
		if (expired) this.cookies.delete(name);
		else this.cookies.set(name, pair.slice(at + 1).trim());
	}

	/**
	 * Opens `url` and walks the server's pages: signs in with `login`/`password` when a sign-in
	 * form appears, answers a consent form with `decision` (`approve` or `deny`). Returns
	 * `{ location }` at the first redirect that leaves `serverOrigin` or starts with one of
	 * `stopAt` (the relying party's own addresses, which may share the server's origin), or
	 * `{ status, html }` for a page that offers no form (an error page); `pages` lists the forms
	 * seen, in order.
	 */
	async navigate(url, { serverOrigin, stopAt = [], login, password, decision = 'approve' }) {
		const pages = [];
		let next = { url: new URL(url), method: 'GET' };
		for (let step = 0; step < MAX_STEPS; step += 1) {
			const response = await this.request(next.url, next);
			const location = response.headers.get('location');
			if (response.status >= 300 && response.status < 400 && location) {
				const target = new URL(location, next.url);
				if (target.origin !== serverOrigin || stopAt.some((prefix) => target.href.startsWith(prefix))) return { location: target, status: response.status, pages };
				next = { url: target, method: 'GET' };
				continue;
			}
			const html = await response.text();
			const form = parseForm(html, next.url);
			if (!form || response.status !== 200) return { status: response.status, html, pages };
			if (form.has('password')) {
				const alert = html.match(/role="alert">([^<]*)</);
				if (pages.includes('sign-in') && alert) {
					throw new BrowserError(`sign-in refused: ${decodeEntities(alert[1])}`);
				}
				pages.push('sign-in');
				form.fields.login = login;
				form.fields.password = password;
			} else if (form.buttons.some((b) => b.name === 'decision')) {
				pages.push('consent');
				form.fields.decision = decision;
			} else {
				throw new BrowserError(`unrecognised form at ${next.url}: ${html.slice(0, 200)}`);
			}
			next = { url: form.action, method: form.method, form: form.fields };
		}
		throw new BrowserError(`no redirect out of the server after ${MAX_STEPS} pages`);
	}
}

/** The first form of a page: its action, method, named input values and buttons. */
export function parseForm(html, pageUrl) {
	const formTag = html.match(/<form\b([^>]*)>([\s\S]*?)<\/form>/i);
	if (!formTag) return null;
	const formAttributes = attributesOf(formTag[1]);
	const fields = {};
	const names = new Set();
	const buttons = [];
	for (const [, tag, rest] of formTag[2].matchAll(/<(input|button|textarea|select)\b([^>]*)>/gi)) {
		const a = attributesOf(rest);
		if (!a.name) continue;
		names.add(a.name);
		if (tag.toLowerCase() === 'button') buttons.push({ name: a.name, value: a.value ?? '' });
		else fields[a.name] = a.value ?? '';
	}
	return {
		action: new URL(formAttributes.action ?? '', pageUrl),
		method: (formAttributes.method ?? 'GET').toUpperCase(),
		fields,
		buttons,
		has: (name) => names.has(name),
	};
}

function attributesOf(text) {
	const attributes = {};
	for (const [, name, quoted, bare] of text.matchAll(/([\w-]+)(?:\s*=\s*(?:"([^"]*)"|([^\s"'>]+)))?/g)) {
		attributes[name.toLowerCase()] = decodeEntities(quoted ?? bare ?? '');
	}
	return attributes;
}

const NAMED_ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeEntities(text) {
	return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, entity) => {
		if (entity[0] === '#') {
			const hex = entity[1] === 'x' || entity[1] === 'X';
			return String.fromCodePoint(parseInt(entity.slice(hex ? 2 : 1), hex ? 16 : 10));
		}
		return NAMED_ENTITIES[entity.toLowerCase()] ?? whole;
	});
}
