// The request-duration series of one route template. Every request of the route is recorded here from
// its onResponse hook (http.ts), so the child series of a (method, status) pair is found by a scan of a
// few entries, comparing an interned string and a number: no label object, string or key is built per
// request. A pair seen for the first time makes its label object and child once.
import type { Histogram } from '@prometheus-io/client';

export type RouteHistogram = Histogram<'method' | 'route' | 'status_code'>;
type Child = ReturnType<RouteHistogram['labels']>;

export class RouteDurations {
  readonly #histogram: RouteHistogram;
  readonly #route: string;
  readonly #methods: string[] = [];
  readonly #statuses: number[] = [];
  readonly #children: Child[] = [];

  constructor(histogram: RouteHistogram, route: string) {
    this.#histogram = histogram;
    this.#route = route;
  }

  observe(method: string, status: number, seconds: number): void {
    const statuses = this.#statuses;
    for (let i = 0; i < statuses.length; i++) {
      if (statuses[i] === status && this.#methods[i] === method) {
        this.#children[i].observe(seconds);
        return;
      }
    }
    const child = this.#histogram.labels({ method, route: this.#route, status_code: String(status) });
    this.#methods.push(method);
    this.#statuses.push(status);
    this.#children.push(child);
    child.observe(seconds);
  }
}
