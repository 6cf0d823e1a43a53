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
  var several = false;
  function say(text) { announce.textContent = text; }
  function time(iso) { return iso ? new Date(iso).toLocaleTimeString() : ''; }
  function when(iso) { return iso ? new Date(iso).toLocaleString() : ''; }
  var KINDS = {
    original: 'the event\u2019s own delivery',
    copy: 'a second copy sent at the same time (chaos: copies)',
    resend: 'sent again, freshly signed (Resend event)',
    duplicate: 'the last request replayed byte for byte (Send a duplicate)',
    tampered: 'body changed after signing (Send a tampered copy): the receiver must reject it'
  };
  var PENDING = { scheduled: 1, sending: 1, retrying: 1, held: 1 };

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
      el('span', { text: d.event_type + ' · ' }),
      el('code', { class: 'event-id', text: d.event_id }),
      el('span', { text: ' · ' }),
      el('abbr', { class: 'kind', title: KINDS[d.kind] || d.kind, text: d.kind }),
      el('span', { class: 'muted', text: ' · ' + when(d.created_at) + ' · ' }),
      el('span', { class: 'delivery-state ' + d.state, text: stateText(d) }),
      d.next_retry_at ? el('span', { class: 'muted', text: ' · next retry ' + time(d.next_retry_at) }) : null
    ]);
    return el('div', { class: 'delivery', 'data-kind': d.kind, 'data-state': d.state }, [head, attempts]);
  }

  function stateText(d) {
    if (d.state === 'no_endpoint') return 'not sent: no endpoint';
    if (d.state === 'rejected' && d.kind === 'tampered') return 'rejected (as it should be)';
    return d.state.replace('_', ' ');
  }

  // What the message's webhooks add up to: a failed one (or an accepted forgery) wins, then one still under
  // way, then "no endpoint"; acknowledged only when every one was.
  function webhooksOf(m) {
    var states = m.deliveries.map(function (d) { return d.state; });
    if (states.length === 0) return m.status === 'delivered' || m.status === 'failed'
      ? { state: 'scheduled', text: 'webhook pending' } : null;
    if (states.some(function (s) { return s === 'failed' || s === 'forgery_accepted'; }))
      return { state: 'failed', text: 'webhook failed' };
    if (states.some(function (s) { return PENDING[s]; })) {
      var s = states.filter(function (x) { return PENDING[x]; })[0];
      return { state: s, text: 'webhook ' + s };
    }
    if (states.every(function (s) { return s === 'no_endpoint'; }))
      return { state: 'no_endpoint', text: 'webhook not sent: no endpoint' };
    return { state: 'acknowledged', text: 'webhook acknowledged' };
  }

  function renderMessage(m) {
    var hooks = webhooksOf(m);
    // Green only when the message is delivered and every webhook about it was acknowledged.
    var badge = m.status === 'delivered' && hooks && hooks.state !== 'acknowledged' ? hooks.state : m.status;
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
      'data-webhooks': hooks ? hooks.state : 'none', 'aria-labelledby': 'title-' + m.id }, [
      el('div', { class: 'row' }, [
        el('h2', { id: 'title-' + m.id }, [el('code', { text: m.id })]),
        el('span', { class: 'status message-status ' + badge, text: m.status }),
        hooks ? el('span', { class: 'status webhooks ' + hooks.state, text: hooks.text }) : null,
        m.webhook_lost ? el('span', { class: 'status lost', text: 'receipt lost' }) : null,
        m.status_read_at ? el('span', { class: 'status reconciled', 'data-reconciled': 'true',
          text: 'reconciled ' + when(m.status_read_at) }) : null
      ]),
      el('p', { class: 'muted', text: (several ? m.organization + ' · ' : '') + m.mode + ' · ' + m.kind +
        ' to ' + m.to + ' from ' + m.sender + ' · ' + when(m.created_at) + (m.otp ? ' · OTP ' + m.otp.purpose + ', ' + m.otp.ttl_seconds + ' s' : '') }),
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

  function modeState(m) {
    if (!m.endpoint) return { state: 'no_endpoint', text: 'not sending: no endpoint' };
    return m.paused ? { state: 'held', text: 'paused' } : { state: 'delivered', text: 'delivering' };
  }

  var shownModes = '';
  function renderModes(modes) {
    // Redrawn only when something changed, so a focused button keeps its focus.
    var json = JSON.stringify(modes);
    if (json === shownModes) return;
    shownModes = json;
    var box = document.getElementById('modes');
    box.replaceChildren.apply(box, modes.map(function (m) {
      var name = (several ? m.organization + ' ' : '') + m.mode;
      var check = el('button', { type: 'button', text: 'Run the go-live check (' + name + ')',
        title: 'Sends 8 signed events to the endpoint; the valid one runs your handlers',
        onclick: function () { say('Checking ' + m.endpoint + '…');
          act({ action: 'check', organization: m.organization, mode: m.mode }, showCheck); } });
      check.disabled = !m.endpoint;
      var state = modeState(m);
      return el('div', { class: 'row', 'data-mode': m.mode, 'data-organization': m.organization }, [
        el('strong', { text: name }),
        el('code', { text: m.endpoint || 'no endpoint: events are recorded, not sent' }),
        el('span', { class: 'status mode-state ' + state.state, text: state.text }),
        el('button', { type: 'button', text: (m.paused ? 'Resume' : 'Pause') + ' ' + name + ' deliveries',
          onclick: function () { act({ action: m.paused ? 'resume' : 'pause', organization: m.organization, mode: m.mode }, function (r) {
            renderModes(r.modes); say((m.paused ? 'Resumed ' : 'Paused ') + name + ' deliveries'); }); } }),
        check
      ]);
    }));
  }

  function showCheck(report) {
    var section = document.getElementById('check');
    section.hidden = false;
    var items = report.checks.map(function (c) {
      return el('li', { class: c.passed ? 'pass' : 'fail', text: (c.passed ? 'PASS ' : 'FAIL ') + c.id + ': ' +
        (c.status || '-') + (c.reason ? ' ' + c.reason : '') + ' · ' + c.detail + (c.event_id ? ' · ' + c.event_id : '') });
    });
    document.getElementById('check-note').textContent = 'Sent ' + report.checks.length +
      ' signed events to ' + report.url + (several ? ' (' + report.organization + ')' : '') +
      ': these are real deliveries, so your handlers ran for each one the endpoint accepted (the valid ' +
      'event, and its duplicate unless recognised). Their ids are listed below; they are not messages.';
    var results = document.getElementById('check-results');
    results.replaceChildren.apply(results, items);
    say(report.passed ? 'Go-live check passed' : 'Go-live check failed');
  }

  document.getElementById('send').addEventListener('click', function () {
    var org = document.getElementById('send-organization');
    act({ action: 'send', organization: org.value || undefined, mode: document.getElementById('send-mode').value }, function (r) {
      say('Sent ' + r.message_id);
    });
  });

  fetch('/console/state').then(function (res) { return res.json(); }).then(function (state) {
    several = state.organizations.length > 1;
    var org = document.getElementById('send-organization');
    org.replaceChildren.apply(org, state.organizations.map(function (name) {
      return el('option', { value: name, text: name });
    }));
    org.hidden = !several;
    document.getElementById('send-organization-label').hidden = !several;
    renderModes(state.modes);
    state.messages.slice().reverse().forEach(upsert);
    var stream = new EventSource('/console/stream');
    stream.addEventListener('message', function (e) { var m = JSON.parse(e.data); if (m) upsert(m); });
    stream.addEventListener('modes', function (e) { renderModes(JSON.parse(e.data)); });
    document.body.setAttribute('data-live', 'true');
  });
})();
`;
