import { CONSOLE_SCRIPT } from './console-script.js';

/**
 * The web console: one page, no build step. The markup and style ship as strings from the compiled
 * package, so `npm run build` (plain tsc) is all it needs.
 */
const STYLE = `
:root { color-scheme: light dark; --bg: #f7f7f8; --fg: #1b1b1f; --muted: #5c5c66; --card: #fff; --line: #d9d9e0;
  --ok: #116329; --bad: #b3261e; --wait: #8a5a00; --accent: #2752c9; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #141418; --fg: #ececf1; --muted: #a5a5b2; --card: #1e1e24; --line: #34343d;
    --ok: #5cd38a; --bad: #ff8a80; --wait: #f2c14e; --accent: #8fb0ff; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
header, main { max-width: 960px; margin: 0 auto; padding: 12px; }
h1 { font-size: 1.25rem; margin: 0 0 4px; }
h2 { font-size: 1.05rem; margin: 0; overflow-wrap: anywhere; }
p { margin: 4px 0; }
.muted { color: var(--muted); }
.row { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; margin: 10px 0; }
button, select { font: inherit; padding: 6px 10px; border-radius: 6px; border: 1px solid var(--line);
  background: var(--card); color: var(--fg); cursor: pointer; min-height: 36px; }
button.primary { background: var(--accent); color: var(--bg); border-color: var(--accent); }
button:disabled { opacity: .5; cursor: not-allowed; }
#modes .row { margin-top: 8px; }
button:focus-visible, select:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.status { font-weight: 600; padding: 1px 8px; border-radius: 999px; border: 1px solid currentColor; font-size: .85rem; }
.delivered, .acknowledged, .rejected, .pass { color: var(--ok); }
.failed, .forgery_accepted, .fail { color: var(--bad); }
.queued, .submitted, .scheduled, .sending, .retrying, .held, .no_endpoint { color: var(--wait); }
ol.attempts { margin: 4px 0 8px; padding-left: 22px; }
ol.attempts li { overflow-wrap: anywhere; }
.delivery { border-top: 1px dashed var(--line); padding-top: 6px; margin-top: 6px; }
code { font-size: .9em; overflow-wrap: anywhere; }
abbr.kind { text-decoration: underline dotted; cursor: help; }
#legend dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; }
#legend dt { font-weight: 600; }
#legend dd { margin: 0; }
`;

/** A message bubble, inline: without an icon the browser asks for /favicon.ico and logs its 404 as an error. */
const ICON = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path fill="#2752c9" d="M4 4h24a2 2 0 0 1 2 2v15a2 2 0 0 1-2 2H13l-7 6v-6H4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z"/></svg>',
)}`;

export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Messaging Service emulator</title>
<link rel="icon" href="${ICON}">
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1>Messaging Service emulator</h1>
  <p class="muted">A local stand-in for the service: messages, their delivery events and every webhook attempt. State lives in memory.</p>
  <section aria-labelledby="endpoints-title" class="card">
    <h2 id="endpoints-title">Webhook endpoints</h2>
    <div id="modes"></div>
  </section>
  <section aria-labelledby="send-title" class="card">
    <h2 id="send-title">Send</h2>
    <div class="row">
      <label for="send-organization" id="send-organization-label" hidden>Organization</label>
      <select id="send-organization" hidden></select>
      <label for="send-mode">Mode</label>
      <select id="send-mode"><option value="test">test</option><option value="live">live</option></select>
      <button type="button" class="primary" id="send">Send a test message</button>
    </div>
  </section>
  <p id="announce" role="status" aria-live="polite" class="muted"></p>
  <section id="check" aria-labelledby="check-title" class="card" hidden>
    <h2 id="check-title">Go-live check</h2>
    <p id="check-note" class="muted"></p>
    <ul id="check-results"></ul>
  </section>
</header>
<main>
  <h2 id="messages-title">Messages</h2>
  <details class="card" id="legend">
    <summary>What the webhook labels mean</summary>
    <dl>
      <dt>original</dt><dd>the event's own delivery, retried until acknowledged</dd>
      <dt>copy</dt><dd>a second copy sent at the same time (the copies chaos option): it must run once</dd>
      <dt>resend</dt><dd>the event sent again, freshly signed (Resend event): the receiver should say duplicate</dd>
      <dt>duplicate</dt><dd>the last request replayed byte for byte (Send a duplicate)</dd>
      <dt>tampered</dt><dd>the body changed after signing (Send a tampered copy): rejecting it is right</dd>
      <dt>stale, tampered on purpose</dt><dd>an attempt chaos changed; rejected, then retried intact</dd>
    </dl>
    <p class="muted">A message's badge is green only when it was delivered and every webhook about it was acknowledged.</p>
  </details>
  <div id="messages" aria-labelledby="messages-title"></div>
</main>
<script>${CONSOLE_SCRIPT}</script>
</body>
</html>`;
