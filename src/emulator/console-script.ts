/**
 * The console's browser code, plain ES2020 without a build step. It renders with textContent only (no
 * HTML from data) and follows the emulator's server-sent events.
 */
export const CONSOLE_SCRIPT = `
(function () {
  var list = document.getElementById('messages');
  var announce = document.getElementById('announce');

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === 'text') node.textContent = attrs[key];
      else if (key === 'onclick') node.addEventListener('click', attrs[key]);
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) { if (child) node.appendChild(child); });
    return node;
  }
  function say(text) { announce.textContent = text; }
  function time(iso) { return iso ? new Date(iso).toLocaleTimeString() : ''; }

  function act(body, done) {
    return fetch('/console/actions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body)
    }).then(function (res) {
      return res.json().then(function (json) {
        if (!res.ok) throw new Error(json.error ? json.error.message : res.statusText);
        return json;
      });
    }).then(done, function (error) { say('Failed: ' + error.message); });
  }

  function attemptText(a) {
    var parts = [a.status === 0 ? 'no answer' : String(a.status)];
    if (a.reason) parts.push(a.reason);
    if (a.duplicate) parts.push('duplicate');
    parts.push(a.ms + ' ms');
    if (a.variant) parts.push('(' + a.variant + ' on purpose)');
    if (a.error) parts.push(a.error);
    return time(a.at) + ' · ' + parts.join(' · ');
  }

  function renderDelivery(d) {
    var attempts = el('ol', { class: 'attempts', 'aria-label': 'Attempts of ' + d.id },
      d.attempts.map(function (a) { return el('li', { class: 'attempt', text: attemptText(a) }); }));
    var head = el('p', {}, [
      el('span', { text: d.event_type + ' · ' + d.kind + ' · ' }),
      el('span', { class: 'delivery-state ' + d.state, text: d.state.replace('_', ' ') + (d.kind === 'tampered' && d.state === 'rejected' ? ' (as it should be)' : '') }),
      d.next_retry_at ? el('span', { class: 'muted', text: ' · next retry ' + time(d.next_retry_at) }) : null
    ]);
    return el('div', { class: 'delivery', 'data-kind': d.kind, 'data-state': d.state }, [head, attempts]);
  }

  function renderMessage(m) {
    var event = m.events[m.events.length - 1];
    var actions = event ? el('div', { class: 'row' }, [
      el('button', { type: 'button', text: 'Resend event', onclick: function () {
        act({ action: 'resend', event_id: event }, function () { say('Resent ' + event); }); } }),
      el('button', { type: 'button', text: 'Send a duplicate', onclick: function () {
        act({ action: 'duplicate', event_id: event }, function () { say('Sent a duplicate of ' + event); }); } }),
      el('button', { type: 'button', text: 'Send a tampered copy', onclick: function () {
        act({ action: 'tampered', event_id: event }, function () { say('Sent a tampered copy of ' + event); }); } })
    ]) : null;
    return el('article', { class: 'card message', 'data-message-id': m.id, 'data-status': m.status,
      'aria-labelledby': 'title-' + m.id }, [
      el('div', { class: 'row' }, [
        el('h2', { id: 'title-' + m.id }, [el('code', { text: m.id })]),
        el('span', { class: 'status ' + m.status, text: m.status })
      ]),
      el('p', { class: 'muted', text: m.mode + ' · ' + m.kind + ' to ' + m.to + ' from ' + m.sender +
        ' · ' + time(m.created_at) + (m.otp ? ' · OTP ' + m.otp.purpose + ', ' + m.otp.ttl_seconds + ' s' : '') }),
      el('p', { text: m.body }),
      el('div', { class: 'deliveries' }, m.deliveries.map(renderDelivery)),
      actions
    ]);
  }

  function upsert(m) {
    var node = renderMessage(m);
    var old = document.querySelector('[data-message-id="' + m.id + '"]');
    if (old) list.replaceChild(node, old);
    else list.insertBefore(node, list.firstChild);
    // The newest rows only: a long run (or a benchmark) must not grow the page without end.
    while (list.children.length > 200) list.removeChild(list.lastChild);
  }

  var shownModes = '';
  function renderModes(modes) {
    // Redrawn only when something changed, so a focused button keeps its focus.
    var json = JSON.stringify(modes);
    if (json === shownModes) return;
    shownModes = json;
    var box = document.getElementById('modes');
    box.replaceChildren.apply(box, modes.map(function (m) {
      var check = el('button', { type: 'button', text: 'Run the go-live check (' + m.mode + ')',
        onclick: function () { say('Checking ' + m.endpoint + '…'); act({ action: 'check', mode: m.mode }, showCheck); } });
      check.disabled = !m.endpoint;
      return el('div', { class: 'row', 'data-mode': m.mode }, [
        el('strong', { text: m.mode }),
        el('code', { text: m.endpoint || 'no endpoint: events are recorded, not sent' }),
        el('span', { class: m.paused ? 'status held' : 'status delivered', text: m.paused ? 'paused' : 'delivering' }),
        el('button', { type: 'button', text: (m.paused ? 'Resume' : 'Pause') + ' ' + m.mode + ' deliveries',
          onclick: function () { act({ action: m.paused ? 'resume' : 'pause', mode: m.mode }, function (r) {
            renderModes(r.modes); say((m.paused ? 'Resumed ' : 'Paused ') + m.mode + ' deliveries'); }); } }),
        check
      ]);
    }));
  }

  function showCheck(report) {
    var section = document.getElementById('check');
    section.hidden = false;
    var items = report.checks.map(function (c) {
      return el('li', { class: c.passed ? 'pass' : 'fail', text: (c.passed ? 'PASS ' : 'FAIL ') + c.id + ': ' +
        (c.status || '-') + (c.reason ? ' ' + c.reason : '') + ' · ' + c.detail });
    });
    var results = document.getElementById('check-results');
    results.replaceChildren.apply(results, items);
    say(report.passed ? 'Go-live check passed' : 'Go-live check failed');
  }

  document.getElementById('send').addEventListener('click', function () {
    act({ action: 'send', mode: document.getElementById('send-mode').value }, function (r) {
      say('Sent ' + r.message_id);
    });
  });

  fetch('/console/state').then(function (res) { return res.json(); }).then(function (state) {
    renderModes(state.modes);
    state.messages.slice().reverse().forEach(upsert);
    var stream = new EventSource('/console/stream');
    stream.addEventListener('message', function (e) { var m = JSON.parse(e.data); if (m) upsert(m); });
    stream.addEventListener('modes', function (e) { renderModes(JSON.parse(e.data)); });
    document.body.setAttribute('data-live', 'true');
  });
})();
`;
