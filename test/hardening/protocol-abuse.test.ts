import { describeProtocolAbuse } from './protocol-abuse.js';
import { ADAPTERS, startTarget } from './targets.js';

for (const adapter of ADAPTERS) describeProtocolAbuse(adapter, () => startTarget(adapter));
