import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { createServiceClient } from '../../src/tracker/service-client.js';
import { createMessageTracker } from '../../src/tracker/tracker.js';
import { type CountingReceiver, SECRET, startCountingReceiver } from '../support/child-processes.js';
import { until } from '../support/until.js';
import { call, changesOf } from './helpers.js';

/*
 * The web console in a real browser (Debian's chromium driven by playwright-core): send a message, watch it
 * turn delivered with its attempt next to it, resend its event and see the receiver answer "duplicate".
 */
const CHROMIUM = '/usr/bin/chromium';
// The README's picture is refreshed on request (UPDATE_SCREENSHOT=1), so a test run leaves the tree as it was.
const SCREENSHOT = process.env.UPDATE_SCREENSHOT
  ? new URL('../../docs/console.png', import.meta.url).pathname
  : join(tmpdir(), `messaging-webhooks-console-${process.pid}.png`);

let receiver: CountingReceiver;
let emulator: Emulator;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No browser at ${CHROMIUM}: install Debian's package (apt-get install -y chromium).`);
  }
  receiver = await startCountingReceiver();
  emulator = await startEmulator({
    test: { endpoint: receiver.url, secret: SECRET },
    schedule: { submitMs: 150, resultMs: 300, jitterMs: 0 },
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await emulator?.close();
  await receiver?.close();
});

const message = (page: Page) => page.locator('article.message').first();

/** A page whose console errors (a failed load such as a missing /favicon.ico, a script error) are collected. */
async function watchedPage(options: Parameters<Browser['newPage']>[0]) {
  const page = await browser.newPage(options);
  const errors: string[] = [];
  page.on('console', (entry) => {
    if (entry.type() === 'error') errors.push(`${entry.text()} (${entry.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

it('sends, turns delivered, resends and shows the duplicate answered; screenshot for the README', async () => {
  const { page, errors } = await watchedPage({ viewport: { width: 960, height: 760 } });
  await page.goto(emulator.url);
  await page.locator('body[data-live="true"]').waitFor();

  await page.getByRole('button', { name: 'Send a test message' }).click();
  await expect.poll(() => message(page).getAttribute('data-status'), { timeout: 10_000 }).toBe('delivered');
  const original = message(page).locator('.delivery[data-kind="original"]');
  await message(page).locator('.delivery[data-kind="original"][data-state="acknowledged"]').waitFor();
  await expect.poll(() => original.locator('li.attempt').first().textContent()).toMatch(/200 · \d/);

  await message(page).getByRole('button', { name: 'Resend event' }).click();
  const resend = message(page).locator('.delivery[data-kind="resend"]');
  await expect
    .poll(() => resend.locator('li.attempt').first().textContent(), { timeout: 10_000 })
    .toMatch(/200 · duplicate/);
  await message(page).getByRole('button', { name: 'Send a duplicate' }).click();
  const duplicate = message(page).locator('.delivery[data-kind="duplicate"]');
  await expect
    .poll(() => duplicate.locator('li.attempt').first().textContent(), { timeout: 10_000 })
    .toMatch(/200 · duplicate/);
  await message(page).getByRole('button', { name: 'Send a tampered copy' }).click();
  const tampered = message(page).locator('.delivery[data-kind="tampered"]');
  await expect
    .poll(() => tampered.locator('li.attempt').first().textContent(), { timeout: 10_000 })
    .toMatch(/40\d · signature_mismatch/);
  // The receiver ran the handler once for all of it.
  const eventId = [...receiver.runs.keys()][0] as string;
  expect(receiver.runs.get(eventId)).toBe(1);

  await page.getByRole('button', { name: 'Run the go-live check (test)' }).click();
  await expect
    .poll(() => page.getByRole('status').textContent(), { timeout: 15_000 })
    .toBe('Go-live check passed');

  await page.getByRole('button', { name: 'Pause test deliveries' }).click();
  await page.getByRole('button', { name: 'Resume test deliveries' }).waitFor();
  await page.getByRole('button', { name: 'Resume test deliveries' }).click();
  await page.getByRole('button', { name: 'Pause test deliveries' }).waitFor();

  mkdirSync(dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  await page.close();
  expect(errors).toEqual([]);
}, 60_000);

it('fits 360 px and follows dark mode', async () => {
  const { page, errors } = await watchedPage({ viewport: { width: 360, height: 720 }, colorScheme: 'dark' });
  await page.goto(emulator.url);
  await page.locator('article.message').first().waitFor();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(background).toBe('rgb(20, 20, 24)');
  // Every button has a name and every form control a label.
  const unnamed = await page.evaluate(
    () =>
      [...document.querySelectorAll('button, select')].filter(
        (node) => !(node.textContent?.trim() || (node as HTMLSelectElement).labels?.length),
      ).length,
  );
  expect(unnamed).toBe(0);
  await page.close();
  expect(errors).toEqual([]);
}, 30_000);

it('marks the messages a reconciliation read, as it happens and after a reload, and only those', async () => {
  const lossy = await startEmulator({
    test: { endpoint: receiver.url, secret: SECRET },
    schedule: { submitMs: 0, resultMs: 0, jitterMs: 0 },
    chaos: { webhookLoss: 1 },
  });
  const { page, errors } = await watchedPage({ viewport: { width: 960, height: 760 } });
  try {
    await page.goto(lossy.url);
    await page.locator('body[data-live="true"]').waitFor();
    const body = { to: '+15550100001', sender: 'Acme', body: 'Hello' };
    const ids = [
      (await call(lossy, '/v1/messages', { body })).body.id,
      (await call(lossy, '/v1/messages', { body })).body.id,
    ];
    const final = (id: string) => lossy.state.messages.get(id)?.status === 'delivered';
    await until(() => ids.every(final), { changes: changesOf(lossy) });
    const [read, unread] = ids.map((id) => page.locator(`article.message[data-message-id="${id}"]`));
    for (const card of [read, unread]) await card?.locator('.status.lost').waitFor();

    // Only the first is expected, so only it is open in the tracker and asked about.
    const tracker = createMessageTracker();
    await tracker.expect(ids[0] as string);
    const client = createServiceClient({ baseUrl: lossy.url, apiKey: lossy.modes.test.keys[0] as string });
    expect(await tracker.reconcile({ client, olderThanMs: 0 })).toMatchObject({ checked: 1, moved: 1 });
    await read?.locator('.status.reconciled[data-reconciled="true"]').waitFor();
    expect(await read?.locator('.status.reconciled').textContent()).toMatch(/^reconciled \S/);
    expect(await unread?.locator('.status.reconciled').count()).toBe(0);

    await page.reload();
    await read?.locator('.status.reconciled[data-reconciled="true"]').waitFor();
    await unread?.locator('.status.lost').waitFor();
    expect(await unread?.locator('.status.reconciled').count()).toBe(0);
    expect(errors).toEqual([]);
  } finally {
    await page.close();
    await lossy.close();
  }
}, 30_000);
