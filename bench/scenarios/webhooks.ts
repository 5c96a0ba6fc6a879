import { notAvailable, type Metric } from '../lib/report.ts';
import type { Plan } from '../run.ts';
export async function webhookScenarios(_plan: Plan): Promise<Metric[]> {
  return [notAvailable('deliveries', 'webhook deliveries', 'not available')];
}
