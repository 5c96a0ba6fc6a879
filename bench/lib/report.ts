// The result model: one Metric per figure, judged against its must/aim target (the raised bar of
// issue 32 §2, bench/lib/targets.ts), printed as a Markdown table and written to
// bench/results/<date>.json.
import { judgedRatio } from './ratios.ts';
export type Verdict = 'PASS aim' | 'PASS must' | 'FAIL' | 'n/a' | 'contended';

export interface Target {
  /** Which way is better: a rate ratio is higher-is-better, a latency or a memory ratio lower-is-better. */
  better: 'higher' | 'lower';
  must: number;
  aim: number;
  /** What the target is applied to: the ratio or the absolute value. */
  on: 'ratio' | 'value';
  /** Printed after the bound: '' for a plain ratio, '×' for a ratio read as a factor, 'ms'. */
  unit: string;
  /** Which ratio over the rounds is judged: their median (default), or the worst round. */
  counts?: 'median' | 'worst';
}

export interface Metric {
  id: string;
  label: string;
  /** Absolute value (median over clean rounds) and its unit. */
  value: number | null;
  unit: string;
  baseline: number | null;
  baselineLabel?: string;
  /** Median of per-round ratios and their min–max. */
  ratio: number | null;
  ratioRange?: [number, number] | null;
  rounds: number;
  dropped: number;
  target?: Target;
  /** The figure compared with the target (the median ratio, the worst round's ratio, or the value). */
  judged?: number | null;
  verdict?: Verdict;
  /** For a contended figure: what it would read, to show how far it is, not to judge it. */
  reads?: Verdict;
  note?: string;
  details?: Record<string, unknown>;
}

export function notAvailable(id: string, label: string, why: string, target?: Target): Metric {
  return {
    id,
    label,
    value: null,
    unit: '',
    baseline: null,
    ratio: null,
    rounds: 0,
    dropped: 0,
    target,
    verdict: 'n/a',
    note: `n/a (${why})`,
  };
}

/** The figure a target is applied to. */
export function judgedFigure(metric: Metric, t: Target): number | null {
  if (t.on === 'value') return metric.value;
  return judgedRatio({ ratio: metric.ratio, ratioRange: metric.ratioRange ?? null }, t.better, t.counts);
}

export function judge(metric: Metric): Metric {
  if (metric.verdict === 'n/a' || metric.verdict === 'FAIL') return metric;
  const t = metric.target;
  if (!t) return metric;
  const x = judgedFigure(metric, t);
  // Figures measured only in contended rounds are shown but not judged.
  const contended = metric.rounds === 0 && metric.dropped > 0;
  if (x === null) return { ...metric, judged: null, verdict: contended ? 'contended' : 'n/a' };
  const meets = (bound: number) => (t.better === 'higher' ? x >= bound : x <= bound);
  const reads: Verdict = meets(t.aim) ? 'PASS aim' : meets(t.must) ? 'PASS must' : 'FAIL';
  return contended ? { ...metric, judged: x, verdict: 'contended', reads } : { ...metric, judged: x, verdict: reads };
}

/** "≥ 0.55", "≤ 2×", "≤ 1 ms". */
export function boundText(t: Target, bound: number): string {
  const number = t.unit === '' ? bound.toFixed(2) : String(bound);
  return `${t.better === 'higher' ? '≥' : '≤'} ${number}${t.unit === 'ms' ? ' ms' : t.unit}`;
}

function fmt(value: number | null | undefined, unit = ''): string {
  if (value === null || value === undefined) return '—';
  const abs = Math.abs(value);
  const text =
    abs >= 1000
      ? Math.round(value).toLocaleString('en-US')
      : abs >= 100
        ? value.toFixed(0)
        : abs >= 10
          ? value.toFixed(1)
          : value.toFixed(2);
  return unit ? `${text} ${unit}` : text;
}

/** must and aim as printed; results files written before targets.ts carry a `text` "must / aim". */
function mustAim(t: Target | undefined): [string, string] {
  if (!t) return ['', ''];
  const legacy = (t as { text?: string }).text;
  if (legacy && t.unit === undefined) {
    const [must, aim] = legacy.split(' / ');
    return [must ?? '', aim ?? ''];
  }
  return [boundText(t, t.must), boundText(t, t.aim)];
}

export function judgedText(m: Metric): string {
  const t = m.target;
  if (!t || m.judged === undefined || m.judged === null) return '';
  if (t.on === 'value') return fmt(m.judged, m.unit);
  return `${m.judged.toFixed(2)}${t.unit}${t.counts === 'worst' ? ' (worst round)' : ''}`;
}

export function markdownTable(metrics: Metric[]): string {
  const rows = [
    '| metric | value | baseline | ratio (median, min–max) | rounds (dropped) | must | aim | judged | verdict |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const m of metrics) {
    const ratio =
      m.ratio === null
        ? '—'
        : `${m.ratio.toFixed(2)}${m.ratioRange ? ` (${m.ratioRange[0].toFixed(2)}–${m.ratioRange[1].toFixed(2)})` : ''}`;
    const [must, aim] = mustAim(m.target);
    const value = m.note && m.value === null ? m.note : fmt(m.value, m.unit);
    const baseline =
      m.baseline === null ? '—' : `${fmt(m.baseline, m.unit)}${m.baselineLabel ? ` (${m.baselineLabel})` : ''}`;
    rows.push(
      `| ${m.label} | ${value} | ${baseline} | ${ratio} | ${m.rounds}${m.dropped ? ` (${m.dropped})` : ''} | ${must} | ${aim} | ${judgedText(m)} | ${m.verdict ?? ''}${m.reads ? ` (reads ${m.reads})` : ''} |`,
    );
  }
  return rows.join('\n');
}
