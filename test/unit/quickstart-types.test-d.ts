import { expectTypeOf, it } from 'vitest';
import { createReceiver } from '../../src/index.js';

it('the README quick start compiles: secrets straight from process.env (unset fails at runtime, clearly)', () => {
  const receiver = createReceiver({ secrets: process.env.WEBHOOK_SECRET });
  receiver.on('message.delivered', async (event, ctx) => {
    expectTypeOf(event.data.message_id).toBeString();
    expectTypeOf(ctx.mode).toEqualTypeOf<'live' | 'test'>();
  });
});
