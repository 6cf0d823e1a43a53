import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import {
  type CountingReceiver,
  SECRET,
  startCountingReceiver,
  startServer,
  type TestServer,
} from '../support/child-processes.js';

/*
 * The console's states in a real browser (Debian's chromium through playwright-core), with two organizations:
 * acme's endpoint is a receiver that acknowledges, globex's answers 500 to everything, and globex's live mode
 * has no endpoint. A message whose webhook failed is not shown as a success, a mode without an endpoint says
 * so, the go-live check lists the events it sent, and every webhook shows its evt_ id and time.
 */
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = join(tmpdir(), `messaging-webhooks-console-states-${process.pid}.png`);

let acme: CountingReceiver;
let globex: TestServer;
let emulator: Emulator;
let browser: Browser;

beforeAll(async () => {
  acme = await startCountingReceiver();
  globex = await startServer((_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"handler_failed","message":"down"}}');
  });
  emulator = await startEmulator({
    organizations: [
      { name: 'acme', test: { endpoint: acme.url, secret: SECRET } },
      { name: 'globex', test: { endpoint: globex.url } },
    ],
    schedule: { submitMs: 20, resultMs: 40, jitterMs: 0 },
    retry: { maxAttempts: 2, baseMs: 5, capMs: 10 },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
});

afterAll(async () => {
  await browser?.close();
  await emulator?.close();
  await acme?.close();
  await globex?.close();
});

async function openConsole(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 960, height: 900 } });
  await page.goto(emulator.url);
  await page.locator('body[data-live="true"]').waitFor();
  return page;
}

async function send(page: Page, organization: string): Promise<void> {
  await page.getByLabel('Organization').selectOption(organization);
  await page.getByRole('button', { name: 'Send a test message' }).click();
}

it('shows a message whose webhook failed in red, with the failed webhook, its evt_ id and time', async () => {
  const page = await openConsole();
  await send(page, 'globex');
  const row = page.locator('article.message').first();
  await expect.poll(() => row.getAttribute('data-webhooks'), { timeout: 10_000 }).toBe('failed');
  expect(await row.getAttribute('data-status')).toBe('delivered');
  const badge = row.locator('.message-status');
  expect(await badge.textContent()).toBe('delivered');
  expect(await badge.getAttribute('class')).toContain('failed');
  const red = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--bad'));
  const colour = await badge.evaluate((node) => getComputedStyle(node).color);
  const probe = await page.evaluate((value) => {
    const span = document.createElement('span');
    span.style.color = value;
    document.body.appendChild(span);
    return getComputedStyle(span).color;
  }, red.trim());
  expect(colour).toBe(probe);
  expect(await row.locator('.webhooks').textContent()).toBe('webhook failed');
  expect(await row.locator('p.muted').first().textContent()).toMatch(/^globex · test · sms/);
  const delivery = row.locator('.delivery').first();
  expect(await delivery.locator('code.event-id').textContent()).toMatch(/^evt_[0-9A-Z]{26}$/);
  expect(await delivery.textContent()).toMatch(/\d{1,2}:\d{2}:\d{2}/);
  expect(await delivery.locator('li.attempt').count()).toBe(2);
  await page.close();
}, 30_000);

it('shows an acknowledged message in green, and explains original, resend and tampered', async () => {
  const page = await openConsole();
  await send(page, 'acme');
  const row = page.locator('article.message').first();
  await expect.poll(() => row.getAttribute('data-webhooks'), { timeout: 10_000 }).toBe('acknowledged');
  expect(await row.locator('.message-status').getAttribute('class')).toContain('delivered');
  expect(await row.locator('p.muted').first().textContent()).toMatch(/^acme · test/);
  expect(await row.locator('abbr.kind').first().getAttribute('title')).toMatch(/own delivery/);
  const legend = page.locator('#legend');
  await legend.locator('summary').click();
  for (const kind of ['original', 'resend', 'tampered', 'duplicate', 'copy']) {
    await expect
      .poll(() => legend.locator('dt', { hasText: new RegExp(`^${kind}$`) }).isVisible())
      .toBe(true);
  }
  expect(await legend.textContent()).toMatch(/tampered.*rejecting it is right/);
  await page.close();
}, 30_000);

it('says a mode without an endpoint is not sending, and names each organization', async () => {
  const page = await openConsole();
  const live = page.locator('#modes [data-organization="globex"][data-mode="live"]');
  expect(await live.locator('.mode-state').textContent()).toBe('not sending: no endpoint');
  expect(await live.textContent()).not.toContain('delivering');
  expect(
    await page.locator('#modes [data-organization="acme"][data-mode="test"] .mode-state').textContent(),
  ).toBe('delivering');
  expect(await page.getByRole('button', { name: 'Run the go-live check (globex live)' }).isDisabled()).toBe(
    true,
  );
  await page.close();
}, 30_000);

it("lists the go-live check's events and says they reach the app's handlers", async () => {
  const page = await openConsole();
  await page.getByRole('button', { name: 'Run the go-live check (acme test)' }).click();
  await expect
    .poll(() => page.getByRole('status').textContent(), { timeout: 15_000 })
    .toBe('Go-live check passed');
  const items = await page.locator('#check-results li').allTextContents();
  expect(items).toHaveLength(8);
  const valid = items.find((item) => item.startsWith('PASS valid'));
  const id = valid?.match(/evt_[0-9A-Z]{26}/)?.[0] as string;
  // The check's valid event is one the receiver's handler ran.
  expect(acme.runs.get(id)).toBe(1);
  expect(await page.locator('#check-note').textContent()).toMatch(
    /Sent 8 signed events to http:\/\/127\.0\.0\.1:\d+\/webhooks \(acme\): these are real deliveries, so your handlers ran/,
  );
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  await page.close();
}, 30_000);
