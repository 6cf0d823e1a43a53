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
export type {
  AttemptRecord,
  CampaignRecord,
  DeliveryKind,
  DeliveryRecord,
  EmulatorState,
  EventRecord,
  MessageRecord,
} from './state.js';
