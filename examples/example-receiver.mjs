// What the Express and Fastify examples share: the receiver with its typed handlers, and how to send it a
// signed test event. Each example file then shows only how its framework mounts the receiver.
import { createReceiver } from 'messaging-webhooks';

/** The secret the examples fall back to when WEBHOOK_SECRET is not set: never use it in production. */
export const DEV_SECRET = 'whsec_dev_only_not_for_production';

export function exampleSecret() {
  const secret = process.env.WEBHOOK_SECRET || DEV_SECRET;
  if (secret === DEV_SECRET) {
    console.warn(
      `WARNING: WEBHOOK_SECRET is not set; using the development secret ${DEV_SECRET}. Never use it in production.`,
    );
  }
  return secret;
}

/** `options`: more receiver options, as the durable queue of the workers example. */
export function createExampleReceiver(secret, options = {}) {
  const receiver = createReceiver({ secrets: secret, ...options });
  receiver.on('message.delivered', (event, ctx) => {
    console.log(
      `[${ctx.requestId}] ${event.type} ${event.id ?? '(no id)'}: ${event.data.message_id} delivered to ${event.data.to} by ${event.data.operator}`,
    );
  });
  receiver.on('message.failed', (event, ctx) => {
    console.log(
      `[${ctx.requestId}] ${event.type} ${event.id ?? '(no id)'}: ${event.data.message_id ?? 'unknown message'} failed`,
    );
  });
  // A refused delivery (a wrong secret: 401 signature_mismatch and what to check) shows here, not only to the sender.
  receiver.onRejected((rejection) => {
    console.warn(`[${rejection.requestId}] ${rejection.status} ${rejection.reason}: ${rejection.message}`);
  });
  receiver.onError((error, ctx) => {
    console.error(`[${ctx.requestId}] ${error.code}: ${error.message}`);
  });
  return receiver;
}

/** Prints a one-line command that sends a signed test event with the package's CLI, using the secret from the environment. */
export function printHowToSend(url, secret) {
  const env = secret === DEV_SECRET ? `WEBHOOK_SECRET=${DEV_SECRET} ` : '';
  console.log(`Receiving webhooks on ${url}`);
  console.log(
    `Send it a signed test event (from this repository, or a project that has messaging-webhooks installed${env ? '' : ', with WEBHOOK_SECRET exported in your shell'}):`,
  );
  console.log(`\n  ${env}npx messaging-webhooks send ${url}\n`);
}
