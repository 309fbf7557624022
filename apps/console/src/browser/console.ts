import { render } from './render.js';
import type { PageSnapshot } from './wire.js';

/**
 * The console page's behaviour. Live updates come by fetch() streaming of GET api/events with the
 * Authorization header (EventSource cannot send headers, and a token in a URL ends up in logs);
 * when the stream fails, the page polls GET api/quotas and tries the stream again.
 */

const TOKEN_KEY = 'karmada-quota-console-token';
const POLL_MS = 5000;
const STREAM_RETRY_MS = 15000;

function byId<T extends HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node as T;
}

const page = {
  who: byId('who'),
  live: byId('live'),
  message: byId('message'),
  quotas: byId('quotas'),
  login: byId<HTMLFormElement>('login'),
  token: byId<HTMLInputElement>('token'),
  logout: byId<HTMLButtonElement>('logout'),
};

const state: {
  token: string | null;
  stream: AbortController | null;
  poll: number | undefined;
  retry: number | undefined;
} = { token: sessionStorage.getItem(TOKEN_KEY), stream: null, poll: undefined, retry: undefined };

function showMessage(text: string, kind: 'info' | 'error' = 'info'): void {
  page.message.hidden = !text;
  page.message.textContent = text;
  page.message.setAttribute('data-kind', kind);
}

function setMode(mode: 'live' | 'polling' | 'off', detail = ''): void {
  page.live.setAttribute('data-mode', mode);
  page.live.textContent = mode === 'off' ? 'offline' : mode;
  page.live.title = detail;
}

function show(snapshot: PageSnapshot): void {
  showMessage('');
  render(snapshot, page.who, page.quotas);
}

const headers = (): HeadersInit => ({ Authorization: `Bearer ${state.token}`, Accept: 'application/json' });

async function problemOf(response: Response): Promise<string> {
  try {
    return ((await response.json()) as { message: string }).message;
  } catch {
    return `HTTP ${response.status}`;
  }
}

async function load(): Promise<void> {
  let response: Response;
  try {
    response = await fetch('api/quotas', { headers: headers() });
  } catch (err) {
    return showMessage(`The console cannot be reached: ${(err as Error).message}`, 'error');
  }
  if (response.status === 401) return logout(await problemOf(response));
  if (!response.ok) return showMessage(await problemOf(response), 'error');
  show((await response.json()) as PageSnapshot);
}

/** One server-sent event (see sseFrame in snapshot.ts). */
function handleFrame(frame: string): void {
  let event = 'message';
  const data: string[] = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  const text = data.join('\n');
  if (event === 'quotas') show(JSON.parse(text) as PageSnapshot);
  else if (event === 'unauthorized') logout(text);
  else if (event === 'unavailable') showMessage(text, 'error');
}

async function readEvents(body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return;
    buffer += decoder.decode(chunk.value, { stream: true });
    const frames = buffer.split('\n\n');
    buffer = frames.pop() ?? '';
    frames.forEach(handleFrame);
  }
}

async function openStream(): Promise<void> {
  const controller = new AbortController();
  state.stream = controller;
  try {
    const response = await fetch('api/events', { headers: headers(), signal: controller.signal });
    if (response.status === 401) return logout(await problemOf(response));
    if (!response.ok || !response.body) throw new Error(`live updates answered HTTP ${response.status}`);
    setMode('live');
    stopPolling();
    await readEvents(response.body);
    throw new Error('the live stream ended');
  } catch (err) {
    if (controller.signal.aborted) return;
    setMode('polling', (err as Error).message);
    startPolling();
    clearTimeout(state.retry);
    state.retry = window.setTimeout(() => void openStream(), STREAM_RETRY_MS);
  }
}

function startPolling(): void {
  state.poll ??= window.setInterval(() => void load(), POLL_MS);
}

function stopPolling(): void {
  clearInterval(state.poll);
  state.poll = undefined;
}

function stop(): void {
  state.stream?.abort();
  state.stream = null;
  stopPolling();
  clearTimeout(state.retry);
  setMode('off');
}

async function start(): Promise<void> {
  page.login.hidden = true;
  page.logout.hidden = false;
  await load();
  if (state.token) void openStream();
}

function logout(problem: string): void {
  stop();
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  page.who.textContent = '';
  page.quotas.replaceChildren();
  page.login.hidden = false;
  page.logout.hidden = true;
  showMessage(problem, 'error');
}

page.login.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = page.token.value.trim();
  page.token.value = '';
  if (!token) return;
  state.token = token;
  sessionStorage.setItem(TOKEN_KEY, token);
  showMessage('');
  void start();
});
page.logout.addEventListener('click', () => logout(''));

if (state.token) void start();
else logout('');
