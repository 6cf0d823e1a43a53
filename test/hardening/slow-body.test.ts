import { describeSlowBody } from './slow-body.js';
import { ADAPTERS, startTarget } from './targets.js';

for (const adapter of ADAPTERS) describeSlowBody(adapter, () => startTarget(adapter));
