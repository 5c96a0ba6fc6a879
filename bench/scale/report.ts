// The scale scenario's results: each figure's value at every size, its ratio to the smallest size's
// figure as a cost (above 1 is dearer: a rate's ratio is inverted), a Markdown table per dialect
// (size → ratio) and an SVG plot of the ratios drawn here (hand-written SVG: no plotting library).
import { judge, type Metric, type Target } from '../lib/report.ts';

export interface Figure {
  id: string;
  label: string;
  unit: string;
  /** 'rate': more is better (req/s, rows/s); 'cost': less is better (ms, bytes). */
  kind: 'rate' | 'cost';
  /** size → value (null: not measured, e.g. no audit log in this build). */
  values: Record<number, number | null>;
  note?: string;
}

export const SCALE_TARGET: Target = { better: 'lower', must: 1.3, aim: 1.1, on: 'ratio', unit: '×' };

export function sizeLabel(size: number): string {
  return size >= 1e6 ? `${size / 1e6}M` : size >= 1e3 ? `${size / 1e3}k` : String(size);
}

/** The cost ratio of `size` to the smallest size (null when either is missing). */
export function costRatio(figure: Figure, sizes: readonly number[], size: number): number | null {
  const base = figure.values[sizes[0]];
  const value = figure.values[size];
  if (base === null || base === undefined || value === null || value === undefined) return null;
  if (!(Number.isFinite(base) && Number.isFinite(value) && base > 0 && value > 0)) return null;
  return figure.kind === 'rate' ? base / value : value / base;
}

/** One Metric per figure: the largest size against the smallest, judged against 1.3× / 1.1×. */
export function scaleMetrics(figures: readonly Figure[], sizes: readonly number[], dialect: string): Metric[] {
  const first = sizes[0];
  const last = sizes[sizes.length - 1];
  return figures.map((figure) => {
    const ratio = costRatio(figure, sizes, last);
    const metric: Metric = {
      id: `scale_${dialect}_${figure.id}`,
      label: `${figure.label} (${dialect}), ${sizeLabel(last)} ÷ ${sizeLabel(first)} as a cost`,
      value: figure.values[last] ?? null,
      unit: figure.unit,
      baseline: figure.values[first] ?? null,
      baselineLabel: sizeLabel(first),
      ratio,
      rounds: ratio === null ? 0 : 1,
      dropped: 0,
      target: SCALE_TARGET,
      note: figure.note,
      details: { values: figure.values },
    };
    return ratio === null ? { ...metric, verdict: 'n/a', note: figure.note ?? 'n/a (not measured)' } : judge(metric);
  });
}

const fmt = (value: number | null | undefined) =>
  value === null || value === undefined
    ? '—'
    : Math.abs(value) >= 100
      ? Math.round(value).toLocaleString('en-US')
      : value.toFixed(2);

/** | figure | unit | 1k value | 10k ratio | … | */
export function ratioTable(figures: readonly Figure[], sizes: readonly number[], dialect: string): string {
  const head = `| ${dialect} | unit | ${sizeLabel(sizes[0])} | ${sizes
    .slice(1)
    .map((s) => `${sizeLabel(s)} ÷ ${sizeLabel(sizes[0])}`)
    .join(' | ')} |`;
  const rows = [head, `|${'---|'.repeat(sizes.length + 2)}`];
  for (const figure of figures) {
    const ratios = sizes.slice(1).map((size) => {
      const ratio = costRatio(figure, sizes, size);
      return ratio === null ? '—' : `${ratio.toFixed(2)}×`;
    });
    rows.push(`| ${figure.label} | ${figure.unit} | ${fmt(figure.values[sizes[0]])} | ${ratios.join(' | ')} |`);
  }
  return rows.join('\n');
}

const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];
const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The ratio curves: size (log scale) across, cost ratio to the smallest size up (log scale, 0.5× to
 * at least 2×), the 1.1× aim and 1.3× must as dotted lines, one coloured line per figure (colour and
 * dash pattern cycle together, so 20 figures stay apart), the legend beside the plot.
 */
