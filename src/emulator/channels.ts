import type { EmulatorMode, ResolvedMode, ResolvedOptions } from './options.js';
import { RateLimiter } from './rate-limit.js';
import { createSigner, type Signer } from './signer.js';
import { Gate } from './timers.js';

/** What one organization's mode has at run time: its settings, its signer, its pause gate and its quota. */
export interface Channel {
  readonly settings: ResolvedMode;
  readonly signer: Signer;
  readonly gate: Gate;
  readonly limiter: RateLimiter;
}

/** Every organization's test and live channel, found by organization and mode. */
export class Channels {
  private readonly byName = new Map<string, Channel>();

  constructor(options: ResolvedOptions) {
    for (const organization of options.organizations) {
      for (const settings of Object.values(organization.modes)) {
        this.byName.set(`${organization.name}/${settings.mode}`, {
          settings,
          signer: createSigner(settings.secret, options.profile),
          gate: new Gate(),
          limiter: new RateLimiter(settings.rateLimit),
        });
      }
    }
  }

  get(organization: string, mode: EmulatorMode): Channel {
    const channel = this.byName.get(`${organization}/${mode}`);
    if (!channel) throw new Error(`no organization ${organization}`);
    return channel;
  }

  all(): Channel[] {
    return [...this.byName.values()];
  }

  /** The organization and mode whose keys include `key`. */
  byKey(key: string): Channel | undefined {
    return this.all().find((channel) => channel.settings.keys.includes(key));
  }
}
