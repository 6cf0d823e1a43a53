import { describe, expectTypeOf, it } from 'vitest';
import {
  createMessageTracker,
  type MessageStatusView,
  type StatusTransition,
  type TrackedStatus,
} from '../../src/tracker/index.js';

describe('tracker types', () => {
  it('narrows a status view by status and by final', async () => {
    const view = (await createMessageTracker().status('msg_1')) as MessageStatusView;
    if (view.status === 'delivered' || view.status === 'failed') {
      expectTypeOf(view.final).toEqualTypeOf<true>();
      expectTypeOf(view.latencyMs).toEqualTypeOf<number | undefined>();
    }
    if (!view.final) {
      expectTypeOf(view.status).toEqualTypeOf<'queued' | 'submitted'>();
      expectTypeOf(view.latencyMs).toEqualTypeOf<undefined>();
    }
    if (view.status === 'unknown') expectTypeOf(view.latencyMs).toEqualTypeOf<undefined>();
    expectTypeOf(view.history[0]?.source).toEqualTypeOf<
      'expect' | 'webhook' | 'reconcile' | 'timeout' | undefined
    >();
  });

  it('types transitions and options', () => {
    createMessageTracker().onTransition((transition) => {
      expectTypeOf(transition).toEqualTypeOf<StatusTransition>();
      expectTypeOf(transition.to).toEqualTypeOf<TrackedStatus>();
    });
    // @ts-expect-error precedence is one of three names
    createMessageTracker({ precedence: 'newest' });
    // @ts-expect-error a store must be a StatusStore
    createMessageTracker({ store: new Map() });
  });
});
