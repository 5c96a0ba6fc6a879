// The webhook page's chart of the last 24 hours: one stacked bar per hour (delivered, failed, dead
// letter), drawn on the server as SVG so it needs no script and no chart library. Only numbers and
// fixed words go into the markup; the totals are also said in words (the SVG's title and
// description, and the legend) for screen readers and text browsers.
import type { HourBucket, Outcome } from './delivery-log.ts';

const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 36;
const TOP = 12;
const BOTTOM = 28;
const PLOT_HEIGHT = HEIGHT - TOP - BOTTOM;
const SLOT = (WIDTH - LEFT) / 24;

export const OUTCOME_STYLE: Record<Outcome, { label: string; color: string }> = {
  success: { label: 'delivered', color: '#1e7b45' },
  failed: { label: 'failed', color: '#b35c00' },
  dead_letter: { label: 'dead letter', color: '#b3261e' },
};
const ORDER: Outcome[] = ['success', 'failed', 'dead_letter'];

/** A round number at least `n` (1, 2, 5 × 10^k), so the axis label reads well. */
function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

export function totals(buckets: readonly HourBucket[]): Record<Outcome, number> {
  const sum: Record<Outcome, number> = { success: 0, failed: 0, dead_letter: 0 };
  for (const bucket of buckets) for (const outcome of ORDER) sum[outcome] += bucket.counts[outcome];
  return sum;
}

export function summary(buckets: readonly HourBucket[]): string {
  const sum = totals(buckets);
  return `Last 24 hours: ${sum.success} delivered, ${sum.failed} failed, ${sum.dead_letter} dead letter${sum.dead_letter === 1 ? '' : 's'}.`;
}

const hourOf = (iso: string) => `${iso.slice(11, 13)}:00`;

export function deliveryChartSvg(buckets: readonly HourBucket[]): string {
  const max = niceCeiling(Math.max(0, ...buckets.map((b) => ORDER.reduce((n, o) => n + b.counts[o], 0))));
  const scale = PLOT_HEIGHT / max;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" class="chart">`,
    `<title id="chart-title">Deliveries per hour, last 24 hours (UTC)</title>`,
    `<desc id="chart-desc">${summary(buckets)}</desc>`,
    `<line x1="${LEFT}" y1="${TOP + PLOT_HEIGHT}" x2="${WIDTH}" y2="${TOP + PLOT_HEIGHT}" stroke="#666" stroke-width="1"/>`,
    `<line x1="${LEFT}" y1="${TOP}" x2="${WIDTH}" y2="${TOP}" stroke="#ddd" stroke-width="1"/>`,
    `<text x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end" font-size="12" fill="#333">${max}</text>`,
    `<text x="${LEFT - 6}" y="${TOP + PLOT_HEIGHT + 4}" text-anchor="end" font-size="12" fill="#333">0</text>`,
  ];
  buckets.forEach((bucket, index) => {
    const x = LEFT + index * SLOT + 3;
    let y = TOP + PLOT_HEIGHT;
    const words = ORDER.map((o) => `${bucket.counts[o]} ${OUTCOME_STYLE[o].label}`).join(', ');
    parts.push(`<g><title>${hourOf(bucket.hour)} UTC: ${words}</title>`);
    for (const outcome of ORDER) {
      const count = bucket.counts[outcome];
      if (count === 0) continue;
      const height = Math.max(1, count * scale);
      y -= height;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(SLOT - 6).toFixed(1)}" height="${height.toFixed(1)}" fill="${OUTCOME_STYLE[outcome].color}" data-outcome="${outcome}" data-count="${count}"/>`,
      );
    }
    parts.push('</g>');
    if (index % 6 === 0 || index === 23) {
      parts.push(
        `<text x="${(x + (SLOT - 6) / 2).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="middle" font-size="12" fill="#333">${index === 23 ? 'now' : hourOf(bucket.hour)}</text>`,
      );
    }
  });
  parts.push('</svg>');
  return parts.join('');
}
