// Runs once when the Next.js server starts: prints how to send this example a signed test event.
export async function register() {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { DEV_SECRET } = await import('./lib/webhooks.js');
  const url = `http://localhost:${process.env.PORT ?? 3000}/api/webhooks`;
  const usesDevSecret = !process.env.WEBHOOK_SECRET;
  if (usesDevSecret && process.env.NODE_ENV === 'production') {
    console.warn('WARNING: WEBHOOK_SECRET is not set: webhooks are answered 500 receiver_misconfigured.');
  } else if (usesDevSecret) {
    console.warn(
      `WARNING: WEBHOOK_SECRET is not set; using the development secret ${DEV_SECRET}. Never use it in production.`,
    );
  }
  const env = usesDevSecret ? `WEBHOOK_SECRET=${DEV_SECRET} ` : '';
  console.log(`Receiving webhooks on ${url} (App Router) and ${url}-pages (Pages Router).`);
  console.log(
    `Send it a signed test event from the repository root${usesDevSecret ? '' : ', with WEBHOOK_SECRET exported in your shell'}, then list what was processed:`,
  );
  console.log(
    `\n  ${env}node --input-type=module -e "import { createEvent, createSignedRequest } from 'messaging-webhooks/testing'; ` +
      `const { body, headers } = createSignedRequest(createEvent('message.delivered'), { secret: process.env.WEBHOOK_SECRET }); ` +
      `const res = await fetch('${url}', { method: 'POST', headers, body }); console.log(res.status, await res.text());"` +
      `\n  curl ${url}/events\n`,
  );
}
