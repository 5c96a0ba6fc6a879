// Reading a scrape as Prometheus does: a small parser of the text exposition format (version 0.0.4)
// and the samples' values by name and exact label set.
import assert from 'node:assert/strict';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Metric name → type, from the `# TYPE` lines. */
  types: Map<string, string>;
  /** The value of the sample with this name and exactly these labels; undefined when there is none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Like value(), but a missing sample fails the test. */
  get(name: string, labels?: Record<string, string>): number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    assert.ok(match, `unparsable labels in: ${line}`);
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN' || text === 'Nan') return Number.NaN;
  const value = Number(text);
  assert.ok(!Number.isNaN(value), `not a number: ${text}`);
  return value;
}

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1], type[2]);
      else assert.match(line, /^# HELP \S+ /, `unexpected comment: ${line}`);
      continue;
    }
    const match = LINE.exec(line);
    assert.ok(match, `unparsable sample: ${line}`);
    samples.push({ name: match[1], labels: match[2] ? parseLabels(match[2], line) : {}, value: parseValue(match[3]) });
  }
  const same = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples.find((s) => s.name === name && same(s.labels, labels))?.value;
  return {
    samples,
    types,
    value,
    get(name, labels = {}) {
      const found = value(name, labels);
      assert.ok(found !== undefined, `no sample ${name}${JSON.stringify(labels)}`);
      return found;
    },
  };
}

export const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
