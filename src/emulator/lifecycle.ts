import { createId, isoTimestamp } from '../events/ids.js';
import type { MessageStatus } from '../events/status-order.js';
import type { EmulatorMode, ResolvedOptions } from './options.js';
import type { EmulatorState, EventRecord, MessageRecord } from './state.js';
import type { Timers } from './timers.js';
import type { WebhookSender } from './webhooks.js';

const OPERATORS = ['op_emu_north', 'op_emu_south', 'op_emu_east'];

export interface NewMessage {
  organization: string;
  mode: EmulatorMode;
  kind: MessageRecord['kind'];
  to: string;
  sender: string;
  body: string;
  campaign_id?: string;
  otp?: { purpose: string; ttl_seconds: number };
}

/**
 * Moves each message queued → submitted → delivered or failed on the configured schedule, and emits the
 * delivery receipt (`message.delivered`) or the failure event as a webhook.
 */
export class MessageLifecycle {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly state: EmulatorState,
    private readonly timers: Timers,
    private readonly webhooks: WebhookSender,
    private readonly random: () => number,
  ) {}

  create(input: NewMessage): MessageRecord {
    const now = new Date();
    const { otp, campaign_id, ...fields } = input;
    // Every draw for the message happens here, in the order messages are sent: the seed alone then decides
    // which fail and when, whatever the timing of the others.
    const operator = OPERATORS[Math.floor(this.random() * OPERATORS.length)] as string;
    const failed = this.random() < this.options.schedule.failureRate;
    // Drawn only when asked for, so that a seed decides what it decided before the option existed.
    const { webhookLoss } = this.options.chaos;
    const lost = webhookLoss > 0 && this.random() < webhookLoss;
    const delays = [
      this.options.schedule.submitMs + this.jitter(),
      this.options.schedule.resultMs + this.jitter(),
    ];
    const message: MessageRecord = {
      id: createId('msg_'),
      ...fields,
      status: 'queued',
      created_at: isoTimestamp(now),
      history: [{ status: 'queued', at: isoTimestamp(now) }],
      operator,
      events: [],
    };
    if (campaign_id) message.campaign_id = campaign_id;
    if (lost) message.webhook_lost = true;
    if (otp) {
      const expires = new Date(now.getTime() + otp.ttl_seconds * 1000);
      message.otp = { ...otp, expires_at: isoTimestamp(expires) };
    }
    this.state.messages.set(message.id, message);
    this.state.changed(message.id);
    void this.advance(message, failed, delays as [number, number]);
    return message;
  }

  private async advance(message: MessageRecord, failed: boolean, [submit, result]: [number, number]) {
    if (!(await this.timers.wait(submit))) return;
    this.move(message, 'submitted');
    if (!(await this.timers.wait(result))) return;
    this.move(message, failed ? 'failed' : 'delivered');
    if (message.webhook_lost !== true) this.webhooks.emit(this.event(message, failed));
  }

  private jitter(): number {
    const { jitterMs } = this.options.schedule;
    return jitterMs > 0 ? this.random() * jitterMs : 0;
  }

  private move(message: MessageRecord, status: MessageStatus): void {
    message.status = status;
    message.history.push({ status, at: isoTimestamp() });
    this.state.changed(message.id);
  }

  private event(message: MessageRecord, failed: boolean): EventRecord {
    const data: Record<string, unknown> = {
      message_id: message.id,
      to: message.to,
      operator: message.operator,
    };
    if (failed) data.reason = 'unreachable';
    if (message.otp) {
      data.purpose = message.otp.purpose;
      data.ttl_seconds = message.otp.ttl_seconds;
    }
    if (message.campaign_id) data.campaign_id = message.campaign_id;
    const type = failed ? this.options.failureEvent : 'message.delivered';
    const id = createId('evt_');
    const body = JSON.stringify({ id, type, created_at: isoTimestamp(), data });
    const { organization, mode } = message;
    const event: EventRecord = { id, type, organization, mode, message_id: message.id, body };
    this.state.events.set(id, event);
    message.events.push(id);
    return event;
  }
}
