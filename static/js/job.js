/* Job page: page strip, page image with SVG overlays, text panel, corrections,
   live progress over ws/jobs/<id>/.

   Dense pages (800+ lines) stay smooth because the overlay is ONE <svg> built
   from a string in one assignment, the text panel is built in one fragment,
   every pointer/keyboard interaction is delegated to the two containers, and
   a hover touches only the two elements it (un)highlights. Line i is
   page.lines[i] everywhere: polygon data-i, panel item data-i. */
"use strict";

(() => {
  const cfg = JSON.parse(document.getElementById("job-config").textContent);
  const $ = (id) => document.getElementById(id);
  const el = {
    status: document.querySelector(".job-head [data-role=status]"),
    progress: document.querySelector(".job-head [data-role=progress]"),
    error: $("job-error"),
    reviewed: $("reviewed-info"),
    btnCancel: $("btn-cancel"),
    btnRetry: $("btn-retry"),
    btnReviewed: $("btn-reviewed"),
    thumbs: $("thumbs"),
    viewport: $("viewport"),
    stage: $("stage"),
    image: $("page-image"),
    overlay: $("overlay"),
    placeholder: $("placeholder"),
    legend: $("legend"),
    panel: $("text-panel"),
    stats: $("panel-stats"),
    zoom: $("zoom-level"),
    threshold: $("threshold"),
    thresholdValue: $("threshold-value"),
    lowCount: $("low-count"),
    showLines: $("show-lines"),
    showRegions: $("show-regions"),
    showOrder: $("show-order"),
    toast: $("toast"),
  };
  const TYPES = new Set(cfg.regionTypes);
  const LABELS = { page_number: "Page number" };
  const typeLabel = (t) => LABELS[t] || t.charAt(0).toUpperCase() + t.slice(1);

  const state = {
    job: cfg.job,
    pages: new Map(cfg.pages.map((p) => [p.page_number, p])),
    current: null,
    data: null, // page data of the current page (see jobs.web.views.page_data)
    shown: null, // the page whose result (or failure) is on screen
    loadToken: 0,
    zoom: 1,
    polys: [], // SVG polygon per line index
    items: [], // panel <li> per line index
    regionEls: [], // SVG polygon per region index
    readingOrder: [], // line indices in panel order, for ↑/↓
    hover: -1,
    selected: -1,
    editor: null,
    navigated: false, // the user picked a page: don't jump to newly finished ones
    threshold: Number(localStorage.getItem("ocr.threshold")) || 0.8,
  };

  /* ---------- job status, actions, live events ---------- */

  function renderJob() {
    const job = state.job;
    OCR.setStatus(el.status, job.status);
    OCR.setProgress(el.progress, job.pages_done, job.pages_total);
    const active = job.status === "queued" || job.status === "running";
    el.btnCancel.hidden = !active;
    el.btnRetry.hidden = job.status !== "failed";
    el.btnReviewed.hidden = active || state.pages.size === 0 || Boolean(job.reviewed);
    el.error.hidden = !job.error_code;
    if (job.error_code) el.error.querySelector("[data-role=code]").textContent = job.error_code;
  }

  function onEvent(message) {
    state.job = { ...state.job, ...message.job };
    for (const page of message.pages || []) state.pages.set(page.page_number, page);
    if (message.event === "page_done") {
      state.pages.set(message.page_number, {
        page_number: message.page_number, page_status: message.page_status,
        line_count: message.line_count, region_count: message.region_count,
      });
    }
    if (message.event === "queued") {
      // A retry removed the failed pages: forget what we knew about them.
      for (const [n, page] of state.pages) if (page.page_status === "failed") state.pages.delete(n);
    }
    renderJob();
    renderThumbs();
    if (message.event === "failed") showJobError();
    const ready = state.pages.has(state.current);
    // A page on screen as "failed" may have been redone by a retry.
    const redone = message.event === "page_done" && message.page_number === state.current && !state.data;
    if (ready && (state.shown !== state.current || redone)) loadPage(state.current);
    else if (!state.navigated && !ready && state.pages.size) loadPage(firstReadyPage());
    else if (!ready && state.current) showPlaceholder(state.current);
  }

  async function showJobError() {
    const response = await OCR.request("GET", cfg.urls.api);
    if (response.ok && response.body.error) {
      el.error.querySelector("[data-role=detail]").textContent = response.body.error.detail;
    }
  }

  async function act(url, done) {
    const response = await OCR.request("POST", url);
    if (!response.ok) {
      toast(response.body && response.body.detail ? response.body.detail : "The action failed.", true);
      return;
    }
    done(response.body);
  }

  el.btnCancel.addEventListener("click", () => {
    if (!window.confirm("Cancel this job? Pages already read are kept.")) return;
    act(`${cfg.urls.api}/cancel`, (job) => {
      state.job.status = job.status;
      renderJob();
      toast("Job canceled.");
    });
  });
  el.btnRetry.addEventListener("click", () => act(`${cfg.urls.api}/retry`, (job) => {
    state.job.status = job.status;
    renderJob();
    toast("Failed pages queued again.");
  }));
  el.btnReviewed.addEventListener("click", () => act(`${cfg.urls.api}/reviewed`, (job) => {
    state.job.reviewed = true;
    renderJob();
    el.reviewed.hidden = false;
    el.reviewed.querySelector("[data-role=reviewed-by]").textContent =
      `by ${job.reviewed_by || "—"}, ${OCR.formatTime(job.reviewed_at)}`;
    toast("Marked as reviewed.");
  }));

  /* ---------- page strip ---------- */

  function thumbUrl(n) { return `${cfg.urls.api}/pages/${n}/thumbnail`; }

  function renderThumbs() {
    if (!el.thumbs.children.length) {
      const frag = document.createDocumentFragment();
      for (const n of state.job.page_numbers) {
        const li = document.createElement("li");
        li.innerHTML = `<button type="button" class="thumb" data-n="${n}"><span class="thumb-img"></span>` +
          `<span class="thumb-no">${n}</span></button>`;
        frag.append(li);
      }
      el.thumbs.append(frag);
    }
    for (const button of el.thumbs.querySelectorAll(".thumb")) {
      const n = Number(button.dataset.n);
      const page = state.pages.get(n);
      const status = page ? page.page_status : "pending";
      button.dataset.status = status;
      button.setAttribute("aria-label", `Page ${n}${status === "pending" ? " (not processed yet)" : status === "failed" ? " (failed)" : ""}`);
      if (n === state.current) button.setAttribute("aria-current", "page");
      else button.removeAttribute("aria-current");
      const box = button.firstElementChild;
      if (status === "succeeded" && !box.firstElementChild) {
        const img = document.createElement("img");
        img.alt = "";
        img.loading = "lazy";
        img.src = thumbUrl(n);
        box.append(img);
      }
    }
  }

  el.thumbs.addEventListener("click", (event) => {
    const button = event.target.closest(".thumb");
    if (!button) return;
    state.navigated = true;
    loadPage(Number(button.dataset.n));
  });

  function firstReadyPage() {
    return state.job.page_numbers.find((n) => state.pages.has(n)) || state.job.page_numbers[0];
  }

  function stepPage(delta) {
    const numbers = state.job.page_numbers;
    const at = numbers.indexOf(state.current);
    const next = numbers[Math.min(numbers.length - 1, Math.max(0, at + delta))];
    if (next !== undefined && next !== state.current) {
      state.navigated = true;
      loadPage(next);
      const thumb = el.thumbs.querySelector(`.thumb[data-n="${next}"]`);
      if (thumb) thumb.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  }

  /* ---------- loading and drawing a page ---------- */

  function showPlaceholder(n, message) {
    closeEditor(false);
    state.data = null;
    state.shown = state.pages.has(n) ? n : null;
    el.stage.hidden = true;
    el.placeholder.hidden = false;
    const job = state.job;
    el.placeholder.textContent = message || (
      job.status === "queued" ? `Page ${n} is waiting in the queue…` :
      job.status === "running" ? `Page ${n} is being read… it appears here as soon as it is done.` :
      `Page ${n} has no result.`);
    el.panel.innerHTML = '<p class="panel-empty muted">The text of the page appears here once it is read.</p>';
    el.legend.textContent = "";
    el.stats.textContent = "";
  }

  async function loadPage(n) {
    if (n === undefined || n === null) return;
    state.current = n;
    const url = new URL(location.href);
    url.searchParams.set("page", n);
    history.replaceState(null, "", url);
    renderThumbs();
    if (!state.pages.has(n)) { showPlaceholder(n); return; }
    const token = ++state.loadToken;
    const response = await OCR.request("GET", `${cfg.urls.job}pages/${n}.json`);
    if (token !== state.loadToken) return; // the user moved on meanwhile
    if (!response.ok) { showPlaceholder(n); return; }
    const data = response.body;
    if (!data.page) {
      const error = data.error ? `${data.error.detail} (${data.error.code})` : "no result";
      showPlaceholder(n, `Page ${n} failed: ${error}`);
      return;
    }
    state.data = data;
    state.shown = n;
    drawPage();
  }

  const num = (v) => Math.round(Number(v) * 10) / 10;
  const points = (polygon) => polygon.map((p) => `${num(p[0])},${num(p[1])}`).join(" ");

  function drawPage() {
    closeEditor(false);
    const page = state.data.page;
    state.hover = state.selected = -1;
    el.placeholder.hidden = true;
    el.stage.hidden = false;
    el.image.alt = `Page ${page.page_number}`;
    el.stage.dataset.page = page.page_number; // which page the overlays belong to (tests wait on it)
    el.image.src = state.data.image || "";
    el.overlay.setAttribute("viewBox", `0 0 ${page.width} ${page.height}`);

    // One string, one assignment: the cheapest way to put 1000+ shapes in the DOM.
    const parts = ['<g class="regions">'];
    page.regions.forEach((region, k) => {
      const type = TYPES.has(region.type) ? region.type : "other";
      parts.push(`<polygon class="rg t-${type}" data-r="${k}" points="${points(region.polygon)}"/>`);
    });
    parts.push('</g><g class="lines">');
    page.lines.forEach((line, i) => {
      parts.push(`<polygon class="ln" data-i="${i}" points="${points(line.polygon)}"/>`);
    });
    parts.push('</g><g class="order"></g>');
    el.overlay.innerHTML = parts.join("");
    state.polys = Array.from(el.overlay.querySelectorAll("polygon.ln"));
    state.regionEls = Array.from(el.overlay.querySelectorAll("polygon.rg"));

    buildPanel(page);
    buildLegend(page);
    applyThreshold();
    page.lines.forEach((line, i) => markCorrected(i));
    if (el.showOrder.checked) drawOrder();
    fitWidth();
    el.viewport.scrollTop = 0;
  }

  function buildPanel(page) {
    const regionIndex = new Map(page.regions.map((r, k) => [r.id, k]));
    const tables = new Map(page.tables.map((t) => [t.region_id, t]));
    const byRegion = new Map();
    page.lines.forEach((line, i) => {
      const key = regionIndex.has(line.region_id) ? line.region_id : "";
      if (!byRegion.has(key)) byRegion.set(key, []);
      byRegion.get(key).push(i);
    });
    const sections = page.regions
      .map((region, k) => ({ region, k }))
      .sort((a, b) => a.region.order - b.region.order);
    if (byRegion.has("")) sections.push({ region: null, k: -1 });

    const frag = document.createDocumentFragment();
    state.items = new Array(page.lines.length);
    state.readingOrder = [];
    for (const { region, k } of sections) {
      const indices = (byRegion.get(region ? region.id : "") || [])
        .sort((a, b) => page.lines[a].order - page.lines[b].order);
      const section = document.createElement("section");
      section.className = "rgn";
      const type = region && TYPES.has(region.type) ? region.type : "other";
      section.classList.add(`t-${type}`);
      if (region) section.dataset.r = k;
      const head = document.createElement("h3");
      head.className = "rgn-head";
      head.innerHTML = '<span class="swatch" aria-hidden="true"></span><span class="rgn-order"></span><span class="rgn-type"></span>';
      head.querySelector(".rgn-order").textContent = region ? region.order : "";
      head.querySelector(".rgn-type").textContent = region ? typeLabel(type) : "Other lines";
      if (region && region.label && region.label !== region.type) head.title = `Layout label: ${region.label}`;
      section.append(head);

      const table = region && tables.get(region.id);
      let holder = section;
      if (table) {
        section.append(renderTable(table));
        const details = document.createElement("details");
        details.className = "table-lines";
        details.innerHTML = `<summary>Lines of this table (${indices.length})</summary>`;
        section.append(details);
        holder = details;
      } else if (!indices.length) {
        const empty = document.createElement("p");
        empty.className = "muted small rgn-empty";
        empty.textContent = "No text in this region.";
        section.append(empty);
      }
      if (indices.length) {
        const ol = document.createElement("ol");
        ol.className = "lines";
        for (const i of indices) {
          const line = page.lines[i];
          const li = document.createElement("li");
          li.className = "ln";
          li.dataset.i = i;
          li.id = `ln-${i}`;
          li.innerHTML = '<span class="no"></span><span class="tx"></span><span class="cf"></span>';
          li.firstChild.textContent = line.order;
          li.children[1].textContent = line.text;
          li.children[2].textContent = line.confidence.toFixed(2);
          ol.append(li);
          state.items[i] = li;
          state.readingOrder.push(i);
        }
        holder.append(ol);
      }
      frag.append(section);
    }
    el.panel.textContent = "";
    el.panel.append(frag);
    el.panel.scrollTop = 0;
    const mean = page.lines.length ? page.lines.reduce((s, l) => s + l.confidence, 0) / page.lines.length : 0;
    el.stats.textContent = `${page.lines.length} lines · ${page.regions.length} regions` +
      (page.lines.length ? ` · mean confidence ${mean.toFixed(2)}` : "");
  }

  /* A table from its cells (never from markup): text goes in with textContent. */
  function renderTable(table) {
    const wrap = document.createElement("div");
    wrap.className = "ocr-table-wrap";
    const element = document.createElement("table");
    element.className = "ocr-table";
    const rows = Array.from({ length: table.n_rows }, () => document.createElement("tr"));
    const cells = [...table.cells].sort((a, b) => a.row - b.row || a.col - b.col);
    for (const cell of cells) {
      const td = document.createElement(cell.row === 0 ? "th" : "td");
      td.textContent = cell.text;
      if (cell.row_span > 1) td.rowSpan = cell.row_span;
      if (cell.col_span > 1) td.colSpan = cell.col_span;
      if (rows[cell.row]) rows[cell.row].append(td);
    }
    element.append(...rows);
    wrap.append(element);
    return wrap;
  }

  function buildLegend(page) {
    const counts = new Map();
    for (const region of page.regions) {
      const type = TYPES.has(region.type) ? region.type : "other";
      counts.set(type, (counts.get(type) || 0) + 1);
    }
    el.legend.textContent = "";
    if (!counts.size) return;
    const title = document.createElement("span");
    title.className = "legend-title";
    title.textContent = "Regions:";
    el.legend.append(title);
    for (const type of cfg.regionTypes.filter((t) => counts.has(t))) {
      const label = document.createElement("label");
      label.className = `legend-item t-${type}`;
      label.innerHTML = `<input type="checkbox" checked data-type="${type}"><span class="swatch" aria-hidden="true"></span>`;
      label.append(`${typeLabel(type)} (${counts.get(type)})`);
      el.legend.append(label);
    }
  }

  el.legend.addEventListener("change", (event) => {
    const type = event.target.dataset.type;
    if (!type) return;
    el.overlay.querySelectorAll(`.rg.t-${type}`).forEach((shape) => {
      shape.style.display = event.target.checked ? "" : "none";
    });
  });

  /* ---------- low confidence, corrections, reading order ---------- */

  function applyThreshold() {
    const t = state.threshold;
    el.threshold.value = t;
    el.thresholdValue.textContent = t.toFixed(2);
    if (!state.data) return;
    let low = 0;
    state.data.page.lines.forEach((line, i) => {
      const isLow = line.confidence < t;
      low += isLow;
      state.polys[i].classList.toggle("low", isLow);
      state.items[i].classList.toggle("low", isLow);
    });
    el.lowCount.textContent = `${low} line${low === 1 ? "" : "s"} below`;
    el.lowCount.classList.toggle("is-zero", low === 0);
  }

  el.threshold.addEventListener("input", () => {
    state.threshold = Number(el.threshold.value);
    localStorage.setItem("ocr.threshold", state.threshold);
    applyThreshold();
  });

  function markCorrected(i) {
    const line = state.data.page.lines[i];
    const corrected = line.original_text !== null && line.original_text !== undefined;
    const li = state.items[i];
    state.polys[i].classList.toggle("fix", corrected);
    li.classList.toggle("fix", corrected);
    li.children[1].textContent = line.text;
    const who = state.data.corrections[line.id];
    li.title = corrected
      ? `Corrected${who && who.by ? ` by ${who.by}` : ""}. The engine read: “${line.original_text}” (confidence ${line.confidence.toFixed(2)})`
      : `Confidence ${line.confidence.toFixed(2)}`;
  }

  function drawOrder() {
    const page = state.data.page;
    const size = Math.max(page.width, page.height);
    const r = Math.max(9, size * 0.0075);
    const parts = [];
    page.regions.forEach((region) => {
      const [x, y] = region.bbox;
      parts.push(`<g class="ord-r"><circle cx="${num(x)}" cy="${num(y)}" r="${num(r)}"/>` +
        `<text x="${num(x)}" y="${num(y)}" font-size="${num(r * 1.15)}">${Number(region.order)}</text></g>`);
    });
    page.lines.forEach((line) => {
      const [x0, y0, , y1] = line.bbox;
      const h = Math.max(6, (y1 - y0) * 0.62);
      parts.push(`<text class="ord-l" x="${num(x0 - h * 0.3)}" y="${num((y0 + y1) / 2)}" font-size="${num(h)}">${Number(line.order)}</text>`);
    });
    el.overlay.querySelector("g.order").innerHTML = parts.join("");
  }

  el.showOrder.addEventListener("change", () => {
    el.overlay.classList.toggle("show-order", el.showOrder.checked);
    if (el.showOrder.checked && state.data) drawOrder();
  });
  el.showLines.addEventListener("change", () => el.overlay.classList.toggle("no-lines", !el.showLines.checked));
  el.showRegions.addEventListener("change", () => el.overlay.classList.toggle("no-regions", !el.showRegions.checked));

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
    const box = state.data.page.lines[i].bbox;
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
    if (li && !event.target.closest("input")) editInPanel(Number(li.dataset.i));
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
    const page = state.data.page;
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
    if (state.editor) positionEditor();
  }

  const MARGIN = 32;
  function fitWidth() {
    if (state.data) setZoom((el.viewport.clientWidth - MARGIN) / state.data.page.width);
  }
  function fitPage() {
    if (!state.data) return;
    const page = state.data.page;
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
    if (i >= 0) editOnImage(i);
  });

  /* ---------- corrections ---------- */

  function makeEditor(i, className) {
    closeEditor(false);
    const input = document.createElement("input");
    input.type = "text";
    input.className = className;
    input.value = state.data.page.lines[i].text;
    input.setAttribute("aria-label", `Text of line ${state.data.page.lines[i].order}`);
    input.spellcheck = true;
    state.editor = { i, input, page: state.current };
    input.addEventListener("keydown", (event) => {
      event.stopPropagation();
      if (event.key === "Enter") { event.preventDefault(); closeEditor(true); }
      if (event.key === "Escape") { event.preventDefault(); closeEditor(false); }
    });
    input.addEventListener("blur", () => { if (state.editor && state.editor.input === input) closeEditor(true); });
    return input;
  }

  function editInPanel(i) {
    setSelected(i, "panel");
    const input = makeEditor(i, "line-edit in-panel");
    const text = state.items[i].children[1];
    text.hidden = true;
    text.after(input);
    input.focus();
    input.select();
  }

  function editOnImage(i) {
    setSelected(i, "image");
    const input = makeEditor(i, "line-edit on-image");
    el.stage.append(input);
    positionEditor();
    input.focus();
    input.select();
  }

  function positionEditor() {
    const { i, input } = state.editor;
    if (!input.classList.contains("on-image")) return;
    const [x0, y0, x1, y1] = state.data.page.lines[i].bbox;
    const z = state.zoom;
    const height = Math.max(28, (y1 - y0) * z + 10);
    input.style.left = `${x0 * z - 5}px`;
    input.style.top = `${y0 * z - 5}px`;
    input.style.width = `${Math.max(260, (x1 - x0) * z + 10)}px`;
    input.style.height = `${height}px`;
    input.style.fontSize = `${Math.min(22, Math.max(13, height * 0.55))}px`;
  }

  async function closeEditor(save) {
    const editor = state.editor;
    if (!editor) return;
    state.editor = null;
    const { i, input } = editor;
    const line = state.data && editor.page === state.current ? state.data.page.lines[i] : null;
    const text = input.value;
    input.remove();
    if (state.items[i] && line) state.items[i].children[1].hidden = false;
    if (!save || !line || text === line.text) return;
    const url = `${cfg.urls.api}/pages/${editor.page}/lines/${encodeURIComponent(line.id)}`;
    const response = await OCR.request("PATCH", url, { text });
    if (!response.ok) {
      toast(response.body && response.body.detail ? response.body.detail : "The correction was not saved.", true);
      return;
    }
    if (editor.page !== state.current) return;
    line.text = response.body.text;
    line.original_text = response.body.original_text;
    state.data.corrections[line.id] = { by: response.body.corrected_by, at: response.body.corrected_at };
    markCorrected(i);
    toast(line.original_text === null ? "Restored the engine's text." : "Correction saved.");
  }

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
      ArrowLeft: () => stepPage(-1), PageUp: () => stepPage(-1),
      ArrowRight: () => stepPage(1), PageDown: () => stepPage(1),
      ArrowUp: () => stepLine(-1), k: () => stepLine(-1),
      ArrowDown: () => stepLine(1), j: () => stepLine(1),
      Enter: () => { if (state.selected >= 0) editInPanel(state.selected); },
      F2: () => { if (state.selected >= 0) editInPanel(state.selected); },
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

  /* ---------- misc ---------- */

  let toastTimer = null;
  function toast(message, isError) {
    el.toast.textContent = message;
    el.toast.classList.toggle("is-error", Boolean(isError));
    el.toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.toast.hidden = true; }, isError ? 6000 : 2500);
  }

  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (state.data) fitWidth(); }, 150);
  });

  // Start: the page in ?page=, else the first finished one; then follow the job live.
  renderJob();
  renderThumbs();
  const requested = Number(new URLSearchParams(location.search).get("page"));
  if (requested && state.job.page_numbers.includes(requested)) state.navigated = true;
  loadPage(state.navigated ? requested : firstReadyPage());
  OCR.socket(cfg.urls.ws, { onMessage: onEvent });
})();
