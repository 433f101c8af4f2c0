import { maskIn } from '../config/index.js';
import type { DeliveryOutcome } from '../connectors/types.js';

/**
 * The outcomes with every credential of the connector in their errors' messages as "***": a
 * receiver's answer, quoted in the error, may echo what it was sent (`invalid key apikey-…`), and
 * the error is kept, listed by `deliveries list` and logged. Longest first, so a secret that holds
 * another is masked whole. The errors are changed in place: outcomes of a batch may share one.
 */
export function maskOutcomes(outcomes: DeliveryOutcome[], secrets: ReadonlySet<string>): DeliveryOutcome[] {
  if (secrets.size === 0) return outcomes;
  for (const outcome of outcomes) {
    if (outcome.status === 'done') continue;
    const message = maskIn(outcome.error.message, secrets);
    if (message !== outcome.error.message) outcome.error.message = message;
  }
  return outcomes;
}
