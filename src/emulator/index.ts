export type { WebhookAttempt } from './attempt-line.js';
export { type Emulator, startEmulator } from './emulator.js';
export type {
  ChaosOptions,
  ContactSeed,
  EmulatorMode,
  EmulatorOptions,
  EmulatorSeedData,
  ModeOptions,
  ResolvedMode,
} from './options.js';
export type { OrganizationOptions } from './organizations.js';
export type {
  AttemptRecord,
  CampaignRecord,
  DeliveryKind,
  DeliveryRecord,
  EmulatorState,
  EventRecord,
  MessageRecord,
} from './state.js';
