/* Shared helpers for the review UI: CSRF-aware JSON requests, a reconnecting
   WebSocket, and the status/progress widgets rendered by jobs/_status.html and
   jobs/_progress.html. Plain browser JavaScript, no build step. */
"use strict";

const OCR = (() => {
  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  /* fetch() with the session cookie and CSRF header; resolves to {ok, status, body}. */
  async function request(method, url, body) {
    const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (method !== "GET") init.headers["X-CSRFToken"] = csrfToken();
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(url, init);
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    return { ok: response.ok, status: response.status, body: data };
  }

  /* Fills an RFC 6570 level-1 URL template from a response's links: "…/lines/{line_id}". */
  function expand(template, values) {
    return template.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(values[name]));
  }

  /* A WebSocket that reconnects with backoff until stop() is called or keepOpen() says no. A close by the
     server with a 4xxx code (jobs/consumers.py: token replaced, job deleted) is final: no reconnect. */
  function socket(path, { onMessage, onState, keepOpen = () => true }) {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    let ws = null;
    let delay = 1000;
    let stopped = false;
    function open() {
      ws = new WebSocket(url);
      ws.onopen = () => { delay = 1000; onState && onState("open"); };
      ws.onmessage = (event) => onMessage(JSON.parse(event.data));
      ws.onclose = (event) => {
        onState && onState("closed");
        if (stopped || event.code >= 4000 || !keepOpen()) return;
        setTimeout(open, delay);
        delay = Math.min(delay * 2, 30000);
      };
    }
    open();
    return { stop() { stopped = true; if (ws) ws.close(); } };
  }

  function setStatus(badge, status) {
    if (!badge) return;
    badge.className = `badge status-${status}`;
    badge.textContent = status.charAt(0).toUpperCase() + status.slice(1);
  }

  function setProgress(root, done, total) {
    if (!root) return;
    const bar = root.querySelector('[role="progressbar"]');
    bar.setAttribute("aria-valuenow", done);
    bar.setAttribute("aria-valuemax", total);
    bar.firstElementChild.style.width = `${total ? Math.round((100 * done) / total) : 0}%`;
    root.querySelector('[data-role="progress-text"]').textContent = `${done} / ${total}`;
  }

  function formatTime(iso) {
    if (!iso) return "";
    const d = new Date(iso);
    const pad = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }

  // Forms that ask before a destructive action (e.g. regenerating the API token).
  document.addEventListener("submit", (event) => {
    const message = event.target.dataset && event.target.dataset.confirm;
    if (message && !window.confirm(message)) event.preventDefault();
  });
  // Copy buttons: data-copy="<selector of the input>".
  document.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-copy]");
    if (!button) return;
    const input = document.querySelector(button.dataset.copy);
    input.select();
    try { await navigator.clipboard.writeText(input.value); } catch (e) { document.execCommand("copy"); }
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  });

  return { request, expand, socket, setStatus, setProgress, formatTime };
})();
