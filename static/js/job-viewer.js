/* Job page: hover and selection both ways (image <-> panel), zoom and pan, keys. */
"use strict";

(() => {
  const ui = window.OCRJob;
  const { state, el } = ui;

  /* ---------- hover and selection, both ways ---------- */

  function isVisibleIn(child, container) {
    const c = container.getBoundingClientRect();
    const r = child.getBoundingClientRect();
    return r.top >= c.top && r.bottom <= c.bottom;
  }

  function setHover(i, from) {
    if (i === state.hover) return;
    if (state.hover >= 0 && state.polys[state.hover]) {
      state.polys[state.hover].classList.remove("hov");
      state.items[state.hover].classList.remove("hov");
    }
    state.hover = i;
    if (i < 0 || !state.polys[i]) return;
    state.polys[i].classList.add("hov");
    state.items[i].classList.add("hov");
    if (from === "image") revealInPanel(i);
  }

  function revealInPanel(i) {
    const li = state.items[i];
    const details = li.closest("details");
    if (details && !details.open) details.open = true;
    if (!isVisibleIn(li, el.panel)) li.scrollIntoView({ block: "nearest" });
  }

  function revealOnImage(i) {
    const box = state.data.normalized.lines[i].bbox;
    const z = state.zoom;
    const vp = el.viewport;
    const offsetX = el.stage.offsetLeft;
    const offsetY = el.stage.offsetTop;
    const x0 = box[0] * z + offsetX;
    const y0 = box[1] * z + offsetY;
    const x1 = box[2] * z + offsetX;
    const y1 = box[3] * z + offsetY;
    if (y0 < vp.scrollTop || y1 > vp.scrollTop + vp.clientHeight) vp.scrollTop = (y0 + y1) / 2 - vp.clientHeight / 2;
    if (x0 < vp.scrollLeft || x1 > vp.scrollLeft + vp.clientWidth) vp.scrollLeft = x0 - 24;
  }

  function setSelected(i, from) {
    if (state.selected >= 0 && state.polys[state.selected]) {
      state.polys[state.selected].classList.remove("sel");
      state.items[state.selected].classList.remove("sel");
      state.items[state.selected].removeAttribute("aria-selected");
    }
    state.selected = i;
    if (i < 0 || !state.polys[i]) return;
    state.polys[i].classList.add("sel");
    state.items[i].classList.add("sel");
    state.items[i].setAttribute("aria-selected", "true");
    if (from !== "panel") revealInPanel(i);
    if (from !== "image") revealOnImage(i);
  }

  function lineIndexOf(target) {
    const holder = target.closest ? target.closest("[data-i]") : null;
    return holder ? Number(holder.dataset.i) : -1;
  }

  el.overlay.addEventListener("pointerover", (event) => setHover(lineIndexOf(event.target), "image"));
  el.overlay.addEventListener("pointerleave", () => setHover(-1));
  el.panel.addEventListener("pointerover", (event) => {
    const li = event.target.closest("li.ln");
    setHover(li ? Number(li.dataset.i) : -1, "panel");
    const section = event.target.closest(".rgn");
    highlightRegion(section && section.dataset.r !== undefined && !li ? Number(section.dataset.r) : -1);
  });
  el.panel.addEventListener("pointerleave", () => { setHover(-1); highlightRegion(-1); });
  el.panel.addEventListener("click", (event) => {
    const li = event.target.closest("li.ln");
    if (li && !event.target.closest("input")) setSelected(Number(li.dataset.i), "panel");
  });
  el.panel.addEventListener("dblclick", (event) => {
    const li = event.target.closest("li.ln");
    if (li && !event.target.closest("input")) ui.editInPanel(Number(li.dataset.i));
  });

  let regionHover = -1;
  function highlightRegion(k) {
    if (k === regionHover) return;
    if (regionHover >= 0 && state.regionEls[regionHover]) state.regionEls[regionHover].classList.remove("hov");
    regionHover = k;
    if (k >= 0 && state.regionEls[k]) state.regionEls[k].classList.add("hov");
  }

  /* ---------- zoom and pan ---------- */

  function setZoom(z, anchor) {
    if (!state.data) return;
    const page = state.data.normalized;
    const vp = el.viewport;
    z = Math.min(8, Math.max(0.05, z));
    const ax = anchor ? anchor.x : vp.clientWidth / 2;
    const ay = anchor ? anchor.y : vp.clientHeight / 2;
    const px = (vp.scrollLeft + ax - el.stage.offsetLeft) / state.zoom;
    const py = (vp.scrollTop + ay - el.stage.offsetTop) / state.zoom;
    state.zoom = z;
    el.stage.style.width = `${page.width * z}px`;
    el.stage.style.height = `${page.height * z}px`;
    vp.scrollLeft = px * z + el.stage.offsetLeft - ax;
    vp.scrollTop = py * z + el.stage.offsetTop - ay;
    el.zoom.textContent = `${Math.round(z * 100)}%`;
    if (state.editor) ui.positionEditor();
  }

  const MARGIN = 32;
  function fitWidth() {
    if (state.data) setZoom((el.viewport.clientWidth - MARGIN) / state.data.normalized.width);
  }
  function fitPage() {
    if (!state.data) return;
    const page = state.data.normalized;
    setZoom(Math.min((el.viewport.clientWidth - MARGIN) / page.width, (el.viewport.clientHeight - MARGIN) / page.height));
  }

  document.querySelector(".toolbar").addEventListener("click", (event) => {
    const action = event.target.closest("[data-action]");
    if (!action) return;
    ({
      "zoom-in": () => setZoom(state.zoom * 1.25),
      "zoom-out": () => setZoom(state.zoom / 1.25),
      "fit-width": fitWidth,
      "fit-page": fitPage,
    })[action.dataset.action]();
  });

  el.viewport.addEventListener("wheel", (event) => {
    if (!(event.ctrlKey || event.metaKey) || !state.data) return;
    event.preventDefault();
    const rect = el.viewport.getBoundingClientRect();
    setZoom(state.zoom * Math.exp(-event.deltaY * 0.0015), { x: event.clientX - rect.left, y: event.clientY - rect.top });
  }, { passive: false });

  // Drag to pan; a press without movement is a click (selects a line).
  let drag = null;
  el.viewport.addEventListener("pointerdown", (event) => {
    if (event.button !== 0 || event.target.closest(".line-edit")) return;
    drag = { x: event.clientX, y: event.clientY, left: el.viewport.scrollLeft, top: el.viewport.scrollTop, moved: false };
  });
  el.viewport.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    if (!drag.moved) {
      drag.moved = true;
      el.viewport.setPointerCapture(event.pointerId);
      el.viewport.classList.add("panning");
    }
    el.viewport.scrollLeft = drag.left - dx;
    el.viewport.scrollTop = drag.top - dy;
  });
  const endDrag = (event) => {
    if (!drag) return;
    const wasClick = !drag.moved;
    drag = null;
    el.viewport.classList.remove("panning");
    if (wasClick && event.type === "pointerup") {
      const i = lineIndexOf(event.target);
      if (i >= 0) setSelected(i, "image");
    }
  };
  el.viewport.addEventListener("pointerup", endDrag);
  el.viewport.addEventListener("pointercancel", endDrag);
  el.overlay.addEventListener("dblclick", (event) => {
    const i = lineIndexOf(event.target);
    if (i >= 0) ui.editOnImage(i);
  });

  /* ---------- keyboard ---------- */

  function stepLine(delta) {
    const order = state.readingOrder;
    if (!order.length) return;
    const at = order.indexOf(state.selected);
    const next = at < 0 ? (delta > 0 ? 0 : order.length - 1) : Math.min(order.length - 1, Math.max(0, at + delta));
    setSelected(order[next], "keyboard");
  }

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input, select, textarea, summary, [contenteditable]")) return;
    const keys = {
      ArrowLeft: () => ui.stepPage(-1), PageUp: () => ui.stepPage(-1),
      ArrowRight: () => ui.stepPage(1), PageDown: () => ui.stepPage(1),
      ArrowUp: () => stepLine(-1), k: () => stepLine(-1),
      ArrowDown: () => stepLine(1), j: () => stepLine(1),
      Enter: () => { if (state.selected >= 0) ui.editInPanel(state.selected); },
      F2: () => { if (state.selected >= 0) ui.editInPanel(state.selected); },
      Escape: () => setSelected(-1),
      "+": () => setZoom(state.zoom * 1.25), "=": () => setZoom(state.zoom * 1.25),
      "-": () => setZoom(state.zoom / 1.25),
      0: fitPage, w: fitWidth,
      o: () => { el.showOrder.checked = !el.showOrder.checked; el.showOrder.dispatchEvent(new Event("change")); },
    };
    const handler = keys[event.key];
    if (!handler) return;
    if (event.key === "Enter" && event.target.closest("button, a")) return;
    event.preventDefault();
    handler();
  });

  Object.assign(ui, { setSelected, setZoom, fitWidth, fitPage, stepLine, revealOnImage });
})();
