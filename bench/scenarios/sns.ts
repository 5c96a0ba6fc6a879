import { notAvailable, type Metric } from '../lib/report.ts';
import type { Plan } from '../run.ts';
export async function snsScenarios(_plan: Plan): Promise<Metric[]> {
  return [notAvailable('sns', 'SNS notifications', 'not available')];
}
