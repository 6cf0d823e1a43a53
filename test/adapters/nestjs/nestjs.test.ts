import { WebhooksModule } from '../../../adapters/nestjs.js';
import type { SignatureProfile } from '../../../src/index.js';
import { runConformanceSuite } from '../conformance.js';
import { ACCOUNT, createConformanceReceiver } from '../conformance-receiver.js';
import { startNestApp } from './nest-app.js';

function conformanceApp(options: { rawBody?: boolean; bodyParser?: boolean }) {
  return async (profile: SignatureProfile) => {
    const { receiver, handled } = createConformanceReceiver(profile);
    const module = WebhooksModule.forRoot({ receiver, path: '/webhooks/:account' });
    const { app, origin } = await startNestApp(module, options);
    return { url: `${origin}/webhooks/${ACCOUNT}`, handled: async () => handled, close: () => app.close() };
  };
}

// Nest's JSON parser answers bodies it cannot parse or that pass its 100 kB limit before the route runs.
runConformanceSuite('nestjs 11 on express, rawBody: true', conformanceApp({ rawBody: true }), {
  skip: ['invalid_json', 'payload_too_large_declared', 'payload_too_large_chunked'],
});

runConformanceSuite('nestjs 11 on express, bodyParser: false', conformanceApp({ bodyParser: false }));
