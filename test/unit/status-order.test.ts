import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isNewerStatus,
  type MessageStatus,
  type StatusRecord,
  shouldApply,
  statusOfEvent,
} from '../../src/events/status-order.js';

const at = (minute: number) => `2026-11-21T10:${String(minute).padStart(2, '0')}:00+00:00`;

describe('status order', () => {
  it('isNewerStatus follows queued → submitted → delivered | failed', () => {
    expect(isNewerStatus('queued', 'submitted')).toBe(true);
    expect(isNewerStatus('submitted', 'delivered')).toBe(true);
    expect(isNewerStatus('submitted', 'failed')).toBe(true);
    expect(isNewerStatus('delivered', 'submitted')).toBe(false);
    expect(isNewerStatus('delivered', 'failed')).toBe(false);
    expect(isNewerStatus('queued', 'queued')).toBe(false);
  });

  it('shouldApply: rank wins over created_at; equal rank needs a strictly later created_at', () => {
    expect(shouldApply(undefined, { status: 'submitted' })).toBe(true);
    // A late-arriving earlier stage never goes back, even with a later clock.
    expect(
      shouldApply({ status: 'delivered', created_at: at(1) }, { status: 'submitted', created_at: at(9) }),
    ).toBe(false);
    expect(
      shouldApply({ status: 'submitted', created_at: at(9) }, { status: 'delivered', created_at: at(1) }),
    ).toBe(true);
    expect(
      shouldApply({ status: 'failed', created_at: at(1) }, { status: 'delivered', created_at: at(2) }),
    ).toBe(true);
    expect(
      shouldApply({ status: 'delivered', created_at: at(2) }, { status: 'failed', created_at: at(1) }),
    ).toBe(false);
    // A repeat of the same event changes nothing; missing or garbled timestamps keep what is stored.
    expect(
      shouldApply({ status: 'delivered', created_at: at(2) }, { status: 'delivered', created_at: at(2) }),
    ).toBe(false);
    expect(shouldApply({ status: 'delivered' }, { status: 'failed', created_at: at(2) })).toBe(false);
    expect(
      shouldApply({ status: 'delivered', created_at: 'yesterday' }, { status: 'failed', created_at: at(2) }),
    ).toBe(false);
    // Offsets are honoured: 11:30+01:00 is earlier than 10:45Z.
    expect(
      shouldApply(
        { status: 'failed', created_at: '2026-11-21T10:45:00+00:00' },
        { status: 'delivered', created_at: '2026-11-21T11:30:00+01:00' },
      ),
    ).toBe(false);
  });

  it('any arrival order of one message’s events ends in the same status (the latest stage, latest clock)', () => {
    const history: StatusRecord[] = [
      { status: 'queued', created_at: at(0) },
      { status: 'submitted', created_at: at(1) },
      { status: 'failed', created_at: at(2) },
      { status: 'delivered', created_at: at(3) },
    ];
    fc.assert(
      fc.property(fc.shuffledSubarray(history, { minLength: history.length }), fc.nat(3), (order, repeat) => {
        let stored: StatusRecord | undefined;
        // Deliveries are at-least-once: replay one of them at the end.
        for (const incoming of [...order, order[repeat] as StatusRecord]) {
          if (shouldApply(stored, incoming)) stored = incoming;
        }
        expect(stored).toEqual({ status: 'delivered', created_at: at(3) });
      }),
    );
  });

  it('statusOfEvent maps message.<status> event types', () => {
    const types: [string, MessageStatus | undefined][] = [
      ['message.delivered', 'delivered'],
      ['message.failed', 'failed'],
      ['message.submitted', 'submitted'],
      ['message.constructor', undefined],
      ['campaign.completed', undefined],
    ];
    for (const [type, status] of types) expect(statusOfEvent(type)).toBe(status);
  });
});
