import { createHash } from 'node:crypto';

/*
 * The console's one page: inline CSS and JS, no build step, nothing fetched from elsewhere. Every
 * string from the API reaches the DOM as text (textContent, Text nodes, setAttribute of fixed
 * attribute names), never as markup. Live updates come by fetch() streaming of GET api/events with
 * the Authorization header (EventSource cannot send headers, and a token in a URL ends up in logs);
 * when the stream fails, the page polls GET api/quotas and tries the stream again.
 */

const STYLE = String.raw`
:root { color-scheme: light; --used: #2563eb; --reserved: #f59e0b; --over: #dc2626; --ok: #15803d;
  --line: #e5e7eb; --muted: #6b7280; font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; background: #f8fafc; color: #111827; font-size: 15px; line-height: 1.4; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 12px; padding: 10px 14px;
  background: #111827; color: #fff; }
.top h1 { font-size: 17px; margin: 0; flex: 1 1 auto; }
.who { font-size: 13px; color: #d1d5db; overflow-wrap: anywhere; }
.live { font-size: 12px; padding: 2px 8px; border-radius: 10px; background: #374151; }
.live[data-mode=live] { background: var(--ok); }
.live[data-mode=polling] { background: #b45309; }
button { font: inherit; padding: 6px 14px; border-radius: 6px; border: 1px solid #9ca3af; background: #fff;
  cursor: pointer; }
main { max-width: 980px; margin: 0 auto; padding: 12px; }
.login { display: grid; gap: 8px; max-width: 480px; margin: 24px auto; background: #fff; padding: 16px;
  border: 1px solid var(--line); border-radius: 10px; }
.login input { font: inherit; padding: 8px; width: 100%; border: 1px solid #9ca3af; border-radius: 6px; }
.hint { color: var(--muted); font-size: 13px; margin: 0; overflow-wrap: anywhere; }
.message { padding: 8px 12px; border-radius: 6px; background: #fef3c7; overflow-wrap: anywhere; }
.message[data-kind=error] { background: #fee2e2; }
.empty { color: var(--muted); }
.quota { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px;
  margin: 0 0 14px; }
.quota.exceeded { border-color: var(--over); }
.quota h2 { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 10px; font-size: 17px;
  margin: 0 0 8px; overflow-wrap: anywhere; }
.quota h2 .namespace { color: var(--muted); font-weight: 400; }
.quota h2 .percent { margin-left: auto; font-size: 14px; font-weight: 500; }
.conditions { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 10px; padding: 0; list-style: none; }
.conditions li { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #dcfce7; }
.conditions li.bad { background: #fee2e2; }
.resource { margin: 0 0 10px; }
.resource-head { display: flex; flex-wrap: wrap; gap: 2px 10px; align-items: baseline; }
.resource-name { font-weight: 600; overflow-wrap: anywhere; }
.numbers { color: #374151; font-size: 14px; font-variant-numeric: tabular-nums; }
.over { color: var(--over); font-weight: 700; font-size: 13px; }
.bar { display: flex; height: 14px; margin-top: 4px; background: var(--line); border-radius: 7px; overflow: hidden; }
.resource.exceeded .bar { outline: 2px solid var(--over); outline-offset: 1px; }
.bar .used { background: var(--used); }
.bar .reserved { background: repeating-linear-gradient(45deg, var(--reserved) 0 4px, #fcd34d 4px 8px); }
.legend { display: flex; flex-wrap: wrap; gap: 12px; font-size: 12px; color: var(--muted); margin: 0 0 12px; }
.legend span::before { content: ''; display: inline-block; width: 10px; height: 10px; margin-right: 4px;
  border-radius: 2px; vertical-align: -1px; }
.legend .l-used::before { background: var(--used); }
.legend .l-reserved::before { background: var(--reserved); }
.legend .l-over::before { outline: 2px solid var(--over); background: var(--line); }
h3 { font-size: 14px; margin: 14px 0 6px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; min-width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
.state-Ready { color: var(--ok); }
.state-Stale, .state-Unreachable, .state-other { color: var(--over); font-weight: 600; }
.problems { color: var(--over); font-size: 13px; }
`;

