// A small browser stand-in for page tests over Fastify inject (or real HTTP): a cookie jar that
// honours Path and Max-Age, form posts, and the CSRF token read from the last page's <meta>.
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../support/app.ts';

interface Cookie {
  value: string;
  path: string;
}

export class PageClient {
  readonly jar = new Map<string, Cookie>();
  readonly t: TestApp;
  lastHtml = '';
  constructor(t: TestApp) {
    this.t = t;
  }

  cookieHeader(url: string): string {
    const path = url.split('?')[0];
    return [...this.jar]
      .filter(([, c]) => path.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  }

  #absorb(res: LightMyRequestResponse) {
    const raw = res.headers['set-cookie'];
    for (const line of Array.isArray(raw) ? raw : raw ? [raw] : []) {
      const [pair, ...attrs] = line.split(';').map((part) => part.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const path = attrs.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      const maxAge = attrs.find((a) => /^max-age=/i.test(a));
      const expires = attrs.find((a) => /^expires=/i.test(a));
      const dead =
        value === '' ||
        (maxAge && Number(maxAge.slice(8)) <= 0) ||
        (expires && Date.parse(expires.slice(8)) <= Date.now());
      if (dead) this.jar.delete(name);
      else this.jar.set(name, { value, path });
    }
    if (String(res.headers['content-type'] ?? '').startsWith('text/html')) this.lastHtml = res.body;
  }

  get csrf(): string {
    const match = /<meta name="csrf-token" content="([^"]*)">/.exec(this.lastHtml);
    if (!match) throw new Error('no CSRF token on the last page');
    return match[1];
  }

  async get(url: string, headers: Record<string, string> = {}) {
    const res = await this.t.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader(url), ...headers } });
    this.#absorb(res);
    return res;
  }

  /** POSTs a form; the CSRF token of the last page is added unless `csrf` is given (false: none). */
  async post(url: string, fields: Record<string, string | string[]> = {}, options: { csrf?: string | false } = {}) {
    const body = new URLSearchParams();
    for (const [key, value] of Object.entries(fields))
      for (const item of Array.isArray(value) ? value : [value]) body.append(key, item);
    if (options.csrf !== false) body.append('csrf_token', options.csrf ?? this.csrf);
    const res = await this.t.inject({
      method: 'POST',
      url,
      headers: { cookie: this.cookieHeader(url), 'content-type': 'application/x-www-form-urlencoded' },
      payload: body.toString(),
    });
    this.#absorb(res);
    return res;
  }

  /** Follows a 303 with a GET. */
  async follow(res: LightMyRequestResponse) {
    if (res.statusCode !== 303 && res.statusCode !== 302)
      throw new Error(`expected a redirect, got ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return this.get(String(res.headers.location));
  }

  /** Logs in with e-mail and password through the login page (no TOTP). */
  async login(email: string, password: string) {
    await this.get('/accounts/login/');
    const res = await this.post('/accounts/login/', { email, password, next: '/accounts/profile/' });
    if (res.statusCode !== 303) throw new Error(`login failed: ${res.statusCode} ${res.body.slice(0, 500)}`);
    return res;
  }
}

/** The text of an element with the given id (enough for these pages). */
export function textOfId(html: string, id: string): string | null {
  const match = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html);
  return match ? match[1].trim() : null;
}
