import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/*
 * The console's one page: inline CSS, and its code as ES modules from ./browser (TypeScript compiled
 * for the browser by `npm run build`), nothing fetched from elsewhere.
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
.quota h2 .enforcement { font-size: 12px; font-weight: 500; padding: 1px 8px; border-radius: 10px;
  background: #fef3c7; }
.conditions { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 10px; padding: 0; list-style: none; }
.conditions li { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #dcfce7; }
.conditions li.bad { background: #fee2e2; }
.resource { margin: 0 0 10px; }
.resource-head { display: flex; flex-wrap: wrap; gap: 2px 10px; align-items: baseline; }
.resource-name { font-weight: 600; overflow-wrap: anywhere; }
.numbers { color: #374151; font-size: 14px; font-variant-numeric: tabular-nums; }
.over { color: var(--over); font-weight: 700; font-size: 13px; }
.bar { display: flex; height: 14px; margin-top: 4px; background: var(--line); border-radius: 7px; overflow: hidden; }
.resource.exceeded .bar, .member-cap.exceeded .bar { outline: 2px solid var(--over); outline-offset: 1px; }
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
.fill { display: flex; align-items: center; gap: 8px; }
.fill .bar { width: 80px; flex: none; margin-top: 0; }
.state-Ready { color: var(--ok); }
.state-Stale, .state-Unreachable, .state-other { color: var(--over); font-weight: 600; }
.problems { color: var(--over); font-size: 13px; }
.trend { display: flex; align-items: center; gap: 8px; margin-top: 4px; font-size: 12px; color: var(--muted); }
.trend-line { width: 120px; height: 24px; flex: none; background: #f1f5f9; border-radius: 3px; }
.trend-line polyline { fill: none; stroke: var(--used); stroke-width: 1.5; vector-effect: non-scaling-stroke; }
.legend .l-trend::before { background: linear-gradient(160deg, transparent 45%, var(--used) 50%, transparent 55%); }
.other { font-style: italic; }
.lines span { display: block; }
.where { display: block; font-size: 12px; color: var(--muted); }
@media (min-width: 700px) { .lines span { display: inline; } .lines span + span::before { content: ', '; } }
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Only this page's own inline style and its own scripts run; it talks to its own origin only. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src ${sha256(STYLE)}`,
  "script-src 'self'",
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
    <p class="hint">A token the Karmada API server accepts, e.g. from <code>kubectl create token NAME -n NAMESPACE</code>.
      It is kept in this browser tab only (sessionStorage).</p>
  </form>
  <p id="message" class="message" role="status" hidden></p>
  <div id="quotas"></div>
</main>
<script type="module" src="browser/console.js"></script>
</body>
</html>
`;

/** The compiled browser modules, beside this file once built. */
const BROWSER_DIR = new URL('./browser/', import.meta.url);
const BROWSER_FILE = /^[a-z][a-z-]*\.js$/;
const browserFiles = new Map<string, Promise<string | undefined>>();

/** A browser module of the page by file name, or undefined when there is none of that name. */
export function browserModule(name: string): Promise<string | undefined> {
  if (!BROWSER_FILE.test(name)) return Promise.resolve(undefined);
  let file = browserFiles.get(name);
  if (file === undefined) {
    file = readFile(new URL(name, BROWSER_DIR), 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      browserFiles.delete(name); // an unexpected failure is tried again
      throw err;
    });
    browserFiles.set(name, file);
  }
  return file;
}