const SCRIPT = String.raw`
(function () {
  'use strict';
  var TOKEN_KEY = 'karmada-quota-console-token';
  var POLL_MS = 5000;
  var STREAM_RETRY_MS = 15000;
  var state = { token: sessionStorage.getItem(TOKEN_KEY), stream: null, poll: null, retry: null };
  var $ = function (id) { return document.getElementById(id); };

  /** An element whose children are nodes or strings (Text nodes: data never becomes markup). */
  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    (children || []).forEach(function (child) { node.append(child); });
    return node;
  }

  function showMessage(text, kind) {
    var message = $('message');
    message.hidden = !text;
    message.textContent = text || '';
    message.setAttribute('data-kind', kind || 'info');
  }

  function setMode(mode, detail) {
    var live = $('live');
    live.setAttribute('data-mode', mode);
    live.textContent = mode === 'live' ? 'live' : mode === 'polling' ? 'polling' : 'offline';
    live.title = detail || '';
  }

  function table(headings, rows) {
    return el('div', { class: 'scroll' }, [el('table', {}, [
      el('thead', {}, [el('tr', {}, headings.map(function (h) { return el('th', { scope: 'col' }, [h]); }))]),
      el('tbody', {}, rows.map(function (cells) {
        return el('tr', {}, cells.map(function (cell) { return el('td', {}, [cell]); }));
      }))
    ])]);
  }

  function pairs(list) {
    return Object.keys(list).map(function (key) { return key + '=' + list[key]; }).join(', ');
  }

  function resourceRow(r) {
    var usedWidth = Math.min(r.usedPercent, 100);
    var reservedWidth = Math.min(r.reservedPercent, 100 - usedWidth);
    var used = el('div', { class: 'used' });
    used.style.width = usedWidth + '%';
    var reserved = el('div', { class: 'reserved' });
    reserved.style.width = reservedWidth + '%';
    var label = r.resource + ': ' + r.used + ' used (' + r.usedPercent + '%), ' + r.reserved + ' reserved (' +
      r.reservedPercent + '%) of ' + r.hard + (r.exceeded ? ', over quota' : '');
    return el('div', { class: 'resource' + (r.exceeded ? ' exceeded' : ''), 'data-resource': r.resource }, [
      el('div', { class: 'resource-head' }, [
        el('span', { class: 'resource-name' }, [r.resource]),
        el('span', { class: 'numbers' }, [
          el('span', { class: 'used' }, [r.used]), ' used + ',
          el('span', { class: 'reserved' }, [r.reserved]), ' reserved of ',
          el('span', { class: 'hard' }, [r.hard])
        ]),
        r.exceeded ? el('span', { class: 'over' }, ['over quota']) : ''
      ]),
      el('div', { class: 'bar', role: 'img', 'aria-label': label, title: label }, [used, reserved])
    ]);
  }

  var KNOWN_STATES = ['Ready', 'Stale', 'Unreachable'];

  function quotaCard(q) {
    var exceeded = q.resources.some(function (r) { return r.exceeded; });
    var resources = q.resources.map(function (r) { return r.resource; });
    var card = el('section', {
      class: 'quota' + (exceeded ? ' exceeded' : ''), 'data-namespace': q.namespace, 'data-name': q.name
    }, [
      el('h2', {}, [
        el('span', { class: 'namespace' }, [q.namespace + ' /']),
        el('span', { class: 'name' }, [q.name]),
        el('span', { class: 'percent' }, [q.percentUsed + '% full'])
      ]),
      el('ul', { class: 'conditions' }, q.conditions.map(function (c) {
        var good = c.type === 'OverQuota' ? c.status !== 'True' : c.status === 'True';
        return el('li', { class: good ? 'good' : 'bad', title: c.reason + (c.message ? ': ' + c.message : '') },
          [c.type + ' ' + c.status]);
      })),
      el('div', { class: 'resources' }, q.resources.map(resourceRow))
    ]);
    card.append(el('h3', {}, ['Per cluster']));
    card.append(q.clusters.length
      ? table(['Cluster', 'State', 'Last sync'].concat(resources), q.clusters.map(function (c) {
          var state = el('span', { class: 'state-' + (KNOWN_STATES.indexOf(c.state) >= 0 ? c.state : 'other') },
            [c.state]);
          var synced = el('span', { title: c.lastSyncTime }, [c.lastSyncAge + ' ago']);
          return [c.name, state, synced].concat(resources.map(function (r) { return c.used[r] || '0'; }));
        }))
      : el('p', { class: 'empty' }, ['No cluster has reported usage yet.']));
    card.append(el('h3', {}, ['Reservations']));
    card.append(q.reservations.length
      ? table(['Binding', 'Reserved', 'Expires'], q.reservations.map(function (r) {
          return [r.binding, pairs(r.reserved), r.expirationTime || '-'];
        }))
      : el('p', { class: 'empty' }, ['None: everything admitted is observed in the member clusters.']));
    if (q.problems.length) {
      card.append(el('p', { class: 'problems' }, ['Could not read: ' + q.problems.join('; ')]));
    }
    return card;
  }

  function render(snapshot) {
    $('who').textContent = snapshot.user;
    var list = $('quotas');
    if (!snapshot.quotas.length) {
      list.replaceChildren(el('p', { class: 'empty' }, [
        'There is no KarmadaQuota you may read. A federation admin can grant get on karmadaquotas in your namespace.'
      ]));
      return;
    }
    list.replaceChildren.apply(list, [el('p', { class: 'legend' }, [
      el('span', { class: 'l-used' }, ['used']),
      el('span', { class: 'l-reserved' }, ['reserved (admitted, not yet seen in the clusters)']),
      el('span', { class: 'l-over' }, ['over quota'])
    ])].concat(snapshot.quotas.map(quotaCard)));
  }

  function headers() {
    return { Authorization: 'Bearer ' + state.token, Accept: 'application/json' };
  }

  function problemOf(response) {
    return response.json().then(function (body) { return body.message; }, function () {
      return 'HTTP ' + response.status;
    });
  }

  function load() {
    return fetch('api/quotas', { headers: headers() }).then(function (response) {
      if (response.status === 401) return problemOf(response).then(logout);
      if (!response.ok) return problemOf(response).then(function (problem) { showMessage(problem, 'error'); });
      return response.json().then(function (snapshot) { showMessage(''); render(snapshot); });
    }, function (err) { showMessage('The console cannot be reached: ' + err.message, 'error'); });
  }

  function handleFrame(frame) {
    var event = 'message';
    var data = [];
    frame.split('\n').forEach(function (line) {
      if (line.indexOf('event:') === 0) event = line.slice(6).trim();
      else if (line.indexOf('data:') === 0) data.push(line.slice(5).replace(/^ /, ''));
    });
    if (event === 'quotas') { showMessage(''); render(JSON.parse(data.join('\n'))); }
    else if (event === 'unauthorized') logout(data.join('\n'));
    else if (event === 'unavailable') showMessage(data.join('\n'), 'error');
  }

  function readEvents(reader) {
    var decoder = new TextDecoder();
    var buffer = '';
    function next() {
      return reader.read().then(function (chunk) {
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        var frames = buffer.split('\n\n');
        buffer = frames.pop();
        frames.forEach(handleFrame);
        return next();
      });
    }
    return next();
  }

  function openStream() {
    var controller = new AbortController();
    state.stream = controller;
    fetch('api/events', { headers: headers(), signal: controller.signal }).then(function (response) {
      if (response.status === 401) return problemOf(response).then(logout);
      if (!response.ok || !response.body) throw new Error('live updates answered HTTP ' + response.status);
      setMode('live');
      stopPolling();
      return readEvents(response.body.getReader()).then(function () {
        throw new Error('the live stream ended');
      });
    }).catch(function (err) {
      if (controller.signal.aborted) return;
      setMode('polling', err.message);
      startPolling();
      clearTimeout(state.retry);
      state.retry = setTimeout(openStream, STREAM_RETRY_MS);
    });
  }

  function startPolling() {
    if (!state.poll) state.poll = setInterval(load, POLL_MS);
  }

  function stopPolling() {
    clearInterval(state.poll);
    state.poll = null;
  }

  function stop() {
    if (state.stream) state.stream.abort();
    state.stream = null;
    stopPolling();
    clearTimeout(state.retry);
    setMode('off');
  }

  function start() {
    $('login').hidden = true;
    $('logout').hidden = false;
    load().then(function () { if (state.token) openStream(); });
  }

  function logout(problem) {
    stop();
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    $('who').textContent = '';
    $('quotas').replaceChildren();
    $('login').hidden = false;
    $('logout').hidden = true;
    showMessage(problem || '', 'error');
  }

  $('login').addEventListener('submit', function (event) {
    event.preventDefault();
    var token = $('token').value.trim();
    $('token').value = '';
    if (!token) return;
    state.token = token;
    sessionStorage.setItem(TOKEN_KEY, token);
    showMessage('');
    start();
  });
  $('logout').addEventListener('click', function () { logout(''); });

  if (state.token) start(); else logout('');
})();
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Only this page's own inline style and script run; it talks to its own origin only. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src ${sha256(STYLE)}`,
  `script-src ${sha256(SCRIPT)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>karmada-quota console</title>
<style>${STYLE}</style>
</head>
<body>
<header class="top">
  <h1>karmada-quota</h1>
  <span id="who" class="who"></span>
  <span id="live" class="live" data-mode="off">offline</span>
  <button id="logout" type="button" hidden>Log out</button>
</header>
<main>
  <form id="login" class="login" hidden>
    <label for="token">Kubernetes bearer token</label>
    <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required>
    <button type="submit">Log in</button>
    <p class="hint">A token the Karmada host accepts, e.g. from <code>kubectl create token NAME -n NAMESPACE</code>.
      It is kept in this browser tab only (sessionStorage).</p>
  </form>
  <p id="message" class="message" role="status" hidden></p>
  <div id="quotas"></div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
