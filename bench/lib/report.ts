// The result model: one Metric per figure, judged against its must/aim target, printed as a
// Markdown table and written to bench/results/<date>.json.
export type Verdict = 'pass (aim)' | 'pass (must)' | 'FAIL' | 'n/a' | 'contended';

export interface Target {
  /** 'min': the value must be at least the bound; 'max': at most. */
  kind: 'min' | 'max';
  must: number;
  aim: number;
  /** What the target is applied to: the ratio or the absolute value. */
  on: 'ratio' | 'value';
  text: string;
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
  /** Extra aim condition evaluated by the scenario (e.g. "≤ 4× bare's p99"). */
  aimExtra?: boolean;
  verdict?: Verdict;
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

export function judge(metric: Metric): Metric {
  if (metric.verdict === 'n/a') return metric;
  const t = metric.target;
  if (!t) return metric;
  const x = t.on === 'ratio' ? metric.ratio : metric.value;
  if (x === null) return { ...metric, verdict: metric.rounds === 0 && metric.dropped > 0 ? 'contended' : 'n/a' };
  const meets = (bound: number) => (t.kind === 'min' ? x >= bound : x <= bound);
  let verdict: Verdict =
    meets(t.aim) && metric.aimExtra !== false ? 'pass (aim)' : meets(t.must) ? 'pass (must)' : 'FAIL';
  // Figures measured only in contended rounds are shown but not judged.
  if (metric.rounds === 0 && metric.dropped > 0) verdict = 'contended';
  return { ...metric, verdict };
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

export function markdownTable(metrics: Metric[]): string {
  const rows = [
    '| metric | value | baseline | ratio (median, min–max) | rounds (dropped) | must | aim | result |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const m of metrics) {
    const ratio =
      m.ratio === null
        ? '—'
        : `${m.ratio.toFixed(2)}${m.ratioRange ? ` (${m.ratioRange[0].toFixed(2)}–${m.ratioRange[1].toFixed(2)})` : ''}`;
    const [must, aim] = m.target ? m.target.text.split(' / ') : ['', ''];
    const value = m.note && m.value === null ? m.note : fmt(m.value, m.unit);
    const baseline =
      m.baseline === null ? '—' : `${fmt(m.baseline, m.unit)}${m.baselineLabel ? ` (${m.baselineLabel})` : ''}`;
    rows.push(
      `| ${m.label} | ${value} | ${baseline} | ${ratio} | ${m.rounds}${m.dropped ? ` (${m.dropped})` : ''} | ${must ?? ''} | ${aim ?? ''} | ${m.verdict ?? ''} |`,
    );
  }
  return rows.join('\n');
}
