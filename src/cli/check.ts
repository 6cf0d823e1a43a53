import { CHECK_TIMEOUT_MS, type CheckResult, runChecks, SKEW_SECONDS } from '../sending/go-live-checks.js';
import { answerLabel } from '../sending/http.js';
import { BIN, type Command, parseDelivery, SIGNING_HELP } from './args.js';
import { escapeControls, formatMs, palette, table } from './output.js';

const help = `Usage: ${BIN} check <url> --secret S [--json] [--header NAME]

The go-live check (the twin of the service's POST /v1/webhooks/test). It sends:
  valid             a valid signed event                   expects 2xx within ${CHECK_TIMEOUT_MS / 1000} s
  duplicate         the same delivery again                expects 2xx (processed once: the endpoint
                                                           should say "duplicate"), or 409
                                                           event_in_progress while a durable queue
                                                           still holds the first
  tampered          a body changed after signing           expects 4xx
  stale             a timestamp ${SKEW_SECONDS / 60} min in the past          expects 4xx
  future            a timestamp ${SKEW_SECONDS / 60} min in the future        expects 4xx
  missing-header    no signature header                    expects 4xx
  wrong-secret      signed with another secret             expects 4xx
  content-type      a signed body sent as text/plain       expects 4xx
A redirect fails any check: the service does not follow redirects. Exit code 1 on any failure.

  --json            print the results as JSON
${SIGNING_HELP}`;

export const check: Command = {
  name: 'check',
  summary: 'go-live check: valid, duplicate and forged deliveries; pass/fail table',
  help,
  async run(argv) {
    const { values, url, sign } = parseDelivery('check', argv, { json: { type: 'boolean' } });
    const results = await runChecks(url, sign);
    const passed = results.every((result) => result.passed);
    if (values.json) process.stdout.write(`${JSON.stringify({ url, passed, checks: results }, null, 2)}\n`);
    else process.stdout.write(`${report(url, results)}\n`);
    return passed ? 0 : 1;
  },
};

function report(url: string, results: CheckResult[]): string {
  const color = palette();
  const rows = results.map((result) => [
    result.passed ? color.green('PASS') : color.red('FAIL'),
    result.id,
    result.expected,
    result.status === 0 ? '-' : escapeControls(answerLabel(result)),
    formatMs(result.ms),
    escapeControls(result.detail),
  ]);
  const failed = results.filter((result) => !result.passed);
  const summary =
    failed.length === 0
      ? color.green(`All ${results.length} checks passed: ${url} is ready for go-live.`)
      : color.red(
          `${failed.length} of ${results.length} checks failed: ${failed.map((result) => result.id).join(', ')}`,
        );
  return `Checking ${url}\n\n${table(['result', 'check', 'expects', 'got', 'time', 'detail'], rows)}\n\n${summary}`;
}
