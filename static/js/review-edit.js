/* Geometry review on the job page (issue 14): every action has a key, and every
   action is one call to the review API, which answers with the corrected page in
   the shape every edit answers (docs/review.md, "What an edit answers"): the page
   as GET …/pages/{n} shows it, plus `correction` and `line`. It is drawn as it
   comes. Other tabs redraw through the job's ws "corrected" event (hook in job-live.js).

   Keys (on a selected line, j/k or click to select; nothing while typing):
     n        draw a new line box: drag on the page; the worker reads it
     Shift+←↑→↓  move the line's box 2 px (re-read)   Alt+←→↑↓ resize its right/bottom edge
     s        split the line at the pointer (or its middle)
     m        merge the line with the next one in reading order
     Delete/x delete the line
     t        change the line's region type        [ / ]  move its region earlier/later in reading order
     a        accept: go to the next line           u or Ctrl+Z  undo this tab's last change
*/
"use strict";

(() => {
  const job = window.OCRJob;
  if (!job) return;
  const { cfg, state, el } = job;
  const undoStack = []; // correction ids made in this tab, newest last
  let drawing = null; // {start: [x, y], rect: SVGRectElement} while drawing a box
  let pointer = null; // last pointer position in page pixels

  // The engine's character error rate against this job's corrections (GET /jobs/{id}/cer), in the header.
  const cerEl = document.createElement("span");
  cerEl.className = "muted";
  cerEl.dataset.role = "cer";
  (el.progress || el.status).after(cerEl);
  async function showCer() {
    const response = await OCR.request("GET", cfg.links.cer);
    if (!response.ok || response.body.cer === null || !response.body.corrected_lines) { cerEl.textContent = ""; return; }
    cerEl.textContent = ` · engine CER vs corrections ${(response.body.cer * 100).toFixed(2)} %`
      + ` (${response.body.corrected_lines} corrected lines)`;
  }
  showCer();

  const selectedLine = () => (state.selected >= 0 && state.data ? state.data.normalized.lines[state.selected] : null);

  function toPage(event) {
    const matrix = el.overlay.getScreenCTM();
    if (!matrix) return null;
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
    const page = state.data.normalized;
    return [Math.max(0, Math.min(page.width, point.x)), Math.max(0, Math.min(page.height, point.y))];
  }

  // The page's links name every edit; a template is filled with the line or region id.
  const link = (name, ids) => OCR.expand(state.data.links[name], ids || {});

  async function send(method, url, body, message) {
    const response = await OCR.request(method, url, body);
    if (!response.ok) {
      job.toast(response.body && response.body.detail ? response.body.detail : "The change was not saved.", true);
      return null;
    }
    const answer = response.body;
    if (answer.correction && answer.correction.id !== null) undoStack.push(answer.correction.id);
    job.toast(message(answer));
    show(answer);
    return answer;
  }

  function show(answer) {
    showCer();
    if (answer.page_number !== state.current) return; // the reviewer moved to another page meanwhile
    // Whichever draws the page last (this answer or the socket's load), it selects the edited line.
    if (answer.line) state.selectOnDraw = answer.line.id;
    job.showPage(answer.page_number, answer);
  }

  const boxPolygon = ([x0, y0, x1, y1]) => [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];

  function moveBox(line, dx, dy, dw, dh) {
    const [x0, y0, x1, y1] = line.bbox;
    const polygon = boxPolygon([x0 + dx, y0 + dy, x1 + dx + dw, y1 + dy + dh]);
    return send("PATCH", link("line", { line_id: line.id }), { polygon }, (b) => `Box moved; read “${b.line.text}”.`);
  }

  const actions = {
    n: () => { el.overlay.classList.add("drawing"); job.toast("Drag a box around the line to add."); drawing = {}; },
    s: (line) => {
      const at = pointer && pointer[0] > line.bbox[0] && pointer[0] < line.bbox[2] ? pointer[0]
        : (line.bbox[0] + line.bbox[2]) / 2;
      return send("POST", link("line_split", { line_id: line.id }), { at }, () => "Line split.");
    },
    m: (line) => {
      const order = state.readingOrder;
      const next = order[order.indexOf(state.selected) + 1];
      if (next === undefined) { job.toast("No next line to merge with.", true); return null; }
      const ids = [line.id, state.data.normalized.lines[next].id];
      return send("POST", link("lines_merge"), { line_ids: ids }, () => "Lines merged.");
    },
    x: (line) => send("DELETE", link("line", { line_id: line.id }), undefined, () => "Line deleted."),
    t: (line) => {
      const type = window.prompt(`Region type (${cfg.regionTypes.join(", ")})`);
      if (!type) return null;
      return send("PATCH", link("region", { region_id: line.region_id }), { type: type.trim() },
        () => `Region is now ${type.trim()}.`);
    },
    "[": (line) => reorder(line, -1),
    "]": (line) => reorder(line, 1),
    a: () => job.stepLine(1),
  };
  actions.Delete = actions.x;

  function reorder(line, delta) {
    const region = state.data.normalized.regions.find((r) => r.id === line.region_id);
    const order = region.order + delta;
    if (order < 1 || order > state.data.normalized.regions.length) return null;
    return send("PATCH", link("region", { region_id: region.id }), { order }, () => `Region moved to ${order}.`);
  }

  async function undo() {
    const id = undoStack.pop();
    if (id === undefined) { job.toast("Nothing to undo in this tab."); return; }
    const response = await OCR.request("POST", OCR.expand(cfg.links.correction_undo, { correction_id: id }));
    job.toast(response.ok ? "Undone." : (response.body && response.body.detail) || "Undo failed.", !response.ok);
    if (response.ok) show(response.body);
    else await job.loadPage(state.current);
  }

  const ARROWS = { ArrowLeft: [-2, 0], ArrowRight: [2, 0], ArrowUp: [0, -2], ArrowDown: [0, 2] };

  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea, summary, [contenteditable]")) return;
    if (!state.data) return;
    let run = null;
    const line = selectedLine();
    if ((event.ctrlKey || event.metaKey) && event.key === "z") run = undo;
    else if (event.ctrlKey || event.metaKey) return;
    else if (line && ARROWS[event.key] && (event.shiftKey || event.altKey)) {
      const [dx, dy] = ARROWS[event.key];
      run = event.shiftKey ? () => moveBox(line, dx, dy, 0, 0) : () => moveBox(line, 0, 0, dx, dy);
    } else if (event.altKey) return;
    else if (event.key === "u") run = undo;
    else if (event.key === "n") run = actions.n;
    else if (actions[event.key] && line) run = () => actions[event.key](line);
    if (!run) return;
    event.preventDefault();
    event.stopImmediatePropagation(); // job.js must not also step pages on Shift/Alt+arrows
    run();
  }, true);

  el.viewport.addEventListener("pointermove", (event) => {
    if (!state.data) return;
    pointer = toPage(event);
    if (drawing && drawing.start && pointer) {
      const [x0, y0] = drawing.start;
      const [x1, y1] = pointer;
      drawing.rect.setAttribute("x", Math.min(x0, x1));
      drawing.rect.setAttribute("y", Math.min(y0, y1));
      drawing.rect.setAttribute("width", Math.abs(x1 - x0));
      drawing.rect.setAttribute("height", Math.abs(y1 - y0));
    }
  });

  // Capture phase: while drawing, the viewport's own drag-to-pan must not start.
  el.viewport.addEventListener("pointerdown", (event) => {
    if (!drawing || !state.data) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    drawing.start = toPage(event);
    drawing.rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    drawing.rect.setAttribute("class", "drawn-box");
    el.overlay.appendChild(drawing.rect);
  }, true);

  el.viewport.addEventListener("pointerup", (event) => {
    if (!drawing || !drawing.start) return;
    event.stopImmediatePropagation();
    const [x0, y0] = drawing.start;
    const [x1, y1] = toPage(event);
    drawing.rect.remove();
    drawing = null;
    el.overlay.classList.remove("drawing");
    const box = [Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1)];
    if (box[2] - box[0] < 3 || box[3] - box[1] < 3) { job.toast("Box too small: nothing added.", true); return; }
    send("POST", link("lines"), { polygon: boxPolygon(box) }, (b) => `Line added; read “${b.line.text}”.`);
  }, true);
})();
