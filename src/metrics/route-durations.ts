// http_request_duration_seconds, the one series recorded on every request. The client library's
// Histogram builds a key string from the label values at every observe() and looks it up in a Map
// (about 1 µs a request on a busy machine, with garbage); here each route's hook (http.ts) holds a
// RouteDurations that finds its series by a scan of a few entries, comparing an interned method string
// and a status number, and adds to typed-array counters: no allocation, a few nanoseconds. The
// registry reads the counts at scrape time through get(), in the form every library metric exports
// (the samples are those its Histogram would write); everything else (registry, exposition, default
// metrics) is the library's.
import type { Histogram, MetricObjectWithValues, MetricValueWithName, Registry } from '@prometheus-io/client';

type Labels = { method: string; route: string; status_code: string };

/** One (method, route, status) series: per-bucket counts (the last one above every bound), sum, count. */
class Series {
  readonly labels: Labels;
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(labels: Labels, buckets: number) {
    this.labels = labels;
    this.counts = new Float64Array(buckets + 1);
  }
}

export class RequestDurations {
  // What the registry reads of a metric (the library's MetricObject).
  readonly name = 'http_request_duration_seconds';
  readonly help =
    'Time from a request arriving to its answer being written, by method, route template and status code.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #series: Series[] = [];

  constructor(bounds: readonly number[], registry: Registry) {
    this.#bounds = bounds;
    // Registered like the library's own metrics: the registry only calls get() and reads the fields above.
    registry.registerMetric(this as unknown as Histogram<keyof Labels>);
  }

  /** The recorder of one route template (made once per route, when the route is registered). */
  route(template: string): RouteDurations {
    return new RouteDurations(this, template);
  }

  /** A new series (the first request of its method and status on its route). */
  add(labels: Labels): Series {
    const series = new Series(labels, this.#bounds.length);
    this.#series.push(series);
    return series;
  }

  /** Adds one duration to a series: its bucket is the first bound it does not exceed. */
  record(series: Series, seconds: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i++;
    series.counts[i]++;
    series.sum += seconds;
    series.count++;
  }

  /** The registry's resetMetrics(). */
  reset(): void {
    for (const series of this.#series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  /** The samples at scrape time: cumulative buckets (`le`), `+Inf`, sum and count of every series. */
  async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const bucket = `${this.name}_bucket`;
    const values: MetricValueWithName<string>[] = [];
    for (const series of this.#series) {
      let cumulative = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        cumulative += series.counts[i];
        values.push({ metricName: bucket, labels: { le: this.#bounds[i], ...series.labels }, value: cumulative });
      }
      values.push({ metricName: bucket, labels: { le: '+Inf', ...series.labels }, value: series.count });
      values.push({ metricName: `${this.name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: series.labels, value: series.count });
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      collect: () => {},
      values,
    };
  }
}

/** The series of one route, by method and status; a pair seen for the first time gets its series once. */
export class RouteDurations {
  readonly #durations: RequestDurations;
  readonly #route: string;
  readonly #methods: string[] = [];
  readonly #statuses: number[] = [];
  readonly #series: Series[] = [];

  constructor(durations: RequestDurations, route: string) {
    this.#durations = durations;
    this.#route = route;
  }

  observe(method: string, status: number, seconds: number): void {
    const statuses = this.#statuses;
    for (let i = 0; i < statuses.length; i++) {
      if (statuses[i] === status && this.#methods[i] === method)
        return this.#durations.record(this.#series[i], seconds);
    }
    const series = this.#durations.add({ method, route: this.#route, status_code: String(status) });
    this.#methods.push(method);
    this.#statuses.push(status);
    this.#series.push(series);
    this.#durations.record(series, seconds);
  }
}
