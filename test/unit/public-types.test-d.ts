import { describe, expectTypeOf, it } from 'vitest';
import type { AdapterReceiver, ReceiverSource } from '../../src/adapter.js';
import type { DeliveryKind } from '../../src/emulator/index.js';
import type {
  ErrorCode,
  MemoryDedupeStore,
  MemoryDedupeStoreOptions,
  Mode,
  Verifier,
  VerifyResult,
  WebhookHandlerError,
} from '../../src/index.js';
import { createVerifier } from '../../src/index.js';
import type { DataOf, SignedDelivery, SignOptions } from '../../src/testing.js';
import { createTenantSigner, type SignedRequest, signRequest, type TenantSigner } from '../../src/testing.js';

/* A user can name what the package gives them: the types of public signatures come from an entry. */
describe('the types public signatures name are exported', () => {
  it("the root entry's verifier, errors and store options, from messaging-webhooks/adapter", () => {
    const verifier = createVerifier({ secrets: 'whsec_x' });
    expectTypeOf(verifier).toEqualTypeOf<Verifier>();
    expectTypeOf(verifier.verify).returns.toMatchTypeOf<VerifyResult | Promise<VerifyResult>>();
    expectTypeOf<WebhookHandlerError['code']>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<ConstructorParameters<typeof MemoryDedupeStore>[0]>().toEqualTypeOf<
      MemoryDedupeStoreOptions | undefined
    >();
    expectTypeOf<Mode>().toEqualTypeOf<'live' | 'test'>();
    expectTypeOf<AdapterReceiver>().toMatchTypeOf<ReceiverSource>();
  });

  it("the testing and emulator entries' own", () => {
    expectTypeOf(signRequest).parameters.toEqualTypeOf<[SignOptions]>();
    expectTypeOf(signRequest).returns.toEqualTypeOf<SignedDelivery>();
    expectTypeOf<DataOf<'message.delivered'>>().toHaveProperty('message_id');
    expectTypeOf<DeliveryKind>().toBeString();
    expectTypeOf(createTenantSigner).returns.toEqualTypeOf<TenantSigner>();
    expectTypeOf<TenantSigner>().parameter(0).toEqualTypeOf<string>();
    expectTypeOf<TenantSigner>().returns.toEqualTypeOf<SignedRequest>();
    // @ts-expect-error: a tenant signer's secret comes from its table, not from each call.
    createTenantSigner({ secrets: {} })('acme', {}, { secret: 'whsec_x' });
  });
});
