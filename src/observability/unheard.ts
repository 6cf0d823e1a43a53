import { WebhookConfigError } from '../base/errors.js';

const MAX_TOLD = 20;

/**
 * A receiver with no logger still tells the operator when its configuration refuses every delivery (a queue on
 * a Redis that can lose jobs): without an onError handler nobody else would. One console line per distinct
 * message, so a refusal that repeats with every delivery is told once.
 */
export function unheardRefusals(): (error: Error, cause: unknown, heard: boolean) => void {
  const told = new Set<string>();
  return (error, cause, heard) => {
    if (heard || !(cause instanceof WebhookConfigError) || told.has(error.message) || told.size >= MAX_TOLD)
      return;
    told.add(error.message);
    console.error(`messaging-webhooks: ${error.message}`);
  };
}