export function ratioSvg(figures: readonly Figure[], sizes: readonly number[], title: string): string {
  const curves = figures
    .map((figure) => ({
      figure,
      points: sizes
        .map((size) => [size, costRatio(figure, sizes, size)] as const)
        .filter((p): p is readonly [number, number] => p[1] !== null),
    }))
    .filter((curve) => curve.points.length > 1);
  const width = 1060;
  const plot = { left: 60, top: 40, width: 520, height: 380 };
  const height = Math.max(plot.top + plot.height + 50, 60 + curves.length * 18);
  const top = Math.max(2, ...curves.flatMap((c) => c.points.map((p) => p[1])));
  const [yMin, yMax] = [Math.log(0.5), Math.log(top * 1.05)];
  const [xMin, xMax] = [Math.log(sizes[0]), Math.log(Math.max(sizes[sizes.length - 1], sizes[0] * 10))];
  const x = (size: number) => plot.left + ((Math.log(size) - xMin) / (xMax - xMin)) * plot.width;
  const y = (ratio: number) => plot.top + plot.height - ((Math.log(ratio) - yMin) / (yMax - yMin)) * plot.height;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${plot.left}" y="22" font-size="15">${escape(title)}</text>`,
    `<rect x="${plot.left}" y="${plot.top}" width="${plot.width}" height="${plot.height}" fill="none" stroke="#999"/>`,
  ];
  for (const size of sizes) {
    out.push(`<line x1="${x(size)}" y1="${plot.top}" x2="${x(size)}" y2="${plot.top + plot.height}" stroke="#eee"/>`);
    out.push(`<text x="${x(size)}" y="${plot.top + plot.height + 16}" text-anchor="middle">${sizeLabel(size)}</text>`);
  }
  for (const tick of [0.5, 1, 1.1, 1.3, 2, 5, 10, 20, 50, 100].filter((t) => Math.log(t) <= yMax)) {
    const bound = tick === 1.1 ? 'aim' : tick === 1.3 ? 'must' : null;
    out.push(
      `<line x1="${plot.left}" y1="${y(tick)}" x2="${plot.left + plot.width}" y2="${y(tick)}" stroke="${bound ? '#333' : '#ddd'}"${bound ? ' stroke-dasharray="2 3"' : ''}/>`,
    );
    out.push(`<text x="${plot.left - 6}" y="${y(tick) + 4}" text-anchor="end">${tick}×</text>`);
    if (bound)
      out.push(
        `<text x="${plot.left + plot.width - 4}" y="${y(tick) - 3}" text-anchor="end" fill="#333">${bound}</text>`,
      );
  }
  out.push(
    `<text x="${plot.left + plot.width / 2}" y="${plot.top + plot.height + 36}" text-anchor="middle">rows of each kind</text>`,
  );
  out.push(
    `<text transform="translate(16 ${plot.top + plot.height / 2}) rotate(-90)" text-anchor="middle">cost ÷ cost at ${sizeLabel(sizes[0])}</text>`,
  );
  curves.forEach(({ figure, points }, i) => {
    const colour = PALETTE[i % PALETTE.length];
    const dash = ['', ' stroke-dasharray="5 3"', ' stroke-dasharray="1 3"'][Math.floor(i / PALETTE.length) % 3];
    const path = points
      .map(([size, ratio], j) => `${j ? 'L' : 'M'}${x(size).toFixed(1)} ${y(ratio).toFixed(1)}`)
      .join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${colour}" stroke-width="2"${dash}/>`);
    for (const [size, ratio] of points)
      out.push(`<circle cx="${x(size).toFixed(1)}" cy="${y(ratio).toFixed(1)}" r="2.5" fill="${colour}"/>`);
    const ly = 52 + i * 18;
    out.push(`<line x1="600" y1="${ly - 4}" x2="630" y2="${ly - 4}" stroke="${colour}" stroke-width="2"${dash}/>`);
    out.push(`<text x="636" y="${ly}">${escape(`${figure.label} (${figure.unit})`)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
