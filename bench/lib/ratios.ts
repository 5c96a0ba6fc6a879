// Ratio figures over rounds. Each round divides the figure by its baseline measured in that round;
// the rounds' ratios are reported as their median and their spread (min–max), since one run's rounds
// spread by ±15–20% on a shared machine and a lone ratio says nothing about that. The table judges
// the median, except where the issue says the worst round counts (token issuance), where one bad
// round is the figure: a stall a user meets once in five rounds is still a stall.
import { median } from './stats.ts';

export type Better = 'higher' | 'lower';

export interface RatioFields {
  /** The median of the per-round ratios. */
  ratio: number | null;
  /** Their min and max. */
  ratioRange: [number, number] | null;
}

/** The median and the spread of per-round ratios (null when there are none). */
export function overRounds(ratios: readonly number[]): RatioFields {
  const finite = ratios.filter((r) => Number.isFinite(r));
  if (!finite.length) return { ratio: null, ratioRange: null };
  return { ratio: median(finite), ratioRange: [Math.min(...finite), Math.max(...finite)] };
}

/** The worst round of a spread: the lowest ratio where higher is better, the highest where lower is. */
export function worstRound(range: readonly [number, number], better: Better): number {
  return better === 'higher' ? range[0] : range[1];
}

/** What a target compares: the median ratio, or the worst round when the worst one counts. */
export function judgedRatio(fields: RatioFields, better: Better, counts: 'median' | 'worst' = 'median'): number | null {
  if (counts === 'worst') return fields.ratioRange ? worstRound(fields.ratioRange, better) : null;
  return fields.ratio;
}
