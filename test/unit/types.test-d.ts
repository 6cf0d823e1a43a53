import type { PgBoss } from 'pg-boss';
import pino from 'pino';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import type { PgBossInstance, PgBossQueueOptions } from '../../src/durable/pg-boss/index.js';
import {
  createReceiver,
  type DefaultEvents,
  defaultEvents,
  type HandlerContext,
  type KnownEvent,
  type UnknownEvent,
  verifySignature,
} from '../../src/index.js';
import type { Logger } from '../../src/observability/logger.js';
import type { Mode } from '../../src/signature/secrets.js';

describe('handlers are typed from the event name', () => {
  it('message.delivered narrows event and data', () => {
    const receiver = createReceiver({ secrets: 'whsec_x' });
    receiver.on('message.delivered', (event, ctx) => {
      expectTypeOf(event.type).toEqualTypeOf<'message.delivered'>();
      expectTypeOf(event.data.message_id).toBeString();
      expectTypeOf(event.data.to).toBeString();
      expectTypeOf(event.data.operator).toBeString();
      expectTypeOf(event.id).toEqualTypeOf<string | undefined>();
      expectTypeOf(ctx).toEqualTypeOf<HandlerContext<undefined>>();
      expectTypeOf(ctx.mode).toEqualTypeOf<Mode>();
      // @ts-expect-error a misspelled data field is a compile error
      void event.data.mesage_id;
    });
    receiver.on('message.failed', (event) => {
      expectTypeOf(event.data.message_id).toEqualTypeOf<string | undefined>();
    });
  });

  it('a misspelled event name is a compile error', () => {
    const receiver = createReceiver({ secrets: 'whsec_x' });
    // @ts-expect-error not in the catalogue
    receiver.on('message.delivred', () => undefined);
    // @ts-expect-error off is keyed the same way
    receiver.off('messages.failed', () => undefined);
  });

  it("a user's catalogue extension is typed from its zod schema", () => {
    const receiver = createReceiver({
      secrets: 'whsec_x',
      events: {
        ...defaultEvents,
        'campaign.completed': z.object({ campaign_id: z.string(), sent: z.number() }),
      },
    });
    receiver.on('campaign.completed', (event) => {
      expectTypeOf(event.data.campaign_id).toBeString();
      expectTypeOf(event.data.sent).toBeNumber();
      // @ts-expect-error not a field of the user's schema
      void event.data.campaign;
    });
    receiver.on('message.delivered', (event) => {
      expectTypeOf(event.data.operator).toBeString();
    });
    // @ts-expect-error still a closed catalogue
    receiver.on('campaign.started', () => undefined);
  });

  it('classic zod and zod/mini schemas mix in one catalogue, each typed', () => {
    const receiver = createReceiver({
      secrets: 'whsec_x',
      events: {
        ...defaultEvents,
        'campaign.completed': z.object({ sent: z.number().int() }),
        'campaign.paused': zm.object({ reason: zm.optional(zm.string()) }),
      },
    });
    receiver.on('campaign.completed', (event) => expectTypeOf(event.data.sent).toBeNumber());
    receiver.on('campaign.paused', (event) =>
      expectTypeOf(event.data.reason).toEqualTypeOf<string | undefined>(),
    );
    // The package's schemas nest inside a user's classic schema, and its inferred type follows.
    const extended = z.object({ delivery: defaultEvents['message.delivered'], note: z.string() });
    expectTypeOf<z.infer<typeof extended>['delivery']['message_id']>().toBeString();
  });

  it('onAny gets KnownEvent | UnknownEvent, not any', () => {
    const receiver = createReceiver({ secrets: 'whsec_x' });
    receiver.onAny((event) => {
      expectTypeOf(event).toEqualTypeOf<KnownEvent<DefaultEvents> | UnknownEvent>();
      expectTypeOf(event).not.toBeAny();
      expectTypeOf(event.type).toBeString();
      expectTypeOf(event.data).toBeUnknown();
    });
  });

  it('handlers may be sync or async and receive() resolves an Outcome', () => {
    const receiver = createReceiver({ secrets: 'whsec_x' });
    receiver.on('message.delivered', async () => {}).on('message.failed', () => 1);
    expectTypeOf(receiver.receive).returns.resolves.toHaveProperty('status').toBeNumber();
  });
});

describe('verifySignature result', () => {
  it('narrows on ok', () => {
    const result = verifySignature({ payload: '{}', header: 't=1,v1=00', secrets: 'whsec_x' });
    if (result.ok) {
      expectTypeOf(result.mode).toEqualTypeOf<Mode>();
      expectTypeOf(result.timestamp).toBeNumber();
      // @ts-expect-error no reason on success
      void result.reason;
    } else {
      expectTypeOf(result.reason).toEqualTypeOf<
        | 'missing_signature'
        | 'malformed_signature'
        | 'stale_timestamp'
        | 'future_timestamp'
        | 'signature_mismatch'
      >();
      // @ts-expect-error no mode on failure
      void result.mode;
    }
  });

  it('the payload must be bytes or a string', () => {
    // @ts-expect-error a parsed object is not a payload
    verifySignature({ payload: { id: 'evt_1' }, header: 't=1,v1=00', secrets: 'whsec_x' });
  });
});

describe('messaging-webhooks/pg-boss types', () => {
  it('a PgBoss instance is a PgBossInstance: the structural type the package declares instead of pg-boss’s', () => {
    expectTypeOf<PgBoss>().toExtend<PgBossInstance>();
    expectTypeOf<PgBossQueueOptions['boss']>().toEqualTypeOf<PgBossInstance | undefined>();
  });
});

describe('the logger option', () => {
  it('takes pino, a console, or any text logger; a (fields, message) logger needs child to be told apart', () => {
    expectTypeOf(pino()).toExtend<Logger>();
    expectTypeOf(console).toExtend<Logger>();
    expectTypeOf({ info: (_line: string) => {}, warn: () => {}, error: () => {} }).toExtend<Logger>();
    const fieldsOnly = {
      info: (_fields: object, _message: string) => {},
      warn: (_fields: object, _message: string) => {},
      error: (_fields: object, _message: string) => {},
    };
    // @ts-expect-error without child it would be given text lines, not the fields it asks for
    createReceiver({ secrets: 'whsec_x', logger: fieldsOnly });
    createReceiver({ secrets: 'whsec_x', logger: { ...fieldsOnly, child: () => fieldsOnly } });
  });
});
