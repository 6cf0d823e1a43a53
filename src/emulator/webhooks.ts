import PQueue from 'p-queue';
import { utf8Text } from '../base/bytes.js';
import { callUser } from '../base/deadline.js';
import { isoTimestamp } from '../events/ids.js';
import { type Answer, type Delivery, isAcknowledged, Transport } from '../sending/http.js';
import { backoffMs } from '../sending/retry.js';
import { nowSeconds } from '../signature/index.js';
import type { WebhookAttempt } from './attempt-line.js';
import type { Channels } from './channels.js';
import type { ResolvedOptions } from './options.js';
import type { DeliveryKind, DeliveryRecord, EmulatorState, EventRecord } from './state.js';
import type { Timers } from './timers.js';

/** Far outside any receiver's tolerance: a stale attempt must be rejected. */
const STALE_SECONDS = 3600;

/**
 * Sends events like the service: signed, to the mode's endpoint, a non-2xx answer (or none) retried with
 * exponential backoff and full jitter, each attempt re-signed and recorded. Chaos options add copies,
 * reordering, delays, tampered and stale first attempts.
 */
export class WebhookSender {
  private readonly queue: PQueue;
  private readonly transport: Transport;
  private sequence = 0;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly state: EmulatorState,
    private readonly channels: Channels,
    private readonly timers: Timers,
    private readonly random: () => number,
  ) {
    this.queue = new PQueue({ concurrency: options.concurrency });
    this.transport = new Transport(options.concurrency);
  }

  /** An event's first delivery, plus its chaos copies. */
  emit(event: EventRecord): void {
    const { chaos } = this.options;
    const copies = this.random() < chaos.copies ? 2 : 1;
    // Copies share one hold, so that they meet at the receiver at the same time.
    const hold = chaos.delayMs + (chaos.reorderMs > 0 ? this.random() * chaos.reorderMs : 0);
    for (let copy = 0; copy < copies; copy++) this.start(event, copy === 0 ? 'original' : 'copy', hold);
  }

  /** A console action on an event: sent again freshly signed, replayed byte for byte, or tampered. */
  redeliver(event: EventRecord, kind: 'resend' | 'duplicate' | 'tampered'): DeliveryRecord {
    // A duplicate replays the last request sent for the event; one never sent is simply sent.
    const replay =
      kind === 'duplicate'
        ? this.state
            .deliveriesOf(event.message_id ?? '')
            .findLast((delivery) => delivery.event_id === event.id && delivery.last)?.last
        : undefined;
    return this.start(event, kind, 0, replay);
  }

  private start(
    event: EventRecord,
    kind: DeliveryKind,
    holdMs: number,
    replay?: DeliveryRecord['last'],
  ): DeliveryRecord {
    const delivery: DeliveryRecord = {
      id: `dlv_${(++this.sequence).toString(36).padStart(8, '0')}`,
      event_id: event.id,
      event_type: event.type,
      organization: event.organization,
      mode: event.mode,
      kind,
      created_at: isoTimestamp(),
      state: 'scheduled',
      attempts: [],
    };
    if (event.message_id) delivery.message_id = event.message_id;
    this.state.addDelivery(delivery);
    this.run(delivery, event, holdMs, replay).catch((error: unknown) => {
      // Nothing in a delivery should throw; if something does, the record says so instead of the process dying.
      delivery.attempts.push({
        at: isoTimestamp(),
        status: 0,
        duplicate: false,
        ms: 0,
        error: String(error),
      });
      this.settle(delivery, 'failed');
    });
    return delivery;
  }

  private async run(
    delivery: DeliveryRecord,
    event: EventRecord,
    holdMs: number,
    replay: DeliveryRecord['last'],
  ): Promise<void> {
    if (holdMs > 0 && !(await this.timers.wait(holdMs))) return;
    const { retry } = this.options;
    // A tampered copy is meant to be rejected: retrying it would only be rejected again.
    const maxAttempts = delivery.kind === 'tampered' ? 1 : retry.maxAttempts;
    for (let attempt = 1; ; attempt++) {
      if (await this.held(delivery)) return;
      const endpoint = this.channels.get(delivery.organization, delivery.mode).settings.endpoint;
      if (endpoint === undefined) {
        this.settle(delivery, 'no_endpoint');
        return;
      }
      const { request, variant } =
        replay && attempt === 1
          ? { request: replay, variant: undefined }
          : this.request(delivery, event, attempt);
      delivery.state = 'sending';
      delivery.next_retry_at = undefined;
      const at = isoTimestamp();
      const answer = await this.queue.add(() => this.transport.post(endpoint, request, retry.timeoutMs));
      if (!answer) return;
      delivery.last = request;
      delivery.attempts.push(attemptRecord(at, answer, variant));
      this.report(delivery, endpoint, attempt);
      const acknowledged = isAcknowledged(answer);
      if (delivery.kind === 'tampered')
        return this.settle(delivery, acknowledged ? 'forgery_accepted' : 'rejected');
      if (acknowledged) return this.settle(delivery, 'acknowledged');
      if (attempt >= maxAttempts || this.timers.isClosed) return this.settle(delivery, 'failed');
      const waitMs = backoffMs(retry, attempt, this.random);
      delivery.state = 'retrying';
      delivery.next_retry_at = isoTimestamp(new Date(Date.now() + waitMs));
      this.state.changed(delivery.message_id);
      if (!(await this.timers.wait(waitMs))) return;
    }
  }

  /** Waits while the mode's endpoint is paused; true when the emulator closed meanwhile. */
  private async held(delivery: DeliveryRecord): Promise<boolean> {
    const gate = this.channels.get(delivery.organization, delivery.mode).gate;
    if (gate.paused) {
      delivery.state = 'held';
      this.state.changed(delivery.message_id);
      await gate.pass();
    }
    return this.timers.isClosed;
  }

  private request(
    delivery: DeliveryRecord,
    event: EventRecord,
    attempt: number,
  ): { request: Delivery & { body: string }; variant?: 'stale' | 'tampered' } {
    const { chaos } = this.options;
    const first = attempt === 1 && delivery.kind !== 'tampered';
    const stale = first && chaos.stale > 0 && this.random() < chaos.stale;
    const tampered =
      delivery.kind === 'tampered' || (first && chaos.tamper > 0 && this.random() < chaos.tamper);
    const timestamp = nowSeconds() - (stale ? STALE_SECONDS : 0);
    const signer = this.channels.get(delivery.organization, delivery.mode).signer;
    const signed = signer.sign(event.body, timestamp);
    const headers = { 'content-type': 'application/json', ...signed.headers };
    const sent = utf8Text(signed.body);
    const body = tampered ? tamper(sent) : sent;
    const variant = stale ? 'stale' : tampered ? 'tampered' : undefined;
    return variant ? { request: { body, headers }, variant } : { request: { body, headers } };
  }

  /** Tells `onAttempt` (the terminal) about the attempt just recorded; a listener's mistake stays its own. */
  private report(delivery: DeliveryRecord, url: string, attempt: number): void {
    const listener = this.options.onAttempt;
    const recorded = delivery.attempts.at(-1);
    if (!listener || !recorded) return;
    const { at, status, reason, duplicate, error, variant } = recorded;
    const report: WebhookAttempt = {
      at,
      organization: delivery.organization,
      mode: delivery.mode,
      event_id: delivery.event_id,
      event_type: delivery.event_type,
      url,
      attempt,
      kind: delivery.kind,
      status,
      duplicate,
      ...(reason ? { reason } : {}),
      ...(error ? { error } : {}),
      ...(variant ? { variant } : {}),
    };
    void Promise.resolve(callUser(() => listener(report))).catch(() => undefined);
  }

  private settle(delivery: DeliveryRecord, state: DeliveryRecord['state']): void {
    delivery.state = state;
    delivery.next_retry_at = undefined;
    this.state.changed(delivery.message_id);
  }

  /** Resolves when no webhook request is in flight or waiting for a slot. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  close(): void {
    this.queue.clear();
    this.transport.close();
  }
}

/** The body changed after signing, the way an attacker on the path would: same length, one field off. */
function tamper(body: string): string {
  const changed = body.replace(
    /"to":"\+(\d)/,
    (_match, digit: string) => `"to":"+${(Number(digit) + 1) % 10}`,
  );
  return changed === body ? `${body} ` : changed;
}

function attemptRecord(at: string, answer: Answer, variant: 'stale' | 'tampered' | undefined) {
  return {
    at,
    status: answer.status,
    ...(answer.reason ? { reason: answer.reason } : {}),
    duplicate: answer.duplicate,
    ms: Math.round(answer.ms * 10) / 10,
    ...(variant ? { variant } : {}),
    ...(answer.error ? { error: answer.error } : {}),
  };
}
