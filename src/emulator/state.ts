import type { MessageStatus } from '../events/status-order.js';
import type { EmulatorMode } from './organizations.js';

export interface MessageRecord {
  id: string;
  /** The organization whose API key sent it (`default` with a single one). */
  organization: string;
  mode: EmulatorMode;
  kind: 'sms' | 'campaign' | 'otp';
  to: string;
  sender: string;
  body: string;
  status: MessageStatus;
  created_at: string;
  /** Each status with the time it was reached. */
  history: { status: MessageStatus; at: string }[];
  operator: string;
  campaign_id?: string;
  otp?: { purpose: string; ttl_seconds: number; expires_at: string };
  /** The events emitted for it (delivery receipt or failure). */
  events: string[];
  /** Its receipt is never sent (chaos `webhookLoss`). */
  webhook_lost?: true;
  /** When its status was last read through the status path (a reconciliation asking). */
  status_read_at?: string;
}

export interface EventRecord {
  id: string;
  type: string;
  organization: string;
  mode: EmulatorMode;
  message_id?: string;
  /** The exact JSON bytes that are signed and sent. */
  body: string;
}

/** How a delivery came to be: the event's own, a chaos copy, or a console action. */
export type DeliveryKind = 'original' | 'copy' | 'resend' | 'duplicate' | 'tampered';

export interface AttemptRecord {
  at: string;
  /** 0 when no answer came. */
  status: number;
  /** The receiver's `error.code`. */
  reason?: string;
  duplicate: boolean;
  ms: number;
  /** What chaos did to this attempt. */
  variant?: 'stale' | 'tampered';
  error?: string;
}

export interface DeliveryRecord {
  id: string;
  event_id: string;
  event_type: string;
  message_id?: string;
  organization: string;
  mode: EmulatorMode;
  kind: DeliveryKind;
  /** When the delivery was created (its first attempt may wait for a hold, a pause or a slot). */
  created_at: string;
  /** `rejected` / `forgery_accepted`: how the receiver answered a tampered copy (rejecting it is right). */
  state:
    | 'scheduled'
    | 'sending'
    | 'retrying'
    | 'held'
    | 'acknowledged'
    | 'failed'
    | 'no_endpoint'
    | 'rejected'
    | 'forgery_accepted';
  attempts: AttemptRecord[];
  next_retry_at?: string;
  /** The last request sent, replayed byte for byte by "send a duplicate". */
  last?: { body: string; headers: Record<string, string> };
}

export interface CampaignRecord {
  id: string;
  mode: EmulatorMode;
  name: string;
  sender: string;
  template_id: string;
  group_id: string;
  message_ids: string[];
  created_at: string;
}

/**
 * Everything the emulator knows, in memory: a development tool starts clean, and a restart is the way
 * back to a known state.
 */
export class EmulatorState {
  readonly messages = new Map<string, MessageRecord>();
  readonly events = new Map<string, EventRecord>();
  readonly deliveries = new Map<string, DeliveryRecord>();
  readonly campaigns = new Map<string, CampaignRecord>();
  /** API requests that came before the wait a 429 told their key had passed: a client that broke it. */
  brokenWaits = 0;
  private readonly deliveriesByMessage = new Map<string, DeliveryRecord[]>();
  private readonly listeners = new Set<(messageId: string | undefined) => void>();

  addDelivery(delivery: DeliveryRecord): void {
    this.deliveries.set(delivery.id, delivery);
    const key = delivery.message_id ?? '';
    const list = this.deliveriesByMessage.get(key);
    if (list) list.push(delivery);
    else this.deliveriesByMessage.set(key, [delivery]);
    this.changed(delivery.message_id);
  }

  deliveriesOf(messageId: string): DeliveryRecord[] {
    return this.deliveriesByMessage.get(messageId) ?? [];
  }

  /** Tells the console (server-sent events) that a message or its deliveries moved on. */
  changed(messageId: string | undefined): void {
    for (const listener of this.listeners) listener(messageId);
  }

  subscribe(listener: (messageId: string | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A message with its deliveries and their attempts: the console's row. */
  view(messageId: string) {
    const message = this.messages.get(messageId);
    if (!message) return undefined;
    return { ...message, deliveries: this.deliveriesOf(messageId).map(({ last: _last, ...rest }) => rest) };
  }
}
