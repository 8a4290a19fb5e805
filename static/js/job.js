/* Job page, core: the page's config, elements and state, and loading and drawing
   a page (its image and SVG overlays). The other job-*.js files add the text
   panel, the viewer (selection, zoom, keys), text corrections and the live job
   through the shared window.OCRJob; each exports its functions there, and calls
   across files go through it, so the load order only matters for start-up.

   Dense pages (800+ lines) stay smooth because the overlay is ONE <svg> built
   from a string in one assignment, the text panel is built in one fragment,
   every pointer/keyboard interaction is delegated to the two containers, and
   a hover touches only the two elements it (un)highlights. Line i is
   page.lines[i] everywhere: polygon data-i, panel item data-i.

   Every API URL comes from a response: cfg.links (the job's links) and the
   page's own links; templates like {page_number} are filled by OCR.expand. */
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
    data: null, // the current page as GET /jobs/{id}/pages/{n} returns it (PageSerializer), or as an edit answers it
    shown: null, // the page whose result (or failure) is on screen
    loadToken: 0,
    zoom: 1,
    polys: [], // SVG polygon per line index
    items: [], // panel <li> per line index
    regionEls: [], // SVG polygon per region index
    readingOrder: [], // line indices in panel order, for ↑/↓
    hover: -1,
    selected: -1,
    selectOnDraw: null, // line id to select when the page is next drawn (an edit's result, or ?line=)
    editor: null,
    navigated: false, // the user picked a page: don't jump to newly finished ones
    threshold: Number(localStorage.getItem("ocr.threshold")) || cfg.lowConfidence,
  };
  const ui = (window.OCRJob = { cfg, state, el, TYPES, typeLabel });

  /* ---------- loading and drawing a page ---------- */

  function showPlaceholder(n, message) {
    ui.closeEditor(false);
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
    ui.renderThumbs();
    if (!state.pages.has(n)) { showPlaceholder(n); return; }
    const token = ++state.loadToken;
    const api = new URL(OCR.expand(cfg.links.page, { page_number: n }));
    api.searchParams.set("raw", "false"); // the viewer draws the normalized page only
    const response = await OCR.request("GET", api);
    if (token !== state.loadToken) return; // the user moved on meanwhile
    if (!response.ok) { showPlaceholder(n); return; }
    showPage(n, response.body);
  }

  // Draws page n from its representation: a GET's, or an edit's answer, which is the same page
  // (docs/review.md, "What an edit answers"). An edit's answer leaves loads under way alone: one
  // begun after the edit is as new as the answer or newer (another tab's edit), and one begun
  // before it is followed by the load of the edit's own "corrected" event.
  function showPage(n, data) {
    if (!data.normalized) {
      const error = data.error ? `${data.error.detail} (${data.error.code})` : "no result";
      showPlaceholder(n, `Page ${n} failed: ${error}`);
      return;
    }
    // A redraw of the page on screen (an edit here, or a correction in another tab
    // arriving over the socket) keeps the line the reviewer is working on selected.
    const previous = state.shown === n && state.data ? state.data.normalized.lines[state.selected] : null;
    const keepId = state.selectOnDraw || (previous && previous.id);
    state.selectOnDraw = null;
    state.data = data;
    state.shown = n;
    drawPage();
    const keep = keepId ? data.normalized.lines.findIndex((line) => line.id === keepId) : -1;
    if (keep >= 0) ui.setSelected(keep);
  }

  const num = (v) => Math.round(Number(v) * 10) / 10;
  const points = (polygon) => polygon.map((p) => `${num(p[0])},${num(p[1])}`).join(" ");

  function drawPage() {
    ui.closeEditor(false);
    const page = state.data.normalized;
    state.hover = state.selected = -1;
    el.placeholder.hidden = true;
    el.stage.hidden = false;
    el.image.alt = `Page ${page.page_number}`;
    el.stage.dataset.page = page.page_number; // which page the overlays belong to (tests wait on it)
    el.image.src = state.data.links.image || "";
    el.overlay.setAttribute("viewBox", `0 0 ${page.width} ${page.height}`);

    // One string, one assignment: the cheapest way to put 1000+ shapes in the DOM.
    const parts = ['<g class="regions">'];
    page.regions.forEach((region, k) => {
      const type = TYPES.has(region.type) ? region.type : "other";
      parts.push(`<polygon class="rg t-${type}" data-r="${k}" points="${points(region.polygon)}"/>`);
    });
    parts.push('</g><g class="lines">');
    page.lines.forEach((line, i) => {
      parts.push(`<polygon class="ln src-${line.source === "pdf" ? "pdf" : "ocr"}" data-i="${i}" points="${points(line.polygon)}"/>`);
    });
    parts.push('</g><g class="order"></g>');
    el.overlay.innerHTML = parts.join("");
    state.polys = Array.from(el.overlay.querySelectorAll("polygon.ln"));
    state.regionEls = Array.from(el.overlay.querySelectorAll("polygon.rg"));

    ui.buildPanel(page);
    ui.buildLegend(page);
    ui.applyThreshold();
    page.lines.forEach((line, i) => ui.markCorrected(i));
    if (ui.markFields) ui.markFields(); // the lines of the field shown (job-fields.js)
    if (el.showOrder.checked) ui.drawOrder();
    ui.fitWidth();
    el.viewport.scrollTop = 0;
  }

  let toastTimer = null;
  function toast(message, isError) {
    el.toast.textContent = message;
    el.toast.classList.toggle("is-error", Boolean(isError));
    el.toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.toast.hidden = true; }, isError ? 6000 : 2500);
  }

  Object.assign(ui, { num, points, toast, showPlaceholder, loadPage, showPage, drawPage });
})();
